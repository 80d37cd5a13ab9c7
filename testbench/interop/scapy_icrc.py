#!/usr/bin/python3
"""Independent ICRC oracle: recompute the ICRC of every RoCEv2 frame in a pcap with scapy.

Usage: /usr/bin/python3 scapy_icrc.py FILE.pcap
Prints one line per frame: `<n> ok|bad|not-roce <icrc on the wire> <icrc scapy computes>`.
Exit status 0 when it could read the file (the verdicts are for the caller to judge).
scapy 2.5's scapy.contrib.roce computes the ICRC in BTH.post_build when the field is None.
"""
import sys

from scapy.all import Ether, raw, rdpcap  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    for n, pkt in enumerate(rdpcap(sys.argv[1]), 1):
        frame = raw(pkt)
        parsed = Ether(frame)
        if BTH not in parsed:
            print(n, "not-roce", "-", "-")
            continue
        wire = frame[-4:]
        parsed[BTH].icrc = None  # ask scapy to compute it
        computed = raw(parsed)[-4:]
        print(n, "ok" if wire == computed else "bad", wire.hex(), computed.hex())
    return 0


if __name__ == "__main__":
    sys.exit(main())
