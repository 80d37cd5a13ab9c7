// IPv4 and UDP headers as RoCEv2 uses them (PROTOCOL.md 1), and Ethernet framing for pcaps.
//
// On a UDP socket the kernel adds and strips these headers, but the ICRC covers them (PROTOCOL.md
// 2), so both sides synthesize them: make_roce_headers() builds exactly the headers a
// correctly configured Linux socket sends (TOS 0, TTL 64, DF, ID 0, UDP checksum 0).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/result.hpp"

namespace naa::protocol {

inline constexpr std::uint16_t kRoceUdpPort = 4791;
inline constexpr std::size_t kIpv4HeaderSize = 20;
inline constexpr std::size_t kUdpHeaderSize = 8;
inline constexpr std::size_t kEthernetHeaderSize = 14;
inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint8_t kIpProtoUdp = 17;
inline constexpr std::uint16_t kIpv4FlagDontFragment = 0x4000;

// IPv4 addresses are host-order integers: 192.168.1.10 is 0xC0A8010A.
struct Ipv4Header {
  std::uint8_t tos = 0;
  std::uint16_t total_length = 0;
  std::uint16_t id = 0;
  std::uint16_t flags_fragment = kIpv4FlagDontFragment;  // flags (3) | fragment offset (13)
  std::uint8_t ttl = 64;
  std::uint8_t protocol = kIpProtoUdp;
  std::uint16_t checksum = 0;
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  friend bool operator==(const Ipv4Header&, const Ipv4Header&) = default;
};

struct UdpHeader {
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = kRoceUdpPort;
  std::uint16_t length = 0;
  std::uint16_t checksum = 0;
  friend bool operator==(const UdpHeader&, const UdpHeader&) = default;
};

// The two headers in front of every RoCEv2 datagram: the ICRC's pseudo-header context.
struct Ipv4UdpHeaders {
  Ipv4Header ip;
  UdpHeader udp;
  friend bool operator==(const Ipv4UdpHeaders&, const Ipv4UdpHeaders&) = default;
};

using MacAddress = std::array<std::uint8_t, 6>;

struct EthernetHeader {
  MacAddress dst{};
  MacAddress src{};
  std::uint16_t ether_type = kEtherTypeIpv4;
};

// Writes 20 bytes exactly as given (the checksum field too; see ipv4_header_checksum()).
[[nodiscard]] Result<std::size_t> encode_ipv4(const Ipv4Header& h, MutableByteView out) noexcept;
// Accepts version 4 with IHL 5 only (RoCEv2 peers never send IPv4 options).
[[nodiscard]] Result<Ipv4Header> decode_ipv4(ByteView in) noexcept;
// RFC 1071 checksum of the header with its checksum field taken as zero.
[[nodiscard]] std::uint16_t ipv4_header_checksum(const Ipv4Header& h) noexcept;

[[nodiscard]] Result<std::size_t> encode_udp(const UdpHeader& h, MutableByteView out) noexcept;
[[nodiscard]] Result<UdpHeader> decode_udp(ByteView in) noexcept;

// Headers for a RoCEv2 datagram of `roce_length` bytes (BTH through ICRC), with a valid IPv4
// checksum, as PROTOCOL.md 1 says we emit them.
[[nodiscard]] Ipv4UdpHeaders make_roce_headers(std::uint32_t src_ip, std::uint16_t src_port,
                                               std::uint32_t dst_ip, std::size_t roce_length,
                                               std::uint16_t ip_id = 0) noexcept;

// The UDP source port Linux rxe uses for a QP: 0xC000 + (hash_32(qpn, 14) & 0x3FFF).
[[nodiscard]] constexpr std::uint16_t roce_udp_source_port(std::uint32_t qpn) noexcept {
  const std::uint32_t hash = (qpn * 0x61C88647U) >> 18;
  return static_cast<std::uint16_t>(0xC000U + (hash & 0x3FFFU));
}

// A locally administered MAC derived from an IPv4 address (02:00:a:b:c:d), for synthesized frames.
[[nodiscard]] MacAddress mac_for_ipv4(std::uint32_t ip) noexcept;

// An Ethernet/IPv4/UDP frame carrying a RoCEv2 datagram, decoded without copying.
struct RoceFrame {
  EthernetHeader eth;
  Ipv4UdpHeaders headers;
  ByteView roce;  // BTH through ICRC
};

// Validates Ethernet type, IPv4 header, UDP length and destination port 4791 (Error::not_roce).
// Bytes after the IPv4 total length (Ethernet padding) are ignored.
[[nodiscard]] Result<RoceFrame> decode_roce_frame(ByteView frame) noexcept;

// Encodes Ethernet + headers + roce into out; returns the frame length.
[[nodiscard]] Result<std::size_t> encode_roce_frame(const EthernetHeader& eth,
                                                    const Ipv4UdpHeaders& headers, ByteView roce,
                                                    MutableByteView out) noexcept;

// Formats an IPv4 address as dotted quad into buf (at least 16 bytes); returns the length.
std::size_t format_ipv4(std::uint32_t ip, char* buf, std::size_t size) noexcept;

}  // namespace naa::protocol
