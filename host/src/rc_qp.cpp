// The RC queue pair (rc_qp.hpp): construction, the requester (post, send, ACK/NAK and READ
// response handling, retransmission timers) and the completion queue; the responder is in
// rc_responder.cpp (the split of Linux rxe: rxe_req.c + rxe_comp.c / rxe_resp.c).
#include "rc_qp.hpp"

#include <algorithm>
#include <cstring>

#include "naa/host/error.hpp"
#include "naa/protocol/headers.hpp"
#include "naa/protocol/opcode.hpp"

namespace naa::host::detail {

namespace op = protocol::opcode;
using protocol::psn_add;
using protocol::psn_diff;

namespace {

// PSN a is at or before PSN b.
bool psn_at_or_before(std::uint32_t a, std::uint32_t b) {
  return psn_diff(b, a) < kHalfPsnSpace;
}

WcOpcode wc_opcode(WrOpcode op) {
  switch (op) {
    case WrOpcode::send:
    case WrOpcode::send_with_imm:
      return WcOpcode::send;
    case WrOpcode::rdma_write:
    case WrOpcode::rdma_write_with_imm:
      return WcOpcode::rdma_write;
    case WrOpcode::rdma_read:
      return WcOpcode::rdma_read;
  }
  return WcOpcode::send;
}

bool has_imm(WrOpcode op) {
  return op == WrOpcode::send_with_imm || op == WrOpcode::rdma_write_with_imm;
}

// The opcode of packet k of n of a SEND or WRITE message (IBTA table 35).
std::uint8_t request_opcode(WrOpcode wr, std::uint32_t k, std::uint32_t n) {
  const bool write = wr == WrOpcode::rdma_write || wr == WrOpcode::rdma_write_with_imm;
  const bool imm = has_imm(wr);
  if (n == 1) {
    if (write) return imm ? op::kWriteOnlyImm : op::kWriteOnly;
    return imm ? op::kSendOnlyImm : op::kSendOnly;
  }
  if (k == 0) return write ? op::kWriteFirst : op::kSendFirst;
  if (k + 1 < n) return write ? op::kWriteMiddle : op::kSendMiddle;
  if (write) return imm ? op::kWriteLastImm : op::kWriteLast;
  return imm ? op::kSendLastImm : op::kSendLast;
}

std::chrono::nanoseconds ack_timeout(std::uint8_t t) {
  return std::chrono::nanoseconds(protocol::local_ack_timeout_ns(t));
}

}  // namespace

std::chrono::nanoseconds RcQp::retransmit_timeout() const noexcept {
  const auto configured = ack_timeout(cfg_.local_ack_timeout);
  if (!cfg_.measured_timers || !rtt_.valid()) return configured;
  // A spurious go-back-N timeout resends up to a window (128 packets), an IRN one a packet: the
  // measured timer only lengthens the configured one, on a path slower than it (measured on
  // loopback under load, a quarter of it still fired 3-4 times per lossless sweep, each a window;
  // under loss go-back-N recovers by NAKs and its timer value hardly mattered).
  // So on a path faster than the constant it is the constant, exactly as before, backoff
  // included (none: an unbounded backoff made go-back-N at 5 % loss wait up to a second per loss).
  const auto ceiling = std::max(configured, kMeasuredTimeoutCeiling);
  if (rtt_.base(cfg_.timer_floor, ceiling) <= configured) return configured;
  const auto t = rtt_.timeout(cfg_.timer_floor, ceiling, configured);
  counters_.measured_timeout_ns = static_cast<std::uint64_t>(t.count());
  return t;
}

RcQp::RcQp(const RcConfig& config, MrTable& mrs, PacketSink& sink, RcCounters& counters)
    : cfg_(config),
      mrs_(mrs),
      sink_(sink),
      counters_(counters),
      sq_psn_(config.send_psn & protocol::kMax24),
      una_psn_(config.send_psn & protocol::kMax24),
      max_sent_psn_(config.send_psn & protocol::kMax24),
      retries_left_(config.retry_count),
      rnr_retries_left_(config.rnr_retry),
      epsn_(config.recv_psn & protocol::kMax24) {
  if (cfg_.measured_timers && cfg_.initial_rtt.count() > 0) rtt_.seed(cfg_.initial_rtt);
}

std::uint32_t RcQp::packets_for(std::uint64_t length) const noexcept {
  if (length == 0) return 1;
  return static_cast<std::uint32_t>((length + cfg_.mtu - 1) / cfg_.mtu);
}

// ---- Requester ---------------------------------------------------------------------------------

std::error_code RcQp::post_send(const SendWr& wr, Clock::time_point now) {
  if (error_) return Errc::not_connected;
  if (wr.sge.length > 0x80000000U) return Errc::invalid_argument;  // 2 GiB max message
  if (sq_.size() >= 4096) return Errc::busy;
  SendWqe w;
  w.wr = wr;
  if (wr.sge.length > 0) {
    w.data = mrs_.local(wr.sge.lkey, wr.sge.addr, wr.sge.length, wr.opcode == WrOpcode::rdma_read);
    if (w.data == nullptr) return Errc::local_protection_error;
  }
  w.first_psn = sq_psn_;
  w.npackets = packets_for(wr.sge.length);
  // A message must not cover more PSNs than the window can ever hold unacknowledged... except
  // that the window counts PSNs sent, so long messages simply take several windows.
  sq_psn_ = psn_add(sq_psn_, w.npackets);
  sq_.push_back(w);
  pump(now);
  return {};
}

std::error_code RcQp::post_recv(const RecvWr& wr) {
  if (error_) return Errc::not_connected;
  RecvWqe r;
  r.wr = wr;
  if (wr.sge.length > 0) {
    r.data = mrs_.local(wr.sge.lkey, wr.sge.addr, wr.sge.length, true);
    if (r.data == nullptr) return Errc::local_protection_error;
  }
  rq_.push_back(r);
  return {};
}

// QueuePair::cancel_recv: rq_ is consumed from the front, so a receive taken out of it is simply
// never reached; only the front one can be part-filled (in_msg_ == send, rc_responder.cpp).
std::error_code RcQp::cancel_recv(std::uint64_t wr_id) {
  for (auto it = rq_.begin(); it != rq_.end(); ++it) {
    if (it->wr.wr_id != wr_id) continue;
    if (it == rq_.begin() && in_msg_ == InMessage::send) return Errc::busy;
    rq_.erase(it);
    return {};
  }
  return Errc::invalid_argument;
}

bool RcQp::in_flight(std::uint32_t psn) const noexcept {
  return psn_diff(psn, una_psn_) < psn_diff(max_sent_psn_, una_psn_);
}

void RcQp::pump(Clock::time_point now) {
  if (error_) return;
  if (rnr_until_) {
    if (now < *rnr_until_) return;
    rnr_until_.reset();
  }
  while (next_wqe_ < sq_.size()) {
    SendWqe& w = sq_[next_wqe_];
    const std::uint32_t psn = psn_add(w.first_psn, next_pkt_);
    const std::uint32_t window =
        cfg_.max_unacked_psns != 0 ? cfg_.max_unacked_psns : kMaxUnackedPsns;
    if (psn_diff(psn, una_psn_) >= window) break;  // window full (PROTOCOL.md 3)
    if (w.wr.opcode == WrOpcode::rdma_read) {
      if (!w.read_sent && reads_in_flight_ >= cfg_.max_reads_outstanding) break;
      send_request_packet(next_wqe_, next_pkt_, now);
      if (!w.read_sent) {
        w.read_sent = true;
        ++reads_in_flight_;
      }
      next_pkt_ = w.npackets;  // one READ REQUEST covers all its response PSNs
    } else {
      send_request_packet(next_wqe_, next_pkt_, now);
      ++next_pkt_;
    }
    if (next_pkt_ >= w.npackets) {
      ++next_wqe_;
      next_pkt_ = 0;
    }
  }
}

void RcQp::send_request_packet(std::size_t wqe_index, std::uint32_t k, Clock::time_point now) {
  const SendWqe& w = sq_[wqe_index];
  const std::uint32_t psn = psn_add(w.first_psn, k);
  const std::uint64_t offset = std::uint64_t{k} * cfg_.mtu;
  protocol::PacketHeaders h;
  h.bth.dest_qpn = cfg_.remote_qpn;
  h.bth.psn = psn;
  protocol::ByteView payload;
  std::uint32_t consumed = 1;
  if (w.wr.opcode == WrOpcode::rdma_read) {
    h.bth.opcode = op::kReadRequest;
    h.bth.ack_req = true;
    h.reth = protocol::Reth{w.wr.remote_addr + offset, w.wr.rkey,
                            static_cast<std::uint32_t>(w.wr.sge.length - offset)};
    consumed = w.npackets - k;
  } else {
    const bool last = k + 1 == w.npackets;
    h.bth.opcode = request_opcode(w.wr.opcode, k, w.npackets);
    const bool write =
        w.wr.opcode == WrOpcode::rdma_write || w.wr.opcode == WrOpcode::rdma_write_with_imm;
    if (write && k == 0) h.reth = protocol::Reth{w.wr.remote_addr, w.wr.rkey, w.wr.sge.length};
    if (last && has_imm(w.wr.opcode)) h.immediate = w.wr.imm;
    h.bth.solicited_event = last && w.wr.solicited;
    // AckReq on the last packet of a message and at least every 64 packets (PROTOCOL.md 3).
    h.bth.ack_req = last || (psn % cfg_.ack_req_interval) == cfg_.ack_req_interval - 1;
    if (w.wr.sge.length > 0) {
      const auto n =
          static_cast<std::size_t>(std::min<std::uint64_t>(cfg_.mtu, w.wr.sge.length - offset));
      payload = protocol::ByteView(w.data + offset, n);
    }
  }
  if (in_flight(psn)) {
    ++counters_.retransmitted_packets;
  } else if (cfg_.measured_timers && !timed_ && h.bth.ack_req &&
             w.wr.opcode != WrOpcode::rdma_read) {
    timed_.emplace(psn, now);  // its ACK answers it directly (Karn: a first transmission)
  }
  sink_.send_packet(cfg_.qpn, cfg_.remote_ip, h, payload);
  const std::uint32_t end = psn_add(psn, consumed);
  if (psn_diff(end, una_psn_) > psn_diff(max_sent_psn_, una_psn_)) max_sent_psn_ = end;
  if (!retransmit_at_ && cfg_.local_ack_timeout != 0) {
    retransmit_at_ = now + retransmit_timeout();
  }
}

void RcQp::go_back_to(std::uint32_t psn) {
  timed_.reset();  // Karn's rule: an ACK after a retransmission times neither sending
  for (std::size_t i = 0; i < sq_.size(); ++i) {
    SendWqe& w = sq_[i];
    const std::uint32_t k = psn_diff(psn, w.first_psn);
    if (k < w.npackets) {
      next_wqe_ = i;
      next_pkt_ = k;
      if (w.wr.opcode == WrOpcode::rdma_read) {
        w.read_received = std::min<std::uint32_t>(w.read_received, k * cfg_.mtu);
      }
      return;
    }
  }
  next_wqe_ = sq_.size();
  next_pkt_ = 0;
}

void RcQp::complete_front(std::error_code status) {
  SendWqe w = sq_.front();
  sq_.pop_front();
  if (next_wqe_ > 0) {
    --next_wqe_;
  } else {
    next_pkt_ = 0;
  }
  if (w.wr.opcode == WrOpcode::rdma_read && w.read_sent && reads_in_flight_ > 0) --reads_in_flight_;
  if (w.wr.signaled || status) {
    WorkCompletion wc;
    wc.wr_id = w.wr.wr_id;
    wc.status = status;
    wc.opcode = wc_opcode(w.wr.opcode);
    wc.byte_len = w.wr.sge.length;
    wc.qp_num = cfg_.qpn;
    cq_.push(wc);
  }
}

void RcQp::acknowledge_through(std::uint32_t psn, Clock::time_point now) {
  if (!in_flight(psn)) return;  // stale or duplicate acknowledgement
  if (timed_ && psn_at_or_before(timed_->first, psn)) {
    rtt_.sample(now - timed_->second);
    ++counters_.rtt_samples;
    timed_.reset();
  }
  std::uint32_t new_una = psn_add(psn, 1);
  while (!sq_.empty()) {
    SendWqe& w = sq_.front();
    const std::uint32_t last = psn_add(w.first_psn, w.npackets - 1);
    if (w.wr.opcode == WrOpcode::rdma_read && w.read_received < w.wr.sge.length) {
      // Only READ RESPONSEs complete a READ. An ACK beyond it means its responses were lost:
      // the acknowledgement stops at the first missing response (IBTA 9.7.5.1.2).
      const std::uint32_t missing = psn_add(w.first_psn, w.read_received / cfg_.mtu);
      if (psn_at_or_before(missing, psn)) new_una = missing;
      break;
    }
    if (!psn_at_or_before(last, psn)) break;
    complete_front({});
  }
  if (psn_diff(new_una, una_psn_) < kHalfPsnSpace) una_psn_ = new_una;
  retries_left_ = cfg_.retry_count;  // forward progress restores the retry budget (as rxe)
  rnr_retries_left_ = cfg_.rnr_retry;
  retransmit_at_.reset();
  if (una_psn_ != max_sent_psn_ && cfg_.local_ack_timeout != 0) {
    retransmit_at_ = now + retransmit_timeout();
  }
  // After a go-back-N, a late ACK may acknowledge past the rewound send position.
  const std::uint32_t next =
      next_wqe_ < sq_.size() ? psn_add(sq_[next_wqe_].first_psn, next_pkt_) : sq_psn_;
  if (psn_diff(una_psn_, next) < kHalfPsnSpace && una_psn_ != next) go_back_to(una_psn_);
}

bool RcQp::retry_or_fail(Clock::time_point /*now*/) {
  if (retries_left_ == 0) {
    to_error(Errc::retry_exceeded);
    return false;
  }
  --retries_left_;
  return true;
}

void RcQp::on_packet(const protocol::PacketView& p, Clock::time_point now) {
  if (error_) return;
  if (p.info->is_irn()) {  // only a QP that negotiated IRN understands them (docs/protocol.md 8)
    ++counters_.dropped_other;
    return;
  }
  if (p.info->is_response()) {
    on_response(p, now);
  } else {
    on_request(p, now);
  }
}

void RcQp::on_response(const protocol::PacketView& p, Clock::time_point now) {
  if (p.info->kind == protocol::OpKind::rdma_read_response) {
    on_read_response(p, now);
    pump(now);
    return;
  }
  if (p.info->kind != protocol::OpKind::acknowledge || !p.headers.aeth) {
    ++counters_.dropped_other;  // atomic acknowledgements: we never send atomics
    return;
  }
  const std::uint32_t psn = p.headers.bth.psn;
  const std::uint8_t syndrome = p.headers.aeth->syndrome;
  const std::uint32_t before = psn_add(psn, protocol::kMax24);  // psn - 1
  const bool known = in_flight(psn) || psn == una_psn_;
  switch (protocol::aeth_kind(syndrome)) {
    case protocol::AethKind::ack:
      acknowledge_through(psn, now);
      break;
    case protocol::AethKind::rnr_nak: {
      if (!known) return;
      ++counters_.rnr_naks_received;
      acknowledge_through(before, now);
      if (cfg_.rnr_retry != 7) {  // 7 = retry forever (IBTA 9.7.5.2.8)
        if (rnr_retries_left_ == 0) {
          to_error(Errc::rnr_retry_exceeded);
          return;
        }
        --rnr_retries_left_;
      }
      go_back_to(psn);
      rnr_psn_ = psn;
      rnr_echo_ = true;
      rnr_until_ = now + std::chrono::nanoseconds(protocol::rnr_timer_ns(syndrome & 0x1F));
      retransmit_at_.reset();
      break;
    }
    case protocol::AethKind::nak: {
      if (!known) return;
      acknowledge_through(before, now);
      if (syndrome == protocol::kNakPsnSequenceError) {
        ++counters_.seq_naks_received;
        // The packets that were in flight behind an RNR-NAKed one draw one sequence-error NAK
        // for that same PSN (the responder's ePSN did not move, PROTOCOL.md 3). We go back there
        // anyway when the RNR timer ends: no new loss, so no retry is spent (as Linux
        // rxe's requester skips NAKs while a retry is under way). Spending one per window ran a
        // pipelined streaming call under flow control out of retries.
        // The responder NAKs an ePSN once, so there is at most one such echo per RNR NAK; it may
        // come after the RNR timer already ended (10 us on the wall clock), when the resend has
        // begun: then it only sends that PSN's packets once more.
        if (rnr_echo_ && psn == rnr_psn_) {
          rnr_echo_ = false;
          if (!rnr_until_) go_back_to(psn);
          break;
        }
        if (!retry_or_fail(now)) return;
        go_back_to(psn);
        break;
      }
      Errc status = Errc::remote_operational_error;
      if (syndrome == protocol::kNakInvalidRequest) status = Errc::remote_invalid_request;
      if (syndrome == protocol::kNakRemoteAccessError) status = Errc::remote_access_error;
      to_error(status);
      return;
    }
    case protocol::AethKind::reserved:
      ++counters_.dropped_other;
      return;
  }
  pump(now);
}

void RcQp::on_read_response(const protocol::PacketView& p, Clock::time_point now) {
  const std::uint32_t psn = p.headers.bth.psn;
  std::size_t i = 0;
  for (; i < sq_.size(); ++i) {
    const SendWqe& w = sq_[i];
    if (w.wr.opcode == WrOpcode::rdma_read && psn_diff(psn, w.first_psn) < w.npackets) break;
  }
  if (i == sq_.size()) {
    ++counters_.duplicates_received;
    return;
  }
  // A response acknowledges every request before its READ (IBTA 9.7.5.1.2).
  if (sq_[i].first_psn != una_psn_) {
    acknowledge_through(psn_add(sq_[i].first_psn, protocol::kMax24), now);
    i = 0;
    while (i < sq_.size() && !(sq_[i].wr.opcode == WrOpcode::rdma_read &&
                               psn_diff(psn, sq_[i].first_psn) < sq_[i].npackets)) {
      ++i;
    }
    if (i == sq_.size()) return;
  }
  SendWqe& w = sq_[i];
  const std::uint32_t expected = psn_add(w.first_psn, w.read_received / cfg_.mtu);
  // A READ answered in full but not yet retired (an earlier WQE still waits) takes no more: a
  // replayed Last would otherwise match `expected` when the length is not a multiple of the MTU
  // and overflow the buffer check below (issue 30: go-back-N READ with lost responses).
  if (w.read_received == w.wr.sge.length && w.wr.sge.length != 0) {
    ++counters_.duplicates_received;
    return;
  }
  if (psn != expected) {
    ++counters_.dropped_out_of_order;  // a response was lost: the retransmit timer re-reads
    return;
  }
  const std::size_t n = p.payload.size();
  const bool full = p.info->payload == protocol::PayloadRule::full_mtu;
  if ((full && n != cfg_.mtu) || n > cfg_.mtu || w.read_received + n > w.wr.sge.length) {
    to_error(Errc::remote_invalid_request);
    return;
  }
  if (n > 0) std::memcpy(w.data + w.read_received, p.payload.data(), n);
  w.read_received += static_cast<std::uint32_t>(n);
  if (p.info->ends_message()) {
    if (w.read_received != w.wr.sge.length) {
      to_error(Errc::remote_invalid_request);
      return;
    }
    acknowledge_through(psn_add(w.first_psn, w.npackets - 1), now);
  } else {
    retries_left_ = cfg_.retry_count;
    retransmit_at_.reset();
    if (cfg_.local_ack_timeout != 0) retransmit_at_ = now + retransmit_timeout();
  }
}

void RcQp::on_timer(Clock::time_point now) {
  if (error_) return;
  if (rnr_until_ && now >= *rnr_until_) pump(now);
  if (retransmit_at_ && now >= *retransmit_at_) {
    retransmit_at_.reset();
    if (una_psn_ == max_sent_psn_) return;  // nothing outstanding
    ++counters_.timeouts;
    rtt_.back_off();
    if (!retry_or_fail(now)) return;
    go_back_to(una_psn_);
    pump(now);
    if (!retransmit_at_ && cfg_.local_ack_timeout != 0) {
      retransmit_at_ = now + retransmit_timeout();
    }
  }
}

std::optional<Clock::time_point> RcQp::next_deadline() const noexcept {
  if (error_) return std::nullopt;
  if (rnr_until_ && retransmit_at_) return std::min(*rnr_until_, *retransmit_at_);
  return rnr_until_ ? rnr_until_ : retransmit_at_;
}

void RcQp::to_error(std::error_code status) {
  if (error_) return;
  error_ = status ? status : make_error_code(Errc::flushed);
  cq_.flush(sq_, rq_, error_, cfg_.qpn, [](const SendWqe& w) { return wc_opcode(w.wr.opcode); });
  next_wqe_ = 0;
  next_pkt_ = 0;
  retransmit_at_.reset();
  rnr_until_.reset();
}

std::size_t RcQp::poll(std::span<WorkCompletion> out) {
  return cq_.poll(out);
}

}  // namespace naa::host::detail
