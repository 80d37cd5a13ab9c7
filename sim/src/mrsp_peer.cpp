// MrspHandler, peers (docs/protocol.md "Peers", docs/spin.md "Puts to other nodes"). The host
// brokers a QP from NAA i to NAA j, so that the NAAs stay passive in connection setup (seed 004
// section 2, control/data-plane separation): 0x06 on its connection to NAA i opens a requester QP
// there (no CM exchange: its parameters come from the host, who learnt them from its own
// connection to NAA j) as peer k of that connection; 0x08 on that connection to NAA j then hands
// its requester end to the new QP.
#include "naa/sim/mrsp_handler.hpp"

#include "naa/protocol/mrsp.hpp"

namespace naa::sim {

const PeerBinding* MrspHandler::peer(std::uint32_t qpn, std::uint32_t index) const {
  const Qp* qp = ctx_.find_qp(qpn);
  if (qp == nullptr || index >= protocol::kMrspMaxPeers) return nullptr;
  const auto& b = peers_[qpn & 0xFFU][index];
  return b ? &*b : nullptr;
}

void MrspHandler::release_peer(std::size_t index, std::size_t k) {
  auto& b = peers_[index][k];
  if (!b) return;
  Qp& pq = ctx_.qps.at(b->qp_index);
  if (pq.generation == b->generation && pq.peer_requester && pq.state != QpState::free) {
    release(pq);  // its own regions and handlers (none) and MR entries
    sends->close_peer(pq);
    pq.state = QpState::free;
  }
  b.reset();
}

std::uint8_t MrspHandler::bind_peer(Qp& qp, std::size_t index, const protocol::MrspPeer& m,
                                    protocol::MrspPeerBound& bound) {
  if (m.index >= protocol::kMrspMaxPeers || qp.peer_requester || qp.handed_over) {
    return protocol::kMrspErrorBadPeer;
  }
  release_peer(index, m.index);  // a second 0x06 for the same k replaces the peer
  if (m.size == 0) {  // an empty region: the host takes peer k back (its hand-over failed)
    ++peers_released_;
    bound = protocol::MrspPeerBound{m.index, 0, 0};
    return 0;
  }
  if (m.mtu < 256 || m.mtu > ctx_.cfg.mtu_max || (m.mtu & (m.mtu - 1)) != 0) {
    return protocol::kMrspErrorBadPeer;
  }
  Qp* slot = nullptr;
  for (Qp& q : ctx_.qps) {
    if (q.state == QpState::free) {
      slot = &q;
      break;
    }
  }
  if (slot == nullptr) return protocol::kMrspErrorBadPeer;  // no QP free
  Qp& pq = *slot;
  const auto idx = static_cast<std::uint32_t>(slot - ctx_.qps.data());
  pq.claim(idx);
  pq.state = QpState::rts;
  pq.peer_ip = m.peer_ip;
  pq.peer_qpn = m.peer_qpn;
  pq.mtu = m.mtu;
  pq.ack_timeout = qp.ack_timeout;  // the host's choice for its own connection
  pq.retry_count = qp.retry_count;
  pq.rnr_retry = qp.rnr_retry;
  pq.reads_allowed = false;
  pq.local_comm_id = 0;  // no CM side: no DREQ names it
  pq.remote_comm_id = 0;
  pq.irn = false;
  pq.owner_index = static_cast<std::uint32_t>(index);
  const auto psn = static_cast<std::uint32_t>(ctx_.rng()) & 0xFFFFFFU;
  sends->open_peer(pq, psn);
  peers_[index][m.index] = PeerBinding{idx, pq.generation, m.va, m.rkey, m.size, m.end_imm};
  ++peers_bound_;
  bound = protocol::MrspPeerBound{m.index, pq.qpn, psn};
  return 0;
}

std::uint8_t MrspHandler::hand_over(Qp& qp, const protocol::MrspHandover& m) {
  // IRN numbers receives (recv_WQE_SN) per connection: a new requester could not continue them.
  if (qp.irn || qp.peer_requester || qp.handed_over || qp.handover_pending) {
    return protocol::kMrspErrorBadPeer;
  }
  qp.handover_pending = Qp::Handover{m.peer_ip, m.peer_qpn, m.psn};
  ++handovers_;
  return 0;
}

bool MrspHandler::peer_request(Qp& qp, std::size_t index, const protocol::MrspMessage& m,
                               std::vector<std::uint8_t>& out) {
  std::uint8_t code = 0;
  if (const auto* p = std::get_if<protocol::MrspPeer>(&m)) {
    protocol::MrspPeerBound bound;
    code = bind_peer(qp, index, *p, bound);
    if (code == 0) {
      out.resize(protocol::kMrspPeerBoundSize);
      (void)protocol::encode_mrsp_peer_bound(bound, out);
      return true;
    }
  } else if (const auto* h = std::get_if<protocol::MrspHandover>(&m)) {
    code = hand_over(qp, *h);
    if (code == 0) {
      out.resize(protocol::kMrspHandedOverSize);
      (void)protocol::encode_mrsp_handed_over(out);
      return true;
    }
  } else {
    return false;
  }
  ++errors_.at(code);
  out.resize(protocol::kMrspErrorSize);
  (void)protocol::encode_mrsp_error(code, out);
  return true;
}

}  // namespace naa::sim
