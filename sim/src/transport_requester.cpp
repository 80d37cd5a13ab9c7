// Transport, requester side (PROTOCOL.md 3): the NAA's own messages (MRSP answers, result
// write-backs) segmented at the path MTU, the window of unacknowledged PSNs, ACK/NAK/RNR
// processing, go-back-N and the retransmit timer.
#include <algorithm>

#include "naa/protocol/headers.hpp"
#include "naa/sim/transport.hpp"

namespace naa::sim {
namespace {

namespace op = protocol::opcode;
using protocol::psn_add;
using protocol::psn_after;
using protocol::psn_diff;

using protocol::kMaxUnackedPsns;  // PROTOCOL.md 3
constexpr std::uint32_t kAckReqEvery = 64;

}  // namespace

// A completed WQE's payload vector is kept for the next post (take_payload_buffer), if short:
// a few, so no memory is held beyond what a short call's write-back needs (issue 31).
void Transport::keep_payload_buffer(SendWqe& w) {
  if (w.data.capacity() == 0 || w.data.capacity() > kKeptPayloadBytes) return;
  if (kept_payloads_.size() >= kKeptPayloads) return;
  kept_payloads_.push_back(std::move(w.data));
}

std::vector<std::uint8_t> Transport::take_payload_buffer() {
  if (kept_payloads_.empty()) return {};
  std::vector<std::uint8_t> v = std::move(kept_payloads_.back());
  kept_payloads_.pop_back();
  v.clear();
  return v;
}

std::uint32_t Transport::queue_send(Qp& qp, SendWqe wqe) {
  const std::uint32_t first_psn = qp.psn_tail;
  wqe.packets = packets_for(wqe.data.size(), qp.mtu);
  wqe.first_psn = first_psn;
  if (qp.irn && (wqe.op == SendWqe::Op::send || wqe.imm)) wqe.irn_recv_sn = qp.irn_send_sn++;
  qp.psn_tail = psn_add(qp.psn_tail, wqe.packets);
  qp.sq.push_back(std::move(wqe));
  return first_psn;
}

void Transport::post_send(Qp& qp, SendWqe wqe) {
  (void)queue_send(qp, std::move(wqe));
  tx_work_.notify(sc_core::SC_ZERO_TIME);
}

void Transport::post_last_send(Qp& qp, SendWqe wqe) {
  const bool plain = wqe.op != SendWqe::Op::read_response;
  const std::uint32_t first_psn = queue_send(qp, std::move(wqe));
  if (plain && tx_turn_at_post(qp, first_psn)) return;
  tx_work_.notify(sc_core::SC_ZERO_TIME);
}

// tx_thread, parked in its wait for work, would wake one delta cycle from now and scan the QPs.
// When nothing else can run before it (no other process runnable, no delta notification pending,
// no fired timer; the caller posts nothing more and changes no QP before it waits), the scan
// finds what it would find then: every other QP had nothing to send at tx_thread's last scan and
// any change since would have notified it (a pending notification fails the test), so it picks
// this QP and sends this WQE's first packet (its PSN is the next one, the window allows it, no
// loss recovery). The turn is made here up to irn_put_packet's stage time, which is booked;
// tx_thread wakes once, when the stage ends, instead of twice (issue 31). Otherwise false.
bool Transport::tx_turn_at_post(Qp& qp, std::uint32_t first_psn) {
  if (!tx_parked_ || tx_pending_ != nullptr || !timer_fired_.empty() || !qp.irn ||
      qp.state != QpState::rts || !qp.reads.empty() || qp.psn_send != first_psn ||
      qp.irn_tx.in_recovery() || !qp.irn_tx.can_send_new() || ctx_.pool.available() == 0 ||
      sc_core::sc_pending_activity_at_current_time()) {
    return false;
  }
  tx_in_turn_ = true;
  const bool sent = irn_send_next_packet(qp);
  tx_in_turn_ = false;
  // The checks above leave irn_put_packet nothing to wait for or refuse: it booked the packet.
  if (!sent || tx_pending_ == nullptr)
    model_fatal(name(), "the transmit turn at a post sent nothing");
  rr_ = qp_index(qp) + 1;
  ++tx_turns_at_post_;
  tx_work_.notify(tx_pending_at_ - sim_now());
  return true;
}

void Transport::requester_rx(Qp& qp, const protocol::PacketView& v) {
  if (v.info->kind != protocol::OpKind::acknowledge) {
    drop(TransportDrop::unexpected_response);  // we issue no READs or atomics
    return;
  }
  const std::uint32_t psn = v.headers.bth.psn;
  const std::uint8_t syndrome = v.headers.aeth->syndrome;
  const std::uint32_t outstanding = psn_diff(qp.psn_send, qp.psn_una);
  const bool in_window = psn_diff(psn, qp.psn_una) < outstanding;  // psn in [una, send)
  switch (protocol::aeth_kind(syndrome)) {
    case protocol::AethKind::ack:
      ++acks_received_;
      if (!in_window) {
        drop(TransportDrop::stale_ack);
        return;
      }
      acknowledge_through(qp, psn);
      break;
    case protocol::AethKind::rnr_nak:
      ++rnr_received_;
      if (!in_window) {
        drop(TransportDrop::stale_ack);
        return;
      }
      if (psn != qp.psn_una) acknowledge_through(qp, psn_add(psn, protocol::kMax24));
      if (qp.rnr_retry != 7) {
        if (qp.rnr_left == 0) {
          retry_exhausted(qp, "RNR retry exceeded");
          return;
        }
        --qp.rnr_left;
      }
      qp.psn_send = psn;
      qp.rnr_waiting = true;
      // Nothing is outstanding during the RNR wait (everything from `psn` on is sent again
      // after it), so the transport timer stops: an RNR wait must not use up retry_count
      // (PROTOCOL.md 3 counts RNR retries in rnr_retry alone). It restarts with the next packet.
      arm_retransmit(qp);
      ctx_.timers.arm(
          *this, qp_index(qp) << kCookieShift | kCookieRnr,
          sc_core::sc_time(static_cast<double>(protocol::rnr_timer_ns(syndrome & 0x1FU)),
                           sc_core::SC_NS));
      break;
    case protocol::AethKind::nak:
      ++naks_received_;
      if (syndrome == protocol::kNakPsnSequenceError) {
        if (psn_diff(psn, qp.psn_una) > outstanding) {
          drop(TransportDrop::stale_ack);
          return;
        }
        if (psn != qp.psn_una) acknowledge_through(qp, psn_add(psn, protocol::kMax24));
        if (qp.retries_left == 0) {
          retry_exhausted(qp, "retry exceeded (sequence NAKs)");
          return;
        }
        --qp.retries_left;
        go_back(qp, psn);
      } else {
        ++completion_errors_;
        qp_error(qp, "NAK from the peer");
      }
      break;
    case protocol::AethKind::reserved:
      drop(TransportDrop::unexpected_response);
      break;
  }
}

void Transport::acknowledge_through(Qp& qp, std::uint32_t psn) {
  while (!qp.sq.empty()) {
    const SendWqe& w = qp.sq.front();
    const std::uint32_t last = psn_add(w.first_psn, w.packets - 1);
    if (psn_after(last, psn)) break;
    keep_payload_buffer(qp.sq.front());
    qp.sq.pop_front();
    ++messages_completed_;
  }
  if (qp.handover_pending && qp.sq.empty()) apply_handover(qp);
  qp.psn_una = psn_add(psn, 1);
  if (psn_after(qp.psn_una, qp.psn_send)) qp.psn_send = qp.psn_una;
  qp.retries_left = qp.retry_count;
  qp.rnr_left = qp.rnr_retry;
  qp.timer_armed = false;
  arm_retransmit(qp);
  tx_work_.notify(sc_core::SC_ZERO_TIME);  // the window moved
}

void Transport::go_back(Qp& qp, std::uint32_t psn) {
  ++retransmits_;
  qp.psn_send = psn;
  tx_work_.notify(sc_core::SC_ZERO_TIME);
}

void Transport::arm_retransmit(Qp& qp) {
  const std::uint32_t cookie = qp_index(qp) << kCookieShift | kCookieRetransmit;
  const std::uint64_t ns = protocol::local_ack_timeout_ns(qp.ack_timeout);
  if (ns == 0 || qp.psn_una == qp.psn_send) {
    ctx_.timers.cancel(*this, cookie);
    qp.timer_armed = false;
    return;
  }
  ctx_.timers.arm(*this, cookie, sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
  qp.timer_armed = true;
  qp.timer_una = qp.psn_una;
}

bool Transport::send_next_packet(Qp& qp) {
  if (qp.rnr_waiting || qp.psn_send == qp.psn_tail) return false;
  if (psn_diff(qp.psn_send, qp.psn_una) >= kMaxUnackedPsns) return false;
  const SendWqe* w = nullptr;
  std::uint32_t off = 0;
  for (const SendWqe& c : qp.sq) {
    off = psn_diff(qp.psn_send, c.first_psn);
    if (off < c.packets) {
      w = &c;
      break;
    }
  }
  if (w == nullptr) model_fatal(name(), "send PSN outside every posted message");
  const bool first = off == 0;
  const bool last = off + 1 == w->packets;
  const bool is_write = w->op == SendWqe::Op::write;
  protocol::PacketHeaders h;
  if (is_write) {
    if (first && last) {
      h.bth.opcode = w->imm ? op::kWriteOnlyImm : op::kWriteOnly;
    } else if (first) {
      h.bth.opcode = op::kWriteFirst;
    } else if (last) {
      h.bth.opcode = w->imm ? op::kWriteLastImm : op::kWriteLast;
    } else {
      h.bth.opcode = op::kWriteMiddle;
    }
    if (first) {
      h.reth = protocol::Reth{w->remote_va, w->rkey, static_cast<std::uint32_t>(w->data.size())};
    }
  } else {
    if (first && last) {
      h.bth.opcode = w->imm ? op::kSendOnlyImm : op::kSendOnly;
    } else if (first) {
      h.bth.opcode = op::kSendFirst;
    } else if (last) {
      h.bth.opcode = w->imm ? op::kSendLastImm : op::kSendLast;
    } else {
      h.bth.opcode = op::kSendMiddle;
    }
  }
  if (last && w->imm) h.immediate = *w->imm;
  h.bth.solicited_event = last && w->solicited;
  h.bth.ack_req = last || (off + 1) % kAckReqEvery == 0;
  h.bth.dest_qpn = qp.peer_qpn;
  h.bth.psn = qp.psn_send;
  const std::size_t begin = std::size_t{off} * qp.mtu;
  const std::size_t len =
      std::min<std::size_t>(qp.mtu, w->data.size() - std::min(begin, w->data.size()));

  Packet* p = ctx_.pool.try_get();
  if (p == nullptr) {  // wait for a buffer, then let the scheduler look again
    ctx_.pool.put(ctx_.pool.get());
    return true;
  }
  const auto n =
      protocol::encode_packet(h, {w->data.data() + begin, len}, {p->data.data(), p->data.size()});
  if (!n) model_fatal(name(), "cannot encode a requester packet");
  p->size = *n;
  p->peer_ip = qp.peer_ip;
  p->src_qpn = qp.qpn;
  qp.psn_send = psn_add(qp.psn_send, 1);
  ++tx_packets_;
  tx_payload_bytes_ += len;
  if (!qp.timer_armed) arm_retransmit(qp);
  tx_meter_.spend(SimConfig::stage_cycles(p->size, ctx_.cfg.width, ctx_.cfg.transport_latency));
  to_tx->put(p);
  return true;
}

}  // namespace naa::sim
