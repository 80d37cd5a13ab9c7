// Transport (transport.hpp): the block itself. Construction, the QP lifecycle the CM drives, the
// receive dispatcher (responder or requester side), the transmit scheduler (round-robin over the
// QPs, peer timers first), QP errors and the statistics. The two sides of RC live in
// transport_responder.cpp and transport_requester.cpp, idle liveness in transport_liveness.cpp.
#include "naa/sim/transport.hpp"

#include <utility>

#include "naa/protocol/headers.hpp"

namespace naa::sim {

Transport::Transport(sc_core::sc_module_name name, ModelContext& ctx)
    : sc_module(name),
      mem("mem"),
      ctx_(ctx),
      in_(64, this, &Transport::rx_service),
      rx_meter_(ctx.cfg),
      tx_meter_(ctx.cfg),
      drops_({"unknown_qp", "wrong_peer", "qp_error", "out_of_order", "mtu_exceeded",
              "unexpected_response", "stale_ack", "irn_opcode", "irn_beyond_bitmap",
              "irn_no_receive"}),
      naks_({"sequence", "invalid_request", "remote_access", "rnr"}) {
  scratch_.resize(kMaxDatagram);
  timer_fired_.reserve(256);
  fired_scratch_.reserve(256);
  kept_payloads_.reserve(kKeptPayloads);
  SC_THREAD(rx_thread);
  SC_THREAD(tx_thread);
}

void Transport::init_qp(Qp& qp, std::uint32_t send_psn, std::uint32_t recv_psn) {
  qp_scan_end_ = std::max<std::size_t>(qp_scan_end_, qp_index(qp) + 1);
  qp.epsn = recv_psn;
  qp.msn = 0;
  qp.nak_sequence_sent = false;
  qp.in_message = Qp::InMessage::none;
  qp.write_va = 0;
  qp.write_remaining = 0;
  qp.recv_posted = true;
  // The receive buffer (6 KiB) is allocated by the first SEND, not here: a half-open connection
  // holds no memory beyond its QP table entry (docs/sim/cm_agent.md, REQ floods).
  qp.recv_len = 0;
  qp.reads.clear();
  qp.sq.clear();
  qp.psn_una = qp.psn_send = qp.psn_tail = send_psn;
  qp.retries_left = qp.retry_count;
  qp.rnr_left = qp.rnr_retry;
  qp.rnr_waiting = false;
  qp.timer_armed = false;
  qp.peer_requester = false;  // peers (transport_peer.cpp): a new connection is neither
  qp.handed_over = false;
  qp.handover_pending.reset();
  if (qp.irn) irn_init(qp);
}

void Transport::release_qp(Qp& qp) {
  const std::uint32_t idx = qp_index(qp);
  ctx_.timers.cancel(*this, idx << kCookieShift | kCookieRetransmit);
  ctx_.timers.cancel(*this, idx << kCookieShift | kCookieRnr);
  ctx_.timers.cancel(*this, idx << kCookieShift | kCookieIdle);
  qp.sq.clear();
  qp.reads.clear();
  qp.timer_armed = false;
  qp.rnr_waiting = false;
}

void Transport::repost_receive(Qp& qp) {
  qp.recv_posted = true;
}

void Transport::on_peer_timer(std::uint32_t cookie) {
  timer_fired_.push_back(cookie);
  tx_work_.notify(sc_core::SC_ZERO_TIME);
}

// ---------------------------------------------------------------------------------------------
// Receive dispatch

sc_core::sc_time Transport::rx_service(void* self, const Packet& p, sc_core::sc_time /*start*/) {
  auto* t = static_cast<Transport*>(self);
  const std::uint64_t cycles =
      SimConfig::stage_cycles(p.size, t->ctx_.cfg.width, t->ctx_.cfg.transport_latency);
  t->rx_meter_.account(cycles);
  return t->rx_meter_.times(cycles);
}

void Transport::rx_thread() {
  for (;;) {
    // After the stage's time for the datagram (StageQueue: an idle stage is started by RxPipe's
    // put and wakes once, when the datagram is through; issue 31).
    Packet* p = in_.next();
    // RxPipe validated and decoded it; a datagram from elsewhere (a test harness) is decoded here
    // (out of line, into a member: no view is built or zeroed per packet; issue 31).
    const protocol::PacketView* v = p->decoded ? &p->view : decode_fallback(*p);
    p->decoded = false;
    ++rx_packets_;
    Qp* qp = v ? ctx_.find_qp(v->headers.bth.dest_qpn) : nullptr;
    if (qp == nullptr) {
      drop(TransportDrop::unknown_qp);
    } else if (p->peer_ip != qp->peer_ip) {
      drop(TransportDrop::wrong_peer);
    } else if (qp->state == QpState::error) {
      drop(TransportDrop::qp_error);
    } else if (v->info->is_irn() && !qp->irn) {
      drop(TransportDrop::irn_opcode);  // only a QP that negotiated IRN understands them
    } else if (qp->irn) {
      qp->last_heard = sim_now();
      if (v->info->is_response()) {
        irn_requester_rx(*qp, *v);
      } else {
        if (qp->state == QpState::rtr) cm->established_by_data(*qp);
        irn_responder(*qp, *v);
      }
    } else {
      qp->last_heard = sim_now();  // the peer is alive (idle liveness)
      if (v->info->is_response()) {
        requester_rx(*qp, *v);
      } else {
        // The first valid data packet also counts as RTU (PROTOCOL.md 4).
        if (qp->state == QpState::rtr) cm->established_by_data(*qp);
        responder(*qp, p, *v);
      }
    }
    ctx_.pool.put(p);
  }
}

const protocol::PacketView* Transport::decode_fallback(const Packet& p) {
  const auto r = protocol::decode_packet(p.bytes());
  if (!r) return nullptr;
  fallback_view_ = *r;
  return &fallback_view_;
}

void Transport::qp_error(Qp& qp, const char* why) {
  if (qp.state == QpState::free || qp.state == QpState::error) return;
  ++qp_errors_;
  if (ctx_.log.enabled(LogLevel::info)) {
    ctx_.log.write(LogLevel::info, name(), "QP " + std::to_string(qp.qpn) + " to error: " + why);
  }
  qp.state = QpState::error;
  release_qp(qp);  // flush the work queues and timers
  // The NAA is its own verbs consumer: on a QP error it disconnects, as an rdma_cm application
  // does after a completion error. The CM releases the regions and MR entries at once (nothing
  // can use them any more) and frees the QP when the peer answers its DREQ.
  cm->on_qp_error(qp);
}

// ---------------------------------------------------------------------------------------------
// Transmit scheduler: peer timers, then the NAA's own messages and READ responses, round-robin
// over QPs

// The peer timers that fired since the last turn (on_peer_timer), in the order they fired.
void Transport::handle_fired_timers() {
  // A member, not a local: a handler may wait (the pool), and a SystemC thread's stack is never
  // unwound at the end of simulation.
  std::vector<std::uint32_t>& fired = fired_scratch_;
  fired.swap(timer_fired_);
  for (const std::uint32_t cookie : fired) {
    Qp& qp = ctx_.qps.at(cookie >> kCookieShift);
    if (qp.state != QpState::rts) continue;
    if ((cookie & kCookieKindMask) == kCookieRnr) {
      qp.rnr_waiting = false;
      continue;
    }
    if ((cookie & kCookieKindMask) == kCookieIdle) {
      on_idle_timer(qp);
      continue;
    }
    qp.timer_armed = false;
    if (qp.irn) {
      irn_on_timeout(qp);
      continue;
    }
    if (qp.psn_una == qp.psn_tail) continue;  // everything was acknowledged meanwhile
    if (qp.rnr_waiting) continue;             // the RNR wait owns the retry (see requester_rx)
    ++timeouts_;
    if (qp.retries_left == 0) {
      retry_exhausted(qp, "retry exceeded (timeout)");
      continue;
    }
    --qp.retries_left;
    go_back(qp, qp.psn_una);
    arm_retransmit(qp);
  }
  fired.clear();
}

void Transport::tx_thread() {
  for (;;) {
    if (tx_pending_ != nullptr) {
      // The turn post_last_send made: its packet leaves the stage now, as after
      // irn_put_packet's wait; then the scan, as after that turn (woken earlier by another
      // notification, the rest of the stage time is waited first).
      if (const sc_core::sc_time now = sim_now(); now < tx_pending_at_) {
        sc_core::wait(tx_pending_at_ - now);
      }
      to_tx->put(std::exchange(tx_pending_, nullptr));
    }
    // Timers fire seldom (none in a nop call): looked at only when one did (issue 31; the
    // scheduler turns twice per call).
    if (!timer_fired_.empty()) handle_fired_timers();

    // Round-robin from rr_: the QPs (rr_ + k) % n for k = 0..n-1, as the two ranges [rr_ % n, n)
    // and [0, rr_ % n) (issue 31: the scan of 16 QPs, twice per call, without a division each).
    auto send_one = [this](Qp& qp) {
      return (!qp.reads.empty() && send_read_response(qp)) ||
             (qp.irn ? irn_has_packet(qp) && irn_send_next_packet(qp) : send_next_packet(qp));
    };
    // QPs from qp_scan_end_ on were never initialised, so none is in RTS: the same QPs are
    // looked at in the same order as over the whole table.
    bool sent = false;
    Qp* const first = ctx_.qps.data();
    Qp* const end = first + std::min(qp_scan_end_, ctx_.qps.size());
    // rr_ is 0 or one past a QP index, so at most the table's size: rr_ % n without a division.
    Qp* const from = rr_ < ctx_.qps.size() ? first + rr_ : first;
    for (Qp* q = from; q < end && !sent; ++q) {
      if (q->state == QpState::rts && send_one(*q)) {
        sent = true;
        rr_ = static_cast<std::size_t>(q - first) + 1;
      }
    }
    for (Qp* q = first; q != std::min(from, end) && !sent; ++q) {
      if (q->state == QpState::rts && send_one(*q)) {
        sent = true;
        rr_ = static_cast<std::size_t>(q - first) + 1;
      }
    }
    if (!sent && timer_fired_.empty()) {
      tx_parked_ = true;
      sc_core::wait(tx_work_);
      tx_parked_ = false;
    }
  }
}

void Transport::report(std::ostream& os) const {
  os << "transport.rx_cycles=" << rx_meter_.busy_cycles() << '\n'
     << "transport.tx_cycles=" << tx_meter_.busy_cycles() << '\n'
     << "transport.rx_packets=" << rx_packets_ << '\n'
     << "transport.rx_payload_bytes=" << rx_payload_bytes_ << '\n'
     << "transport.duplicates=" << duplicates_ << '\n'
     << "transport.acks_sent=" << acks_sent_ << '\n'
     << "transport.reads=" << reads_ << '\n'
     << "transport.tx_packets=" << tx_packets_ << '\n'
     << "transport.tx_payload_bytes=" << tx_payload_bytes_ << '\n'
     << "transport.acks_received=" << acks_received_ << '\n'
     << "transport.naks_received=" << naks_received_ << '\n'
     << "transport.rnr_naks_received=" << rnr_received_ << '\n'
     << "transport.retransmits=" << retransmits_ << '\n'
     << "transport.timeouts=" << timeouts_ << '\n'
     << "transport.messages_completed=" << messages_completed_ << '\n'
     << "transport.completion_errors=" << completion_errors_ << '\n'
     << "transport.qp_errors=" << qp_errors_ << '\n'
     << "transport.idle_probes=" << idle_probes_ << '\n'
     << "transport.idle_releases=" << idle_releases_ << '\n'
     << "transport.irn_acks_sent=" << irn_acks_sent_ << '\n'
     << "transport.irn_sacks_received=" << irn_sacks_received_ << '\n'
     << "transport.irn_completions_deferred=" << irn_completions_deferred_ << '\n'
     << "transport.drops=" << drops_.total() << '\n'
     << "activity.transport.tx_turns_at_post=" << tx_turns_at_post_ << '\n';
  naks_.report(os, "transport.nak_sent.");
  drops_.report(os, "transport.drop.");
  if (handovers_ != 0) os << "transport.handovers=" << handovers_ << '\n';  // peers (sparse)
}

}  // namespace naa::sim
