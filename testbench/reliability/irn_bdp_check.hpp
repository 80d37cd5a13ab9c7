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
#include <variant>

#include "naa/protocol/cm.hpp"
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
  // Streams are found from the CM exchange: a REQ names the host's QPN and the NAA's first PSN, the
  // REP (matched by comm ID) the NAA's QPN and the host's first PSN. A stream is keyed by where its
  // data goes (receiver IP, QPN) and holds the cumulative ACK its sender has seen; an ACK is
  // addressed to the sender's QPN. Packets of connections whose CM exchange is not in the capture
  // (or of an old connection, released late by the reorder injector) are not counted.
  using Key = std::pair<std::uint32_t, std::uint32_t>;  // (IP, QPN)
  std::map<Key, std::uint32_t> cum;                     // data destination -> cumulative ACK
  std::map<Key, Key> acks_for;                          // ACK destination -> data destination
  struct Req {
    std::uint32_t host_ip, host_qpn, naa_first_psn;
  };
  std::map<std::uint32_t, Req> reqs;  // by the host's comm ID
  protocol::PcapRecord rec;
  while (reader.next(rec)) {
    const auto f = protocol::decode_roce_frame(rec.data);
    // A frame corrupted by the fault injector (captured as sent) was dropped by its receiver.
    if (!f || !protocol::verify_icrc(f->headers, f->roce)) continue;
    const auto v = protocol::decode_packet(f->roce);
    if (!v) continue;
    const std::uint32_t src = f->headers.ip.src, dst = f->headers.ip.dst;
    if (v->headers.bth.opcode == protocol::opcode::kUdSendOnly) {
      const auto mad = protocol::decode_cm_mad(v->payload);
      if (!mad) continue;
      if (const auto* req = std::get_if<protocol::CmReq>(&mad->body)) {
        reqs[req->local_comm_id] = Req{src, req->local_qpn, req->starting_psn};
      } else if (const auto* rep = std::get_if<protocol::CmRep>(&mad->body)) {
        const auto it = reqs.find(rep->remote_comm_id);
        if (it == reqs.end()) continue;
        const Key naa{src, rep->local_qpn}, host{it->second.host_ip, it->second.host_qpn};
        cum[naa] = protocol::psn_add(rep->starting_psn, protocol::kMax24);
        cum[host] = protocol::psn_add(it->second.naa_first_psn, protocol::kMax24);
        acks_for[host] = naa;
        acks_for[naa] = host;
      }
      continue;
    }
    if (!v->info->is_irn()) continue;
    const std::uint32_t psn = v->headers.bth.psn;
    const Key to{dst, v->headers.bth.dest_qpn};
    // An IRN ACK for the data stream its receiver sends; READ responses are data of the
    // responder's stream (docs/protocol.md 8.5).
    if (v->info->is_response() && !v->info->is_irn_read_response()) {
      const auto a = acks_for.find(to);
      if (a == acks_for.end()) continue;
      ++r.irn_acks;
      std::uint32_t& c = cum[a->second];
      if (protocol::psn_after(psn, c)) c = psn;
      continue;
    }
    const auto c = cum.find(to);
    if (c == cum.end()) continue;
    ++r.irn_data_packets;
    const std::uint32_t d = protocol::psn_diff(psn, c->second);
    if (d >= 0x800000U) continue;  // a retransmission of an acknowledged PSN
    r.max_distance = std::max(r.max_distance, d);
    if (d > cap) ++r.violations;
  }
  return r;
}

}  // namespace naa::testbench
