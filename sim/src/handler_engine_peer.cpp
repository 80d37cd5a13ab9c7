// HandlerEngine, puts to other nodes (docs/spin.md "Puts to other nodes", seed 004 B.6 put with a
// target, C.3.3 the binomial broadcast): a handler's put to peer k of its connection is an RDMA
// WRITE on the requester QP the host bound as peer k (MRSP 0x06, docs/protocol.md "Peers"), into
// the other NAA's region; the Transport's requester (segmentation, window, retransmission) sends
// it like any message. The call's message ends there with a zero-length WRITE_WITH_IMM once the
// completion handler's actions are out, so the other NAA's completion handler runs.
#include <algorithm>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/sim/handler_engine.hpp"

namespace naa::sim {
namespace {

// How often a blocked HPU looks at the window again (cycles): the acknowledgement that opens it
// is the Transport's, which has no event for other blocks.
constexpr std::uint64_t kPeerPollCycles = 16;

}  // namespace

void HandlerContext::put_peer(std::uint32_t peer, std::uint64_t offset,
                              std::span<const std::uint8_t> bytes) {
  Action a;
  a.kind = Action::Kind::peer_device;
  a.peer = peer;
  a.offset = offset;
  a.bytes.assign(bytes.begin(), bytes.end());
  actions.push_back(std::move(a));
}

void HandlerContext::put_peer_from_region(std::size_t region, std::uint64_t length,
                                          std::uint32_t peer, std::uint64_t offset) {
  Action a;
  a.kind = Action::Kind::peer_host;
  a.region = region;
  a.length = length;
  a.peer = peer;
  a.offset = offset;
  actions.push_back(std::move(a));
}

// A bound peer whose QP still runs; the bytes fit its region at the offset; a put from HPU memory
// is one packet (seed 3, as PtlHandlerPutFromDevice); a put from memory reads inside a region.
bool HandlerEngine::peer_action_ok(const Qp& qp, const std::vector<Region>& regions,
                                   const HandlerContext::Action& a) const {
  using Kind = HandlerContext::Action::Kind;
  const PeerBinding* b = directory->peer(qp.qpn, a.peer);
  if (b == nullptr) return false;
  const Qp& pq = ctx_.qps.at(b->qp_index);
  if (pq.generation != b->generation || pq.state != QpState::rts) return false;
  const std::uint64_t len = a.kind == Kind::peer_host ? a.length : a.bytes.size();
  if (a.offset > b->size || len > b->size - a.offset) return false;
  if (a.kind == Kind::peer_device) return len <= pq.mtu;
  // From memory: the same offset of the local region (a packet deposited at its offset is
  // forwarded from there), inside the region.
  return a.region < regions.size() && a.offset <= regions[a.region].size &&
         len <= regions[a.region].size - a.offset &&
         (regions[a.region].flags & protocol::kMrspFlagInternal) == 0;
}

void HandlerEngine::post_peer_put(Qp& qp, std::uint32_t generation,
                                  const std::vector<Region>& regions, HandlerContext::Action& a,
                                  CycleMeter& meter) {
  const PeerBinding* b = directory->peer(qp.qpn, a.peer);
  if (b == nullptr) return;  // released since the check: the connection is going away
  SendWqe w;
  w.op = SendWqe::Op::write;
  w.remote_va = b->va + a.offset;
  w.rkey = b->rkey;
  if (a.kind == HandlerContext::Action::Kind::peer_device) {
    w.data = std::move(a.bytes);
  } else {
    // The region must hold the deposits posted before this put (this invocation's own among
    // them); deposits other HPUs post meanwhile need not hold it up.
    wait_deposits_through(deposits_pushed_);
    w.data.resize(a.length);
    const Region& reg = regions[a.region];
    if (a.length != 0 && !mem.read(reg.naa_address + a.offset, w.data.data(), a.length, meter)) {
      model_fatal(name(), "peer put outside the memory");
    }
  }
  Qp& pq = ctx_.qps.at(b->qp_index);
  const std::uint32_t peer_generation = b->generation;
  auto valid = [&] {
    return qp.generation == generation && pq.generation == peer_generation &&
           pq.state == QpState::rts;
  };
  // Flow control (seed 004 2: "Messages issued from HPU memory may block the HPU thread until the
  // message is delivered"): the HPU waits while the peer QP has a window's worth of packets
  // unacknowledged, so a slow peer slows the handlers that feed it, and through them their
  // own sender (RNR NAKs once every HPU waits), not a queue that grows without bound.
  bool blocked = false;
  while (valid() && protocol::psn_diff(pq.psn_tail, pq.psn_una) >= protocol::kMaxUnackedPsns) {
    blocked = true;
    sc_core::wait(ctx_.cfg.cycle() * static_cast<double>(kPeerPollCycles));
  }
  if (blocked) ++peer_blocked_;
  if (!valid()) return;
  ++peer_puts_;
  peer_bytes_ += w.data.size();
  calls_[static_cast<std::size_t>(&qp - ctx_.qps.data())].peers_used |= 1U << a.peer;
  sends->post_send(pq, std::move(w));
  // Packets the peer QP has outstanding with this one: at most the window while puts block.
  peer_max_outstanding_ =
      std::max<std::uint64_t>(peer_max_outstanding_, protocol::psn_diff(pq.psn_tail, pq.psn_una));
}

void HandlerEngine::end_peer_messages(Qp& qp, CallState& call) {
  for (std::uint32_t k = 0; k < protocol::kMrspMaxPeers; ++k) {
    if ((call.peers_used & (1U << k)) == 0) continue;
    const PeerBinding* b = directory->peer(qp.qpn, k);
    if (b == nullptr) continue;
    Qp& pq = ctx_.qps.at(b->qp_index);
    if (pq.generation != b->generation || pq.state != QpState::rts) continue;
    SendWqe w;
    w.op = SendWqe::Op::write;
    w.imm = b->end_imm;
    w.solicited = true;
    ++peer_ends_;
    sends->post_send(pq, std::move(w));
  }
  call.peers_used = 0;
}

}  // namespace naa::sim
