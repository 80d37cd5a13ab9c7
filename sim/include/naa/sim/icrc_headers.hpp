// The IPv4/UDP headers of a RoCEv2 datagram as its ICRC sees them (PROTOCOL.md 2): what
// protocol::make_roce_headers builds, without the IPv4 header checksum. The ICRC masks that
// field (with TOS and TTL) to ones, so its value cannot change the CRC, and computing it cost
// ~125 instructions per datagram in TxPipe and RxPipe (issue 31). Headers that are written out
// (captures) or read by an RTL check are still made by make_roce_headers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "naa/protocol/ipv4_udp.hpp"

namespace naa::sim {

[[nodiscard]] inline protocol::Ipv4UdpHeaders icrc_headers(std::uint32_t src_ip,
                                                           std::uint16_t src_port,
                                                           std::uint32_t dst_ip,
                                                           std::size_t roce_length,
                                                           std::uint16_t ip_id = 0) noexcept {
  protocol::Ipv4UdpHeaders h;
  h.ip.total_length = static_cast<std::uint16_t>(protocol::kIpv4HeaderSize +
                                                 protocol::kUdpHeaderSize + roce_length);
  h.ip.id = ip_id;
  h.ip.src = src_ip;
  h.ip.dst = dst_ip;
  h.udp.src_port = src_port;
  h.udp.dst_port = protocol::kRoceUdpPort;
  h.udp.length = static_cast<std::uint16_t>(protocol::kUdpHeaderSize + roce_length);
  return h;
}

}  // namespace naa::sim
