#include "naa/sim/transport.hpp"

#include <algorithm>
#include <cstring>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/sim/cm_agent.hpp"
#include "naa/sim/kernel_engine.hpp"
#include "naa/sim/mr_table.hpp"
#include "naa/sim/mrsp_handler.hpp"
#include "naa/sim/tx_pipe.hpp"

namespace naa::sim {
namespace {

namespace op = protocol::opcode;
using protocol::psn_add;
using protocol::psn_after;
using protocol::psn_diff;

constexpr std::uint32_t kMaxUnackedPsns = 128;  // PROTOCOL.md 3
constexpr std::uint32_t kAckReqEvery = 64;

std::uint32_t packets_for(std::size_t len, std::uint32_t mtu) {
  return len == 0 ? 1U : static_cast<std::uint32_t>((len + mtu - 1) / mtu);
}

}  // namespace

Transport::Transport(sc_core::sc_module_name name, ModelContext& ctx)
    : sc_module(name),
      mem("mem"),
      ctx_(ctx),
      in_(64),
      rx_meter_(ctx.cfg),
      tx_meter_(ctx.cfg),
      drops_({"unknown_qp", "wrong_peer", "qp_error", "out_of_order", "mtu_exceeded",
              "unexpected_response", "stale_ack"}),
      naks_({"sequence", "invalid_request", "remote_access", "rnr"}) {
  scratch_.resize(kMaxDatagram);
  timer_fired_.reserve(256);
  SC_THREAD(rx_thread);
  SC_THREAD(tx_thread);
}

std::uint32_t Transport::qp_index(const Qp& qp) const {
  return static_cast<std::uint32_t>(&qp - ctx_.qps.data());
}

void Transport::init_qp(Qp& qp, std::uint32_t send_psn, std::uint32_t recv_psn) {
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

void Transport::post_send(Qp& qp, SendWqe wqe) {
  wqe.packets = packets_for(wqe.data.size(), qp.mtu);
  wqe.first_psn = qp.psn_tail;
  qp.psn_tail = psn_add(qp.psn_tail, wqe.packets);
  qp.sq.push_back(std::move(wqe));
  tx_work_.notify(sc_core::SC_ZERO_TIME);
}

void Transport::repost_receive(Qp& qp) {
  qp.recv_posted = true;
}

void Transport::on_peer_timer(std::uint32_t cookie) {
  timer_fired_.push_back(cookie);
  tx_work_.notify(sc_core::SC_ZERO_TIME);
}

// ---------------------------------------------------------------------------------------------
// Receive side

void Transport::rx_thread() {
  for (;;) {
    Packet* p = in_.get();
    rx_meter_.spend(SimConfig::stage_cycles(p->size, ctx_.cfg.width, ctx_.cfg.transport_latency));
    const auto v = protocol::decode_packet(p->bytes());  // RxPipe validated it
    ++rx_packets_;
    Qp* qp = v ? ctx_.find_qp(v->headers.bth.dest_qpn) : nullptr;
    if (qp == nullptr) {
      drop(TransportDrop::unknown_qp);
    } else if (p->peer_ip != qp->peer_ip) {
      drop(TransportDrop::wrong_peer);
    } else if (qp->state == QpState::error) {
      drop(TransportDrop::qp_error);
    } else {
      qp->last_heard = sc_core::sc_time_stamp();  // the peer is alive (idle liveness)
      if (v->info->is_response()) {
        requester_rx(*qp, *v);
      } else {
        // The first valid data packet also counts as RTU (PROTOCOL.md 4).
        if (qp->state == QpState::rtr) ctx_.blocks.cm->established_by_data(*qp);
        responder(*qp, p, *v);
      }
    }
    ctx_.pool.put(p);
  }
}

void Transport::responder(Qp& qp, Packet* /*p*/, const protocol::PacketView& v) {
  const protocol::Bth& bth = v.headers.bth;
  const protocol::OpcodeInfo& info = *v.info;
  const std::uint32_t psn = bth.psn;
  rx_payload_bytes_ += v.payload.size();

  if (psn != qp.epsn) {
    if (psn_after(psn, qp.epsn)) {
      // Out of order: one NAK "PSN sequence error" carrying ePSN, then silence (PROTOCOL.md 3).
      if (!qp.nak_sequence_sent) {
        qp.nak_sequence_sent = true;
        naks_.add(static_cast<std::size_t>(NakSent::sequence));
        send_ack(qp, qp.epsn, protocol::kNakPsnSequenceError);
      } else {
        drop(TransportDrop::out_of_order);
      }
      return;
    }
    // Duplicate: never re-executed; a READ is replayed, anything else re-ACKed with the last
    // acknowledged PSN. A duplicate WRITE_WITH_IMM therefore never re-dispatches a kernel.
    ++duplicates_;
    if (info.kind == protocol::OpKind::rdma_read_request && qp.reads_allowed) {
      const protocol::Reth& r = *v.headers.reth;
      if (r.dma_length == 0 ||
          ctx_.blocks.mr->check(r.rkey, r.va, r.dma_length, kMrRemoteRead, qp.qpn) == MrCheck::ok) {
        qp.reads.push_back(ReadJob{r.va, r.dma_length, psn, packets_for(r.dma_length, qp.mtu), 0});
        tx_work_.notify(sc_core::SC_ZERO_TIME);
      }
      return;
    }
    send_ack(qp, psn_add(qp.epsn, protocol::kMax24), protocol::kAethAck);
    return;
  }
  qp.nak_sequence_sent = false;

  // Opcode sequence (IBTA 9.7.5.1.4): inside a message only MIDDLE/LAST of the same kind.
  const bool continuing = qp.in_message != Qp::InMessage::none;
  const auto kind_of_message =
      qp.in_message == Qp::InMessage::send ? protocol::OpKind::send : protocol::OpKind::rdma_write;
  if (continuing ? (info.kind != kind_of_message || info.starts_message())
                 : !info.starts_message()) {
    fatal_nak(qp, psn, protocol::kNakInvalidRequest);
    return;
  }
  const std::size_t len = v.payload.size();
  if (len > qp.mtu) {
    drop(TransportDrop::mtu_exceeded);
    fatal_nak(qp, psn, protocol::kNakInvalidRequest);
    return;
  }
  if (!info.ends_message() && len != qp.mtu) {  // FIRST/MIDDLE carry exactly one MTU
    fatal_nak(qp, psn, protocol::kNakInvalidRequest);
    return;
  }

  switch (info.kind) {
    case protocol::OpKind::send: {
      if (info.starts_message()) {
        if (!qp.recv_posted) {  // no receive buffer: RNR NAK, no state change
          naks_.add(static_cast<std::size_t>(NakSent::rnr));
          send_ack(qp, psn, protocol::rnr_nak_syndrome(ctx_.cfg.rnr_timer_code));
          return;
        }
        qp.recv_len = 0;
        qp.in_message = Qp::InMessage::send;
        // Kept for the QP table entry's later connections (bounded by --qps): freeing it at
        // release could pull it from under an MRSP request still being decoded.
        if (qp.recv_buf.size() != protocol::kMrspMaxMessageSize) {
          qp.recv_buf.assign(protocol::kMrspMaxMessageSize, 0);
        }
      }
      if (qp.recv_len + len > qp.recv_buf.size()) {  // over-long message
        fatal_nak(qp, psn, protocol::kNakInvalidRequest);
        return;
      }
      if (len != 0) std::memcpy(qp.recv_buf.data() + qp.recv_len, v.payload.data(), len);
      qp.recv_len += len;
      if (info.ends_message()) {
        qp.in_message = Qp::InMessage::none;
        qp.recv_posted = false;
        qp.msn = psn_add(qp.msn, 1);
        ctx_.blocks.mrsp->deliver(qp);
      }
      break;
    }
    case protocol::OpKind::rdma_write: {
      if (info.starts_message()) {
        const protocol::Reth& r = *v.headers.reth;
        // Zero-length writes skip the R_Key check (IBTA); otherwise the whole DMA length is
        // checked up front, so a failure writes nothing.
        if (r.dma_length != 0) {
          const MrCheck c =
              ctx_.blocks.mr->check(r.rkey, r.va, r.dma_length, kMrRemoteWrite, qp.qpn);
          if (c != MrCheck::ok) {
            fatal_nak(qp, psn, protocol::kNakRemoteAccessError);
            return;
          }
        }
        qp.write_va = r.va;
        qp.write_remaining = r.dma_length;
      }
      if (len > qp.write_remaining || (info.ends_message() && len != qp.write_remaining)) {
        fatal_nak(qp, psn, protocol::kNakInvalidRequest);  // longer or shorter than the RETH said
        return;
      }
      if (v.headers.immediate && !ctx_.blocks.kernels->can_accept(qp)) {
        naks_.add(static_cast<std::size_t>(NakSent::rnr));
        send_ack(qp, psn, protocol::rnr_nak_syndrome(ctx_.cfg.rnr_timer_code));
        return;  // ePSN unchanged: the peer retries this packet
      }
      qp.in_message = Qp::InMessage::write;
      const std::uint32_t gen = qp.generation;
      wait_posted_write();
      if (qp.generation != gen || qp.state == QpState::free) return;  // released meanwhile
      if (len != 0 && !post_write(qp.write_va, v.payload.data(), len)) {
        model_fatal(name(), "memory write outside the memory passed the MR check");
      }
      qp.write_va += len;
      qp.write_remaining -= len;
      if (info.ends_message()) {
        qp.in_message = Qp::InMessage::none;
        qp.msn = psn_add(qp.msn, 1);
        if (v.headers.immediate) ctx_.blocks.kernels->post_call(qp, *v.headers.immediate);
      }
      break;
    }
    case protocol::OpKind::rdma_read_request: {
      const protocol::Reth& r = *v.headers.reth;
      if (!qp.reads_allowed) {  // initiator depth 0 was granted
        fatal_nak(qp, psn, protocol::kNakInvalidRequest);
        return;
      }
      if (r.dma_length != 0 &&
          ctx_.blocks.mr->check(r.rkey, r.va, r.dma_length, kMrRemoteRead, qp.qpn) != MrCheck::ok) {
        fatal_nak(qp, psn, protocol::kNakRemoteAccessError);
        return;
      }
      const std::uint32_t n = packets_for(r.dma_length, qp.mtu);
      ++reads_;
      qp.msn = psn_add(qp.msn, 1);
      qp.reads.push_back(ReadJob{r.va, r.dma_length, psn, n, 0});
      qp.epsn = psn_add(psn, n);
      tx_work_.notify(sc_core::SC_ZERO_TIME);
      return;  // READ RESPONSEs carry the AETH
    }
    default:  // atomics and anything else: not supported
      fatal_nak(qp, psn, protocol::kNakInvalidRequest);
      return;
  }
  qp.epsn = psn_add(psn, 1);
  if (bth.ack_req) send_ack(qp, psn, protocol::kAethAck);
}

// A NIC's RX path hands payload to a write buffer and goes on; waiting for each DDR write to
// complete would serialise RX processing and the DDR access and cap a stream near half line rate.
// One write may be in flight while the next packet is processed. Ordering is kept by the single
// memory channel: a later read (KernelEngine) starts only after every earlier write completed.
void Transport::wait_posted_write() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (write_done_ <= now) return;
  const sc_core::sc_time d = write_done_ - now;
  rx_meter_.account(static_cast<std::uint64_t>(d / rx_meter_.cycle() + 0.5));
  sc_core::wait(d);
}

bool Transport::post_write(std::uint64_t addr, const std::uint8_t* data, std::uint64_t len) {
  tlm::tlm_generic_payload trans;
  trans.set_command(tlm::TLM_WRITE_COMMAND);
  trans.set_address(addr);
  // TLM's payload pointer is non-const; a write never modifies it.
  trans.set_data_ptr(const_cast<std::uint8_t*>(data));
  trans.set_data_length(static_cast<unsigned int>(len));
  trans.set_streaming_width(static_cast<unsigned int>(len));
  trans.set_byte_enable_ptr(nullptr);
  trans.set_dmi_allowed(false);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  mem.socket->b_transport(trans, delay);
  write_done_ = sc_core::sc_time_stamp() + delay;
  return trans.is_response_ok();
}

void Transport::send_ack(Qp& qp, std::uint32_t psn, std::uint8_t syndrome) {
  Packet* p = ctx_.pool.get();
  protocol::PacketHeaders h;
  h.bth.opcode = op::kAcknowledge;
  h.bth.dest_qpn = qp.peer_qpn;
  h.bth.psn = psn;
  h.aeth = protocol::Aeth{syndrome, qp.msn};
  const auto n = protocol::encode_packet(h, {}, {p->data.data(), p->data.size()});
  if (!n) model_fatal(name(), "cannot encode an ACK");
  p->size = *n;
  p->peer_ip = qp.peer_ip;
  p->src_qpn = qp.qpn;
  ++acks_sent_;
  ctx_.blocks.tx->input().put(p);
}

void Transport::fatal_nak(Qp& qp, std::uint32_t psn, std::uint8_t syndrome) {
  naks_.add(static_cast<std::size_t>(syndrome == protocol::kNakRemoteAccessError
                                         ? NakSent::remote_access
                                         : NakSent::invalid_request));
  send_ack(qp, psn, syndrome);
  qp_error(qp,
           syndrome == protocol::kNakRemoteAccessError ? "remote access error" : "invalid request");
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
  ctx_.blocks.cm->on_qp_error(qp);
}

// ---------------------------------------------------------------------------------------------
// Requester: ACK/NAK processing

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
    qp.sq.pop_front();
    ++messages_completed_;
  }
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

// ---------------------------------------------------------------------------------------------
// Transmit side: the NAA's own messages and READ responses, round-robin over QPs

void Transport::tx_thread() {
  // A member, not a local: a SystemC thread's stack is never unwound at the end of simulation.
  std::vector<std::uint32_t>& fired = fired_scratch_;
  fired.reserve(256);
  for (;;) {
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

    bool sent = false;
    const std::size_t n = ctx_.qps.size();
    for (std::size_t k = 0; k < n && !sent; ++k) {
      const std::size_t i = (rr_ + k) % n;
      Qp& qp = ctx_.qps[i];
      if (qp.state != QpState::rts) continue;
      sent = (!qp.reads.empty() && send_read_response(qp)) || send_next_packet(qp);
      if (sent) rr_ = i + 1;
    }
    if (!sent && timer_fired_.empty()) sc_core::wait(tx_work_);
  }
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
  ctx_.blocks.tx->input().put(p);
  return true;
}

bool Transport::send_read_response(Qp& qp) {
  const ReadJob job = qp.reads.front();
  const std::uint32_t gen = qp.generation;
  const std::uint32_t i = job.next;
  const bool first = i == 0;
  const bool last = i + 1 == job.packets;
  protocol::PacketHeaders h;
  h.bth.opcode = (first && last) ? op::kReadResponseOnly
                 : first         ? op::kReadResponseFirst
                 : last          ? op::kReadResponseLast
                                 : op::kReadResponseMiddle;
  if (first || last) h.aeth = protocol::Aeth{protocol::kAethAck, qp.msn};
  h.bth.dest_qpn = qp.peer_qpn;
  h.bth.psn = psn_add(job.first_psn, i);
  const std::uint64_t begin = std::uint64_t{i} * qp.mtu;
  const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(qp.mtu, job.length - begin));
  if (len != 0 && !mem.read(job.va + begin, scratch_.data(), len, tx_meter_)) {
    model_fatal(name(), "memory read outside the memory passed the MR check");
  }
  if (qp.generation != gen || qp.state != QpState::rts || qp.reads.empty()) return true;
  Packet* p = ctx_.pool.get();
  const auto n =
      protocol::encode_packet(h, {scratch_.data(), len}, {p->data.data(), p->data.size()});
  if (!n) model_fatal(name(), "cannot encode a READ response");
  p->size = *n;
  p->peer_ip = qp.peer_ip;
  p->src_qpn = qp.qpn;
  if (++qp.reads.front().next == job.packets) qp.reads.pop_front();
  ++tx_packets_;
  tx_payload_bytes_ += len;
  tx_meter_.spend(SimConfig::stage_cycles(p->size, ctx_.cfg.width, ctx_.cfg.transport_latency));
  ctx_.blocks.tx->input().put(p);
  return true;
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
     << "transport.drops=" << drops_.total() << '\n';
  naks_.report(os, "transport.nak_sent.");
  drops_.report(os, "transport.drop.");
}

}  // namespace naa::sim
