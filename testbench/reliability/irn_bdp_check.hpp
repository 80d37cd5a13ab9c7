// The BDP cap in a capture (issue 16; docs/protocol.md 8.4): for each direction between two
// addresses, the highest PSN an IRN requester sent minus the cumulative ACK it had received never
// exceeds the cap. Reads a pcap (the host's or naa-sim's) with the protocol library. A capture
// that shows an ACK the sender had not yet processed can only make the observed distance smaller,
// so a violation found here is a real one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"

namespace naa::testbench {

struct BdpCapReport {
  bool readable = false;
  std::uint64_t irn_data_packets = 0;
  std::uint64_t irn_acks = 0;
  std::uint32_t max_distance = 0;  // highest (PSN sent - cumulative ACK) seen
  std::uint64_t violations = 0;    // packets with distance > cap
};

inline BdpCapReport check_bdp_cap(const std::string& pcap_path, std::uint32_t cap) {
  BdpCapReport r;
  protocol::PcapReader reader;
  if (reader.open(pcap_path)) return r;
  r.readable = true;
  // (sender, receiver) -> cumulative ACK the sender has seen; reset by every CM datagram between
  // the two (a new connection starts a new PSN space).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::optional<std::uint32_t>> cum;
  protocol::PcapRecord rec;
  while (reader.next(rec)) {
    const auto f = protocol::decode_roce_frame(rec.data);
    // A frame corrupted by the fault injector (captured as sent) was dropped by its receiver.
    if (!f || !protocol::verify_icrc(f->headers, f->roce)) continue;
    const auto v = protocol::decode_packet(f->roce);
    if (!v) continue;
    const std::uint32_t src = f->headers.ip.src, dst = f->headers.ip.dst;
    if (v->headers.bth.opcode == protocol::opcode::kUdSendOnly) {
      cum[{src, dst}].reset();
      cum[{dst, src}].reset();
      continue;
    }
    if (!v->info->is_irn()) continue;
    const std::uint32_t psn = v->headers.bth.psn;
    if (v->info->is_response()) {  // an IRN ACK from dst's peer: acknowledges data dst -> src
      ++r.irn_acks;
      auto& c = cum[{dst, src}];
      if (!c || protocol::psn_after(psn, *c)) c = psn;
      continue;
    }
    ++r.irn_data_packets;
    auto& c = cum[{src, dst}];
    if (!c) c = protocol::psn_add(psn, protocol::kMax24);  // the first PSN: una = psn
    const std::uint32_t d = protocol::psn_diff(psn, *c);
    if (d >= 0x800000U) continue;  // a retransmission of an acknowledged PSN
    r.max_distance = std::max(r.max_distance, d);
    if (d > cap) ++r.violations;
  }
  return r;
}

}  // namespace naa::testbench
