#!/usr/bin/python3
"""Writes a pcap with one known-bad RoCEv2 frame: the control that pcap_decodes.sh's malformed
and expert-error count must see (a filter tshark rejected, or a tshark that failed, once counted
0 bad frames and passed). The frame is Ethernet/IPv4/UDP to port 4791 with a 6-byte payload,
too short for the 12-byte BTH (IBTA vol. 1 9.2), which tshark marks [Malformed Packet].
No scapy needed. Usage: malformed_frame.py OUT.pcap
"""
import struct
import sys


def ipv4_checksum(header):
    total = sum(struct.unpack("!10H", header))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def main():
    payload = bytes([0x04, 0x40, 0xFF, 0xFF, 0x00, 0x00])  # a SEND ONLY BTH cut short
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 64, 17, 0,
                     bytes([127, 0, 0, 2]), bytes([127, 0, 0, 1]))
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:]
    frame = bytes(12) + b"\x08\x00" + ip + udp
    with open(sys.argv[1], "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))  # LINKTYPE_ETHERNET
        f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)


if __name__ == "__main__":
    main()
