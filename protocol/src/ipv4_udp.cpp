#include "naa/protocol/ipv4_udp.hpp"

#include <cstdio>
#include <cstring>

namespace naa::protocol {

Result<std::size_t> encode_ipv4(const Ipv4Header& h, MutableByteView out) noexcept {
  if (out.size() < kIpv4HeaderSize) return Error::buffer_too_small;
  std::uint8_t* p = out.data();
  p[0] = 0x45;  // version 4, IHL 5
  p[1] = h.tos;
  store_be16(p + 2, h.total_length);
  store_be16(p + 4, h.id);
  store_be16(p + 6, h.flags_fragment);
  p[8] = h.ttl;
  p[9] = h.protocol;
  store_be16(p + 10, h.checksum);
  store_be32(p + 12, h.src);
  store_be32(p + 16, h.dst);
  return kIpv4HeaderSize;
}

Result<Ipv4Header> decode_ipv4(ByteView in) noexcept {
  if (in.size() < kIpv4HeaderSize) return Error::too_short;
  const std::uint8_t* p = in.data();
  if (p[0] != 0x45) return Error::bad_ip_header;
  Ipv4Header h;
  h.tos = p[1];
  h.total_length = load_be16(p + 2);
  h.id = load_be16(p + 4);
  h.flags_fragment = load_be16(p + 6);
  h.ttl = p[8];
  h.protocol = p[9];
  h.checksum = load_be16(p + 10);
  h.src = load_be32(p + 12);
  h.dst = load_be32(p + 16);
  if (h.total_length < kIpv4HeaderSize) return Error::bad_ip_header;
  return h;
}

std::uint16_t ipv4_header_checksum(const Ipv4Header& h) noexcept {
  Ipv4Header copy = h;
  copy.checksum = 0;
  std::array<std::uint8_t, kIpv4HeaderSize> bytes{};
  (void)encode_ipv4(copy, bytes);
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < bytes.size(); i += 2)
    sum += load_be16(&bytes[i]);
  while ((sum >> 16) != 0)
    sum = (sum & 0xFFFFU) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

Result<std::size_t> encode_udp(const UdpHeader& h, MutableByteView out) noexcept {
  if (out.size() < kUdpHeaderSize) return Error::buffer_too_small;
  store_be16(out.data(), h.src_port);
  store_be16(out.data() + 2, h.dst_port);
  store_be16(out.data() + 4, h.length);
  store_be16(out.data() + 6, h.checksum);
  return kUdpHeaderSize;
}

Result<UdpHeader> decode_udp(ByteView in) noexcept {
  if (in.size() < kUdpHeaderSize) return Error::too_short;
  UdpHeader h;
  h.src_port = load_be16(in.data());
  h.dst_port = load_be16(in.data() + 2);
  h.length = load_be16(in.data() + 4);
  h.checksum = load_be16(in.data() + 6);
  if (h.length < kUdpHeaderSize) return Error::bad_udp_header;
  return h;
}

Ipv4UdpHeaders make_roce_headers(std::uint32_t src_ip, std::uint16_t src_port, std::uint32_t dst_ip,
                                 std::size_t roce_length, std::uint16_t ip_id) noexcept {
  Ipv4UdpHeaders h;
  h.ip.total_length = static_cast<std::uint16_t>(kIpv4HeaderSize + kUdpHeaderSize + roce_length);
  h.ip.id = ip_id;
  h.ip.src = src_ip;
  h.ip.dst = dst_ip;
  h.ip.checksum = ipv4_header_checksum(h.ip);
  h.udp.src_port = src_port;
  h.udp.dst_port = kRoceUdpPort;
  h.udp.length = static_cast<std::uint16_t>(kUdpHeaderSize + roce_length);
  return h;
}

MacAddress mac_for_ipv4(std::uint32_t ip) noexcept {
  return {0x02,
          0x00,
          static_cast<std::uint8_t>(ip >> 24),
          static_cast<std::uint8_t>(ip >> 16),
          static_cast<std::uint8_t>(ip >> 8),
          static_cast<std::uint8_t>(ip)};
}

Result<RoceFrame> decode_roce_frame(ByteView frame) noexcept {
  if (frame.size() < kEthernetHeaderSize) return Error::too_short;
  RoceFrame f;
  std::memcpy(f.eth.dst.data(), frame.data(), 6);
  std::memcpy(f.eth.src.data(), frame.data() + 6, 6);
  f.eth.ether_type = load_be16(frame.data() + 12);
  if (f.eth.ether_type != kEtherTypeIpv4) return Error::not_roce;
  const ByteView ip_bytes = frame.subspan(kEthernetHeaderSize);
  auto ip = decode_ipv4(ip_bytes);
  if (!ip) return ip.error();
  if (ip->protocol != kIpProtoUdp) return Error::not_roce;
  if (ip->total_length > ip_bytes.size()) return Error::too_short;
  const ByteView udp_bytes = ip_bytes.subspan(kIpv4HeaderSize, ip->total_length - kIpv4HeaderSize);
  auto udp = decode_udp(udp_bytes);
  if (!udp) return udp.error();
  if (udp->length != udp_bytes.size()) return Error::bad_udp_header;
  if (udp->dst_port != kRoceUdpPort) return Error::not_roce;
  f.headers.ip = *ip;
  f.headers.udp = *udp;
  f.roce = udp_bytes.subspan(kUdpHeaderSize);
  return f;
}

Result<std::size_t> encode_roce_frame(const EthernetHeader& eth, const Ipv4UdpHeaders& headers,
                                      ByteView roce, MutableByteView out) noexcept {
  const std::size_t total = kEthernetHeaderSize + kIpv4HeaderSize + kUdpHeaderSize + roce.size();
  if (out.size() < total) return Error::buffer_too_small;
  std::uint8_t* p = out.data();
  std::memcpy(p, eth.dst.data(), 6);
  std::memcpy(p + 6, eth.src.data(), 6);
  store_be16(p + 12, eth.ether_type);
  (void)encode_ipv4(headers.ip, out.subspan(kEthernetHeaderSize));
  (void)encode_udp(headers.udp, out.subspan(kEthernetHeaderSize + kIpv4HeaderSize));
  if (!roce.empty()) {
    std::memcpy(p + kEthernetHeaderSize + kIpv4HeaderSize + kUdpHeaderSize, roce.data(),
                roce.size());
  }
  return total;
}

std::size_t format_ipv4(std::uint32_t ip, char* buf, std::size_t size) noexcept {
  const int n = std::snprintf(buf, size, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xFFU,
                              (ip >> 8) & 0xFFU, ip & 0xFFU);
  return n < 0 ? 0 : static_cast<std::size_t>(n);
}

}  // namespace naa::protocol
