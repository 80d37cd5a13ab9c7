// The IRN queue pair (irn_qp.hpp; docs/protocol.md "IRN").
#include "irn_qp.hpp"

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

bool has_imm(WrOpcode o) {
  return o == WrOpcode::send_with_imm || o == WrOpcode::rdma_write_with_imm;
}
bool is_write(WrOpcode o) {
  return o == WrOpcode::rdma_write || o == WrOpcode::rdma_write_with_imm;
}

// The IRN opcode of packet k of n (docs/protocol.md "IRN: packets"): the IBTA table 35 layout
// moved to 0xC0 (SEND) and 0xC6 (WRITE).
std::uint8_t irn_opcode(WrOpcode wr, std::uint32_t k, std::uint32_t n) {
  const std::uint8_t base = is_write(wr) ? op::kIrnWriteFirst : op::kIrnSendFirst;
  const bool imm = has_imm(wr);
  if (n == 1) return static_cast<std::uint8_t>(base + (imm ? 5 : 4));
  if (k == 0) return base;
  if (k + 1 < n) return static_cast<std::uint8_t>(base + 1);
  return static_cast<std::uint8_t>(base + (imm ? 3 : 2));
}

}  // namespace

IrnQp::IrnQp(const RcConfig& config, const protocol::CapabilityBlock& caps, MrTable& mrs,
             PacketSink& sink, RcCounters& counters)
    : cfg_(config),
      caps_(caps),
      mrs_(mrs),
      sink_(sink),
      counters_(counters),
      sq_psn_(config.send_psn & protocol::kMax24),
      retries_left_(config.retry_count),
      wire_next_(config.send_psn & protocol::kMax24) {
  tx_.reset(sq_psn_, caps.bdp_cap);
  rx_.reset(config.recv_psn & protocol::kMax24, caps.bdp_cap);
  if (cfg_.measured_timers) {
    sent_at_.assign(std::max<std::uint16_t>(caps.bdp_cap, 1), std::nullopt);
    if (cfg_.initial_rtt.count() > 0) rtt_.seed(cfg_.initial_rtt);
  }
}

std::chrono::nanoseconds IrnQp::timeout_for(std::uint32_t unsacked) const noexcept {
  std::chrono::nanoseconds negotiated(protocol::irn_timeout_ns(caps_, unsacked));
  // Exact durations (UdpRoceOptions::irn_rto_low_ns / irn_rto_high_ns, constant timers only).
  const auto exact = unsacked <= caps_.low_threshold ? cfg_.irn_rto_low : cfg_.irn_rto_high;
  if (exact.count() > 0 && negotiated.count() != 0) negotiated = exact;
  if (!cfg_.measured_timers || !rtt_.valid()) return negotiated;
  const auto ceiling = std::max<std::chrono::nanoseconds>(
      std::chrono::nanoseconds(protocol::local_ack_timeout_ns(caps_.rto_high)),
      kMeasuredTimeoutCeiling);
  const auto low = rtt_.timeout(cfg_.timer_floor, ceiling, negotiated);
  const auto t = unsacked <= caps_.low_threshold ? low : std::max(std::min(2 * low, ceiling), low);
  counters_.measured_timeout_ns = static_cast<std::uint64_t>(t.count());
  return t;
}

std::uint32_t IrnQp::packets_for(std::uint64_t length) const noexcept {
  if (length == 0) return 1;
  return static_cast<std::uint32_t>((length + cfg_.mtu - 1) / cfg_.mtu);
}

// ---- Requester ---------------------------------------------------------------------------------

std::error_code IrnQp::post_send(const SendWr& wr, Clock::time_point now) {
  if (error_) return Errc::not_connected;
  if (wr.sge.length > 0x80000000U) return Errc::invalid_argument;
  if (sq_.size() >= 4096) return Errc::busy;
  const bool read = wr.opcode == WrOpcode::rdma_read;
  SendWqe w;
  w.wr = wr;
  if (wr.sge.length > 0) {
    w.data = mrs_.local(wr.sge.lkey, wr.sge.addr, wr.sge.length, read);
    if (w.data == nullptr) return Errc::local_protection_error;
  }
  w.first_psn = sq_psn_;
  // A READ request takes one PSN of our stream; its responses come in the peer's (IRN's split of
  // the PSN space, seed 001 "Other Considerations").
  w.npackets = read ? 1 : packets_for(wr.sge.length);
  if (wr.opcode == WrOpcode::send || has_imm(wr.opcode)) w.recv_sn = send_sn_++;
  if (read) w.recv_sn = read_sn_++;
  sq_psn_ = psn_add(sq_psn_, w.npackets);
  sq_.push_back(w);
  pump(now);
  return {};
}

void IrnQp::pump(Clock::time_point now) {
  if (error_) return;
  while (const auto psn = tx_.take_retransmit()) {
    ++counters_.retransmitted_packets;
    if (!sent_at_.empty()) sent_at_[*psn % sent_at_.size()].reset();  // Karn's rule
    send_packet(*psn, now, true);
  }
  while (tx_.next() != sq_psn_ && tx_.can_send_new()) {
    const std::uint32_t psn = tx_.next();
    // Our READs in flight are bounded by the initiator depth (the responder's READ resources).
    std::uint32_t k = 0;
    if (const SendWqe* r = wqe_of(psn, k); r != nullptr && r->is_read()) {
      if (reads_in_flight_ >= std::max<std::uint8_t>(cfg_.max_reads_outstanding, 1)) break;
      ++reads_in_flight_;
      const_cast<SendWqe*>(r)->read_sent = true;
    }
    tx_.sent_new();
    if (!sent_at_.empty()) sent_at_[psn % sent_at_.size()] = now;
    // Coalesced ACKs: the last packet we can send for now asks for its ACK.
    send_packet(psn, now, !(tx_.next() != sq_psn_ && tx_.can_send_new()));
  }
}

const IrnQp::SendWqe* IrnQp::wqe_of(std::uint32_t psn, std::uint32_t& k) const noexcept {
  for (const SendWqe& c : sq_) {
    k = psn_diff(psn, c.first_psn);
    if (k < c.npackets) return &c;
  }
  return nullptr;
}

void IrnQp::send_packet(std::uint32_t psn, Clock::time_point now, bool urgent) {
  std::uint32_t k = 0;
  const SendWqe* w = wqe_of(psn, k);
  if (w == nullptr) return;  // acknowledged meanwhile
  const bool last = k + 1 == w->npackets;
  const std::uint64_t offset = std::uint64_t{k} * cfg_.mtu;
  protocol::PacketHeaders h;
  h.bth.opcode = irn_opcode(w->wr.opcode, k, w->npackets);
  h.bth.dest_qpn = cfg_.remote_qpn;
  h.bth.psn = psn;
  // IRN: every packet is acknowledged; with coalesced ACKs only those that need it at once
  // (docs/protocol.md 8.2).
  // Every 4th packet of a message, except the 3 before its last (which asks anyway): a
  // 5-packet message (ofi_rxm's segments) then costs one ACK, as on go-back-N, not two.
  constexpr std::uint32_t kEvery = protocol::kIrnCoalescedAcks;
  h.bth.ack_req = !caps_.coalesced_acks() || urgent || last ||
                  (k % kEvery == kEvery - 1 && k + kEvery < w->npackets);
  h.bth.solicited_event = last && w->wr.solicited && w->kind == SendWqe::Kind::posted;
  if (w->kind == SendWqe::Kind::read_response) {
    // A READ response packet: read_WQE_SN and its offset; the requester places it at offset x MTU
    // of the READ's local buffer (docs/protocol.md 8.5).
    h.bth.opcode = w->npackets == 1 ? op::kIrnReadResponseOnly
                   : k == 0         ? op::kIrnReadResponseFirst
                   : last           ? op::kIrnReadResponseLast
                                    : op::kIrnReadResponseMiddle;
    h.irn_eth = protocol::IrnEth{w->recv_sn, k};
    protocol::ByteView payload;
    if (w->length > 0) {
      payload = protocol::ByteView(
          w->data + offset,
          static_cast<std::size_t>(std::min<std::uint64_t>(cfg_.mtu, w->length - offset)));
    }
    sink_.send_packet(cfg_.qpn, cfg_.remote_ip, h, payload);
    if (!retransmit_at_) arm_timer(now);
    return;
  }
  if (w->is_read()) {
    h.bth.opcode = op::kIrnReadRequest;
    h.reth = protocol::Reth{w->wr.remote_addr, w->wr.rkey, w->wr.sge.length};
    h.irn_eth = protocol::IrnEth{w->recv_sn, 0};
    sink_.send_packet(cfg_.qpn, cfg_.remote_ip, h, {});
    if (!retransmit_at_) arm_timer(now);
    return;
  }
  if (is_write(w->wr.opcode)) {
    // RETH on every packet: this packet's VA, and the bytes from here to the end of the message.
    h.reth = protocol::Reth{w->wr.remote_addr + offset, w->wr.rkey,
                            static_cast<std::uint32_t>(w->wr.sge.length - offset)};
    if (last && has_imm(w->wr.opcode)) h.irn_eth = protocol::IrnEth{w->recv_sn, k};
  } else {
    h.irn_eth = protocol::IrnEth{w->recv_sn, k};
  }
  if (last && has_imm(w->wr.opcode)) h.immediate = w->wr.imm;
  protocol::ByteView payload;
  if (w->wr.sge.length > 0) {
    payload = protocol::ByteView(w->data + offset, static_cast<std::size_t>(std::min<std::uint64_t>(
                                                       cfg_.mtu, w->wr.sge.length - offset)));
  }
  sink_.send_packet(cfg_.qpn, cfg_.remote_ip, h, payload);
  if (!retransmit_at_) arm_timer(now);
}

void IrnQp::arm_timer(Clock::time_point now) {
  retransmit_at_.reset();
  const auto t = timeout_for(tx_.unsacked());
  if (tx_.in_flight() == 0 || t.count() == 0) return;
  // With wire timers the timer runs only while a packet that left the NIC is unacknowledged
  // (PSNs before wire_next_); until one has, on_wire() arms it.
  if (cfg_.wire_timers && !protocol::psn_after(wire_next_, tx_.una())) return;
  retransmit_at_ = now + t;
}

bool IrnQp::on_wire(std::uint32_t psn, Clock::time_point now) {
  if (!cfg_.wire_timers || error_) return false;
  const std::uint32_t next = (psn + 1) & protocol::kMax24;
  if (protocol::psn_after(next, wire_next_)) wire_next_ = next;
  if (retransmit_at_) return false;
  arm_timer(now);
  return retransmit_at_.has_value();
}

void IrnQp::on_ack(const protocol::PacketView& p, Clock::time_point now) {
  if (p.info->code != op::kIrnAcknowledge) {
    ++counters_.dropped_other;  // READ responses, atomics, go-back-N ACKs: not on an IRN QP
    return;
  }
  const std::uint8_t syndrome = p.headers.aeth->syndrome;
  if (syndrome != protocol::kAethAck && syndrome != protocol::kNakPsnSequenceError) {
    Errc status = Errc::remote_operational_error;
    if (syndrome == protocol::kNakInvalidRequest) status = Errc::remote_invalid_request;
    if (syndrome == protocol::kNakRemoteAccessError) status = Errc::remote_access_error;
    to_error(status);
    return;
  }
  if (syndrome == protocol::kNakPsnSequenceError) ++counters_.seq_naks_received;
  // The RTT sample: the packet this ACK answers (its SACK PSN), if still in flight and sent once.
  const std::uint32_t answered = p.headers.sack_eth->sack_psn;
  if (!sent_at_.empty() && psn_diff(answered, tx_.una()) < tx_.in_flight()) {
    auto& at = sent_at_[answered % sent_at_.size()];
    if (at) {
      rtt_.sample(now - *at);
      ++counters_.rtt_samples;
    }
    at.reset();
  }
  const auto e = tx_.on_ack(p.headers.bth.psn, *p.headers.sack_eth);
  if (!e.valid) {
    ++counters_.dropped_other;
    return;
  }
  if (e.newly_acked != 0) {
    retire();
    retries_left_ = cfg_.retry_count;
    arm_timer(now);
  } else if (retransmit_at_) {
    // SACKs without cumulative progress left at most N packets that can still be acknowledged:
    // RTO_low from now if that fires earlier (docs/protocol.md 8.4).
    const auto low = now + timeout_for(tx_.unsacked());
    if (low < *retransmit_at_) retransmit_at_ = low;
  }
  pump(now);
}

void IrnQp::retire() {
  while (!sq_.empty()) {
    const SendWqe& w = sq_.front();
    if (psn_diff(tx_.una(), w.first_psn) < w.npackets ||
        protocol::psn_after(w.first_psn, tx_.una())) {
      break;  // its last PSN is not acknowledged yet
    }
    if (w.is_read() && !w.read_done) break;  // a READ completes when its responses are all in
    if (w.kind == SendWqe::Kind::posted && w.wr.signaled) {
      WorkCompletion wc;
      wc.wr_id = w.wr.wr_id;
      wc.opcode = w.is_read()             ? WcOpcode::rdma_read
                  : is_write(w.wr.opcode) ? WcOpcode::rdma_write
                                          : WcOpcode::send;
      wc.byte_len = w.wr.sge.length;
      wc.qp_num = cfg_.qpn;
      cq_.push(wc);
    }
    sq_.pop_front();
  }
}

void IrnQp::on_timer(Clock::time_point now) {
  if (error_ || !retransmit_at_ || now < *retransmit_at_) return;
  retransmit_at_.reset();
  if (tx_.in_flight() == 0) return;
  ++counters_.timeouts;
  rtt_.back_off();
  if (retries_left_ == 0) {
    to_error(Errc::retry_exceeded);
    return;
  }
  --retries_left_;
  tx_.on_timeout();
  pump(now);
  arm_timer(now);
}

std::optional<Clock::time_point> IrnQp::next_deadline() const noexcept {
  if (error_) return std::nullopt;
  return retransmit_at_;
}

// ---- Responder ---------------------------------------------------------------------------------

std::error_code IrnQp::post_recv(const RecvWr& wr) {
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

IrnQp::RecvWqe* IrnQp::receive_for(std::uint32_t recv_sn) noexcept {
  const std::uint32_t i = recv_sn - recv_sn_;
  return i < rq_.size() ? &rq_[i] : nullptr;
}

void IrnQp::on_packet(const protocol::PacketView& p, Clock::time_point now) {
  if (error_) return;
  if (p.info->is_response() && !p.info->is_irn_read_response()) {
    on_ack(p, now);
  } else {
    on_request(p, now);  // requests, and READ responses: packets of the peer's stream
  }
}

void IrnQp::fail(std::uint8_t syndrome, std::uint32_t psn, Errc local_status) {
  protocol::PacketHeaders h;
  h.bth.opcode = op::kIrnAcknowledge;
  h.bth.dest_qpn = cfg_.remote_qpn;
  h.bth.psn = psn & protocol::kMax24;
  h.aeth = protocol::Aeth{syndrome, msn_};
  h.sack_eth = protocol::SackEth{0, psn & protocol::kMax24, 0};
  sink_.send_packet(cfg_.qpn, cfg_.remote_ip, h, {});
  to_error(make_error_code(Errc::flushed));
  error_ = local_status;
}

void IrnQp::send_ack(std::uint32_t sack_psn) {
  protocol::PacketHeaders h;
  h.bth.opcode = op::kIrnAcknowledge;
  h.bth.dest_qpn = cfg_.remote_qpn;
  h.bth.psn = rx_.cumulative();
  h.aeth =
      protocol::Aeth{rx_.has_gap() ? protocol::kNakPsnSequenceError : protocol::kAethAck, msn_};
  h.sack_eth = protocol::SackEth{0, sack_psn, rx_.sack_bitmap()};
  sink_.send_packet(cfg_.qpn, cfg_.remote_ip, h, {});
}

void IrnQp::on_request(const protocol::PacketView& p, Clock::time_point now) {
  const protocol::PacketHeaders& h = p.headers;
  const protocol::OpcodeInfo& info = *p.info;
  const std::uint32_t psn = h.bth.psn;
  if (!info.is_irn()) {  // READ, atomics, go-back-N opcodes: not on an IRN QP
    fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
    return;
  }
  switch (rx_.classify(psn)) {
    case protocol::IrnReceiveWindow::Arrival::duplicate:
      ++counters_.duplicates_received;  // never re-executed
      send_ack(psn);
      return;
    case protocol::IrnReceiveWindow::Arrival::beyond:
      ++irn_.dropped_beyond_bitmap;
      ++counters_.dropped_out_of_order;
      return;
    case protocol::IrnReceiveWindow::Arrival::fresh:
      break;
  }
  const std::size_t len = p.payload.size();
  const bool last = info.ends_message();
  if (len > cfg_.mtu || (!last && len != cfg_.mtu)) {
    fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
    return;
  }
  if (info.kind == protocol::OpKind::rdma_read_request ||
      info.kind == protocol::OpKind::rdma_read_response) {
    if (!(info.kind == protocol::OpKind::rdma_read_request ? on_read_request(p)
                                                           : on_read_response(p))) {
      return;
    }
  } else if (!place(p)) {
    return;
  }
  rx_.mark(psn, last);
  rx_.advance([&](std::uint32_t q, bool is_last) {
    if (is_last && !error_) complete(q);
  });
  if (error_) return;
  // Coalesced ACKs, when negotiated (docs/protocol.md 8.2; the wall clock only).
  if (!(caps_.coalesced_acks() && !h.bth.ack_req && rx_.in_order(psn))) send_ack(psn);
  retire();   // a READ whose last response arrived
  pump(now);  // responses of a READ that executed, and what the READ depth held back
}

// SEND and WRITE packets: placed at once (docs/protocol.md 8.3).
bool IrnQp::place(const protocol::PacketView& p) {
  const protocol::PacketHeaders& h = p.headers;
  const protocol::OpcodeInfo& info = *p.info;
  const std::uint32_t psn = h.bth.psn;
  const std::size_t len = p.payload.size();
  const bool last = info.ends_message();
  Pending done;
  done.psn = psn;
  done.imm = h.immediate;
  done.solicited = h.bth.solicited_event;
  if (h.irn_eth) done.recv_sn = h.irn_eth->recv_wqe_sn;
  if (info.kind == protocol::OpKind::rdma_write) {
    const protocol::Reth& r = *h.reth;
    if (last ? len != r.dma_length : r.dma_length <= len) {
      fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
      return false;
    }
    if (h.immediate && receive_for(done.recv_sn) == nullptr) {
      ++irn_.dropped_no_receive;  // the requester's timer sends it again
      ++counters_.dropped_other;
      return false;
    }
    if (len > 0) {
      std::uint8_t* dst = mrs_.remote(r.rkey, r.va, len, Access::remote_write);
      if (dst == nullptr) {
        fail(protocol::kNakRemoteAccessError, psn, Errc::remote_access_error);
        return false;
      }
      std::memcpy(dst, p.payload.data(), len);
      mrs_.count_written(r.rkey, len);
    }
    done.opcode = WcOpcode::recv_rdma_with_imm;
    // The WRITE's DMA length, as a go-back-N completion reports it: packet offset x MTU + bytes.
    done.byte_len = static_cast<std::uint32_t>(
        std::uint64_t{h.irn_eth ? h.irn_eth->packet_offset : 0} * cfg_.mtu + len);
  } else {
    RecvWqe* rw = receive_for(done.recv_sn);
    if (rw == nullptr) {
      ++irn_.dropped_no_receive;
      ++counters_.dropped_other;
      return false;
    }
    const std::uint64_t at = std::uint64_t{h.irn_eth->packet_offset} * cfg_.mtu;
    if (at + len > rw->wr.sge.length) {
      fail(protocol::kNakInvalidRequest, psn, Errc::local_length_error);
      return false;
    }
    if (len > 0) {
      std::memcpy(rw->data + at, p.payload.data(), len);
      mrs_.count_written(rw->wr.sge.lkey, len);
    }
    done.opcode = WcOpcode::recv;
    done.byte_len = static_cast<std::uint32_t>(at + len);
  }
  if (last && (info.kind == protocol::OpKind::send || h.immediate)) insert_pending(done);
  return true;
}

void IrnQp::insert_pending(const Pending& done) {
  auto at = std::find_if(pending_.begin(), pending_.end(),
                         [&](const Pending& q) { return protocol::psn_after(q.psn, done.psn); });
  pending_.insert(at, done);
  if (rx_.epsn() != done.psn) ++irn_.completions_deferred;
}

// Every packet up to `psn`, the last of a message, has arrived: MSN, and the receive completion
// for a SEND or WRITE_WITH_IMM (IRN 5.3.3).
void IrnQp::complete(std::uint32_t psn) {
  const bool has = !pending_.empty() && pending_.front().psn == psn;
  if (has && pending_.front().kind == Pending::Kind::read_response) {
    // Our READ's last response, and every packet before it: the READ is answered in full (not a
    // message of the peer's to count in our MSN).
    const Pending done = pending_.front();
    pending_.pop_front();
    if (SendWqe* r = read_wqe(done.recv_sn); r != nullptr && !r->read_done) {
      r->read_done = true;
      if (reads_in_flight_ > 0) --reads_in_flight_;
    }
    return;
  }
  msn_ = psn_add(msn_, 1);
  if (!has) return;  // a plain WRITE
  const Pending done = pending_.front();
  pending_.pop_front();
  if (done.kind == Pending::Kind::read_request) {
    execute_read(done);
    return;
  }
  if (rq_.empty() || done.recv_sn != recv_sn_) {  // receives are consumed in posting order
    fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
    return;
  }
  const RecvWqe r = rq_.front();
  rq_.pop_front();
  ++recv_sn_;
  WorkCompletion wc;
  wc.wr_id = r.wr.wr_id;
  wc.opcode = done.opcode;
  wc.byte_len = done.byte_len;
  wc.imm = done.imm;
  wc.solicited = done.solicited;
  wc.qp_num = cfg_.qpn;
  cq_.push(wc);
}

void IrnQp::to_error(std::error_code status) {
  if (error_) return;
  error_ = status ? status : make_error_code(Errc::flushed);
  // The responses we owe the peer are not work requests of ours: nothing to complete.
  std::erase_if(sq_, [](const SendWqe& w) { return w.kind != SendWqe::Kind::posted; });
  cq_.flush(sq_, rq_, error_, cfg_.qpn, [](const SendWqe& w) {
    return w.is_read()             ? WcOpcode::rdma_read
           : is_write(w.wr.opcode) ? WcOpcode::rdma_write
                                   : WcOpcode::send;
  });
  retransmit_at_.reset();
}

std::size_t IrnQp::poll(std::span<WorkCompletion> out) {
  return cq_.poll(out);
}

}  // namespace naa::host::detail
