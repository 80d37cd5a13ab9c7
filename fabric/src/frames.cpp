// The fabric's frames on the wire (docs/fabric.md "Frames"): RoCEv2 datagrams in IPv4/UDP (the
// IP ECN bits are the frame's; the ICRC masks the TOS byte, so marking keeps it valid), PFC
// frames (IEEE 802.1Qbb: MAC Control, EtherType 0x8808, opcode 0x0101, class-enable vector and
// eight pause times in quanta of 512 bit times) and CNPs (RoCEv2 annex A17.9.3: BTH opcode 0x81
// to the sender's QP, 16 reserved bytes, ICRC).
#include <array>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"
#include "network_impl.hpp"

namespace naa::fabric {

FramePtr make_pfc_frame(std::uint8_t prio, std::uint16_t quanta) {
  auto f = std::make_unique<Frame>();
  f->type = Frame::Type::pfc;
  f->priority = 7;
  f->pfc_classes = static_cast<std::uint16_t>(1U << prio);
  f->pfc_quanta[prio] = quanta;
  return f;
}

FramePtr make_cnp(std::uint32_t src_ip, std::uint16_t src_port, std::uint32_t dst_ip,
                  std::uint32_t dest_qpn) {
  protocol::PacketHeaders h;
  h.bth.opcode = protocol::opcode::kCnp;
  h.bth.dest_qpn = dest_qpn;
  h.bth.becn = true;  // as ConnectX NICs send it
  const std::array<std::uint8_t, 16> reserved{};
  auto f = std::make_unique<Frame>();
  f->datagram.resize(protocol::packet_size(h, reserved.size()));
  const auto n = protocol::encode_packet(h, reserved, f->datagram);
  if (!n) throw std::logic_error("CNP does not encode");
  protocol::write_icrc(protocol::make_roce_headers(src_ip, src_port, dst_ip, f->datagram.size()),
                       f->datagram);
  f->src_ip = src_ip;
  f->dst_ip = dst_ip;
  f->src_port = src_port;
  f->priority = kCnpPriority;
  f->ecn = kEcnNotEct;
  return f;
}

std::uint64_t flow_hash(const Frame& f, std::uint64_t salt) {
  // splitmix64 over the 5-tuple (protocol UDP and destination port 4791 are the same for all).
  std::uint64_t x = salt ^ (std::uint64_t{f.src_ip} << 32 | f.dst_ip);
  x ^= std::uint64_t{f.src_port} * 0x9E3779B97F4A7C15ULL;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

void Network::Impl::capture(int port, const Frame& f) {
  Port& p = ports[static_cast<std::size_t>(port)];
  if (!p.pcap) return;
  const auto ts = static_cast<std::uint64_t>(now / kPsPerNs);
  if (f.type == Frame::Type::pfc) {
    // 01:80:c2:00:00:01, the port's own locally administered MAC, 0x8808, opcode 0x0101.
    std::array<std::uint8_t, 60> b{};
    const std::array<std::uint8_t, 6> dst{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
    std::copy(dst.begin(), dst.end(), b.begin());
    b[6] = 0x02;
    b[7] = 0xFA;
    b[8] = static_cast<std::uint8_t>(p.node >> 8);
    b[9] = static_cast<std::uint8_t>(p.node);
    b[10] = static_cast<std::uint8_t>(port >> 8);
    b[11] = static_cast<std::uint8_t>(port);
    b[12] = 0x88;
    b[13] = 0x08;
    b[14] = 0x01;
    b[15] = 0x01;
    b[16] = static_cast<std::uint8_t>(f.pfc_classes >> 8);
    b[17] = static_cast<std::uint8_t>(f.pfc_classes);
    for (std::size_t i = 0; i < kPriorities; ++i) {
      b[18 + 2 * i] = static_cast<std::uint8_t>(f.pfc_quanta[i] >> 8);
      b[19 + 2 * i] = static_cast<std::uint8_t>(f.pfc_quanta[i]);
    }
    p.pcap->write_frame(ts, b);
    return;
  }
  protocol::Ipv4UdpHeaders h =
      protocol::make_roce_headers(f.src_ip, f.src_port, f.dst_ip, f.datagram.size());
  h.ip.tos = static_cast<std::uint8_t>((f.priority << 5) | f.ecn);  // DSCP CS<prio>, ECN
  h.ip.checksum = protocol::ipv4_header_checksum(h.ip);
  p.pcap->write_roce(ts, h, f.datagram);
}

}  // namespace naa::fabric
