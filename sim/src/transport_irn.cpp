// Transport, IRN (docs/protocol.md "IRN"; seed 001): the second RC implementation, used on a QP
// whose CM exchange negotiated IRN.
// Responder: out-of-order placement tracked by the 2-bitmap (protocol::IrnReceiveWindow) sized
//   at the BDP cap; every WRITE packet carries its RETH, every SEND packet its recv_WQE_SN and
//   offset, so each packet is placed on arrival; a message completes (MSN, MRSP delivery, kernel
//   dispatch) only when every packet up to its last has arrived; duplicates are never re-executed;
//   packets beyond the bitmap are dropped and counted; every packet is answered by an IRN ACK with
//   the cumulative PSN and a SACK. WRITE packets into a STREAM region go to the HandlerEngine
//   instead of Memory, the first of each message to arrive starting it there (docs/protocol.md
//   8.3 "Streaming on IRN").
// Requester: BDP flow control (at most bdp_cap PSNs after the cumulative ACK), selective
//   retransmission of the PSNs the SACKs show lost, RTO_low / RTO_high (protocol::IrnSendWindow).
// READ (docs/protocol.md 8.5; seed 001 "Supporting RDMA Reads"): a READ request (read_WQE_SN)
//   executes when every packet before it has arrived; its responses go on the NAA's own send
//   stream (SendWqe::Op::read_response), so the requester's selective repeat, BDP cap and
//   timers above carry and retransmit them; the host's IRN ACKs are the read (N)ACKs. Atomics
//   are not supported (NAK 0x61).
#include <algorithm>
#include <cstring>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/sim/sim_time.hpp"
#include "naa/sim/transport.hpp"

namespace naa::sim {
namespace {

namespace op = protocol::opcode;
using protocol::psn_add;
using protocol::psn_diff;

// A fresh packet of a STREAM region, which the engine has room for: does it start its message
// at the handlers? sPIN (seed 004 B.3) runs a message's header handler once, before any of its
// payload handlers; packets here arrive in any order, so the first packet of the message to
// arrive, whatever its offset, runs it (the header handler sees the region, not the packet). The
// message is named by its last PSN, which every packet knows from its RETH: DMA length = bytes
// from this packet to the end of the message.
bool irn_stream_message_start(Qp& qp, std::uint32_t psn, const protocol::Reth& r) {
  const std::uint64_t rest =
      std::max<std::uint64_t>(1, (std::uint64_t{r.dma_length} + qp.mtu - 1) / qp.mtu);
  const std::uint32_t last = psn_add(psn, static_cast<std::uint32_t>(rest - 1));
  if (std::find(qp.irn_stream_headers.begin(), qp.irn_stream_headers.end(), last) !=
      qp.irn_stream_headers.end()) {
    return false;
  }
  qp.irn_stream_headers.push_back(last);
  return true;
}

// Transport::irn_retransmit_ns, with internal linkage so that irn_arm_retransmit inlines it (a
// member with external linkage is not inlined here; issue 31).
std::uint64_t retransmit_ns(const protocol::CapabilityBlock& caps,
                            const protocol::IrnSendWindow& w) noexcept {
  // Nothing in flight (the ACK of a call's last packet): no timer, without counting the unSACKed
  // PSNs (issue 31). irn_timeout_ns asks only whether they are at most low_threshold, and they
  // are never more than those in flight: with at most that many in flight (a call's one
  // write-back packet) RTO_low is chosen without counting them either (issue 31).
  const std::uint32_t in_flight = w.in_flight();
  if (in_flight == 0) return 0;
  return protocol::irn_timeout_ns(caps, in_flight <= caps.low_threshold ? in_flight : w.unsacked());
}

}  // namespace

void Transport::irn_init(Qp& qp) {
  qp.irn_rx.reset(qp.epsn, qp.irn_caps.bdp_cap);
  qp.irn_tx.reset(qp.psn_send, qp.irn_caps.bdp_cap);
  qp.irn_recv_sn = 0;
  qp.irn_send_sn = 0;
  qp.irn_read_sn = 0;
  qp.irn_pending.clear();
  qp.irn_stream_headers.clear();
  qp.irn_send_bytes = 0;
}

// ---------------------------------------------------------------------------------------------
// Responder

void Transport::irn_responder(Qp& qp, const protocol::PacketView& v) {
  const protocol::OpcodeInfo& info = *v.info;
  const std::uint32_t psn = v.headers.bth.psn;
  const std::size_t len = v.payload.size();
  rx_payload_bytes_ += len;
  if (!info.is_irn()) {  // a standard opcode (READ, atomics, ...) on an IRN QP
    fatal_nak(qp, psn, protocol::kNakInvalidRequest);
    return;
  }
  switch (qp.irn_rx.classify(psn)) {
    case protocol::IrnReceiveWindow::Arrival::duplicate:
      ++duplicates_;  // never re-executed: the ACK tells the requester it arrived
      irn_send_ack(qp, psn);
      return;
    case protocol::IrnReceiveWindow::Arrival::beyond:
      drop(TransportDrop::irn_beyond_bitmap);
      return;
    case protocol::IrnReceiveWindow::Arrival::fresh:
      break;
  }
  if (len > qp.mtu || (!info.ends_message() && len != qp.mtu)) {
    if (len > qp.mtu) drop(TransportDrop::mtu_exceeded);
    fatal_nak(qp, psn, protocol::kNakInvalidRequest);
    return;
  }
  Qp::IrnPending done;
  done.psn = psn;
  done.send = info.kind == protocol::OpKind::send;
  done.imm = v.headers.immediate;
  if (info.kind == protocol::OpKind::rdma_read_request) {
    // Checked now (a bad READ fails at once, as on go-back-N), executed in order (irn_complete).
    const protocol::Reth& r = *v.headers.reth;
    if (!read_allowed(qp, psn, r)) return;
    done.read = true;
    done.read_va = r.va;
    done.read_length = r.dma_length;
    done.recv_sn = v.headers.irn_eth->recv_wqe_sn;  // read_WQE_SN
  } else if (info.kind != protocol::OpKind::send && info.kind != protocol::OpKind::rdma_write) {
    fatal_nak(qp, psn, protocol::kNakInvalidRequest);  // an IRN READ response: we never read
    return;
  } else if (info.kind == protocol::OpKind::rdma_write) {
    // RETH on every packet: VA of this packet's first byte, DMA length = bytes from here to the
    // end of the message (docs/protocol.md "IRN: packets").
    const protocol::Reth& r = *v.headers.reth;
    const bool shape_ok = info.ends_message() ? len == r.dma_length : r.dma_length > len;
    if (!shape_ok) {
      fatal_nak(qp, psn, protocol::kNakInvalidRequest);
      return;
    }
    if (len != 0 && access->check(r.rkey, r.va, len, kMrRemoteWrite, qp.qpn) != MrCheck::ok) {
      fatal_nak(qp, psn, protocol::kNakRemoteAccessError);
      return;
    }
    if (v.headers.immediate) {
      // A call may wait in irn_pending for its gap: accept a second only when the lane has room
      // for both. Otherwise drop (counted); the requester's timer sends it again.
      // (Empty in the common case: no deque iteration then; issue 31.)
      const bool other_pending =
          !qp.irn_pending.empty() &&
          std::any_of(qp.irn_pending.begin(), qp.irn_pending.end(),
                      [](const Qp::IrnPending& p) { return !p.send && p.imm.has_value(); });
      if (!calls->can_accept(qp) || other_pending) {
        drop(TransportDrop::irn_no_receive);
        return;
      }
    }
    // A STREAM region's payload goes to the handlers, not to Memory (docs/protocol.md 8.3
    // "Streaming on IRN"). Flow control: with no HPU and no HPU memory free the packet is dropped
    // unmarked (counted as handler.rnr_naks) and selective retransmission resends it; IRN has no
    // RNR NAK.
    const bool streamed = len != 0 && streams.size() != 0 && streams->streams(qp, r.va);
    if (streamed) {
      if (!streams->can_take(qp, len)) return;
      streams->take(qp, r.va, v.payload, irn_stream_message_start(qp, psn, r));
    } else {
      const std::uint32_t gen = qp.generation;
      wait_posted_write();
      if (qp.generation != gen || qp.state == QpState::free) return;  // released meanwhile
      if (len != 0 && !post_write(r.va, v.payload.data(), len)) {
        model_fatal(name(), "memory write outside the memory passed the MR check");
      }
    }
  } else {
    // SEND: the MRSP receive buffer; recv_WQE_SN names the receive (checked at completion),
    // the packet offset says where the payload goes.
    if (!qp.recv_posted) {
      drop(TransportDrop::irn_no_receive);
      return;
    }
    if (qp.recv_buf.size() != protocol::kMrspMaxMessageSize) {
      qp.recv_buf.assign(protocol::kMrspMaxMessageSize, 0);
    }
    const std::uint64_t at = std::uint64_t{v.headers.irn_eth->packet_offset} * qp.mtu;
    if (at + len > qp.recv_buf.size()) {  // over-long message
      fatal_nak(qp, psn, protocol::kNakInvalidRequest);
      return;
    }
    if (len != 0) std::memcpy(qp.recv_buf.data() + at, v.payload.data(), len);
    done.send_len = static_cast<std::uint32_t>(at + len);
  }
  if (info.ends_message()) {
    if (v.headers.irn_eth && !done.read) done.recv_sn = v.headers.irn_eth->recv_wqe_sn;
    // Keep irn_pending in PSN order (the last packets may arrive in any order). At the end as
    // push_back: std::deque::insert at begin() == end() pushes at the front, allocating a node
    // per message when the deque empties between messages (issue 31). In order (empty, or
    // after the last one: the common case) without a search.
    if (qp.irn_pending.empty() || !protocol::psn_after(qp.irn_pending.back().psn, psn)) {
      qp.irn_pending.push_back(done);
    } else {
      auto at =
          std::find_if(qp.irn_pending.begin(), qp.irn_pending.end(),
                       [&](const Qp::IrnPending& p) { return protocol::psn_after(p.psn, psn); });
      qp.irn_pending.insert(at, done);
    }
  }
  qp.irn_rx.mark(psn, info.ends_message());
  const std::uint32_t gen = qp.generation;
  qp.irn_rx.advance([&](std::uint32_t p, bool last) {
    if (!last) return;
    if (!qp.irn_stream_headers.empty()) std::erase(qp.irn_stream_headers, p);
    if (qp.generation == gen && qp.state != QpState::error) irn_complete(qp, p);
  });
  if (qp.generation != gen || qp.state == QpState::free || qp.state == QpState::error) return;
  qp.epsn = qp.irn_rx.epsn();
  // Coalesced ACKs, when the host offered them (docs/protocol.md 8.2): in simulated time the
  // host never does, so every packet is answered as the IRN paper's.
  if (qp.irn_caps.coalesced_acks() && !v.headers.bth.ack_req && qp.irn_rx.in_order(psn)) return;
  irn_send_ack(qp, psn);
}

// Every packet up to `psn`, the last of a message, has arrived: the message completes now
// (IRN 5.3.3: MSN, receive WQE expiry and CQE only then).
void Transport::irn_complete(Qp& qp, std::uint32_t psn) {
  qp.msn = psn_add(qp.msn, 1);
  if (qp.irn_pending.empty() || qp.irn_pending.front().psn != psn) return;  // a plain WRITE
  const Qp::IrnPending done = qp.irn_pending.front();
  qp.irn_pending.pop_front();
  if (done.read) {
    irn_execute_read(qp, done);
    return;
  }
  // recv_WQE_SN names the receive this message consumes: receives are consumed in the order they
  // were posted (IRN 5.3.2), so it must be the next one.
  if ((done.send || done.imm) && done.recv_sn != qp.irn_recv_sn) {
    fatal_nak(qp, psn, protocol::kNakInvalidRequest);
    return;
  }
  if (done.send) {
    ++qp.irn_recv_sn;
    qp.recv_posted = false;
    qp.recv_len = done.send_len;
    messages->deliver(qp);
  } else if (done.imm) {
    ++qp.irn_recv_sn;
    // A streaming call completes only now, after every packet of it was taken by the handlers
    // (each is marked arrived only then); the engine runs the completion handler after them.
    if (streams.size() != 0 && streams->owns_calls(qp)) {
      streams->complete(qp, *done.imm);
    } else {
      calls->post_call(qp, *done.imm);
    }
  }
}

// A READ request whose predecessors have all arrived: its responses join our send stream
// (docs/protocol.md 8.5), behind whatever the NAA queued before.
void Transport::irn_execute_read(Qp& qp, const Qp::IrnPending& r) {
  if (r.recv_sn != qp.irn_read_sn) {  // READs execute in the order they were posted
    fatal_nak(qp, r.psn, protocol::kNakInvalidRequest);
    return;
  }
  ++qp.irn_read_sn;
  ++reads_;
  SendWqe w;
  w.op = SendWqe::Op::read_response;
  w.remote_va = r.read_va;
  w.read_length = r.read_length;
  w.irn_recv_sn = r.recv_sn;
  w.packets = packets_for(r.read_length, qp.mtu);
  w.first_psn = qp.psn_tail;
  qp.psn_tail = psn_add(qp.psn_tail, w.packets);
  qp.sq.push_back(std::move(w));
  tx_work_.notify(sc_core::SC_ZERO_TIME);
}

void Transport::irn_send_ack(Qp& qp, std::uint32_t sack_psn) {
  Packet* p = ctx_.pool.get();
  // Every IRN ACK has the same headers but for these fields: one kept PacketHeaders (the BTH's
  // other fields at their defaults, only the AETH and SACK ETH ever engaged) instead of a new
  // one zeroed per ACK (issue 31).
  protocol::PacketHeaders& h = irn_ack_headers_;
  h.bth.opcode = op::kIrnAcknowledge;
  h.bth.dest_qpn = qp.peer_qpn;
  h.bth.psn = qp.irn_rx.cumulative();
  // NAK "sequence error" while a hole remains, so a go-back-N reading of the AETH is not wrong.
  h.aeth = protocol::Aeth{qp.irn_rx.has_gap() ? protocol::kNakPsnSequenceError : protocol::kAethAck,
                          qp.msn};
  h.sack_eth = protocol::SackEth{0, sack_psn, qp.irn_rx.sack_bitmap()};
  const auto n = protocol::encode_packet(h, {}, {p->data.data(), p->data.size()});
  if (!n) model_fatal(name(), "cannot encode an IRN ACK");
  p->size = *n;
  p->peer_ip = qp.peer_ip;
  p->src_qpn = qp.qpn;
  ++acks_sent_;
  ++irn_acks_sent_;
  to_tx->put(p);
}

// ---------------------------------------------------------------------------------------------
// Requester

void Transport::irn_requester_rx(Qp& qp, const protocol::PacketView& v) {
  if (v.info->code != op::kIrnAcknowledge) {
    drop(TransportDrop::unexpected_response);
    return;
  }
  const std::uint8_t syndrome = v.headers.aeth->syndrome;
  ++acks_received_;
  if (syndrome != protocol::kAethAck && syndrome != protocol::kNakPsnSequenceError) {
    ++naks_received_;
    ++completion_errors_;
    qp_error(qp, "NAK from the peer");
    return;
  }
  ++irn_sacks_received_;
  const auto e = qp.irn_tx.on_ack(v.headers.bth.psn, *v.headers.sack_eth);
  if (!e.valid) {
    drop(TransportDrop::stale_ack);
    return;
  }
  qp.psn_una = qp.irn_tx.una();
  if (e.newly_acked != 0) {
    while (!qp.sq.empty()) {
      const SendWqe& w = qp.sq.front();
      if (psn_diff(qp.psn_una, w.first_psn) < w.packets) break;  // its last PSN not yet acked
      if (protocol::psn_after(w.first_psn, qp.psn_una)) break;
      if (w.op != SendWqe::Op::read_response) ++messages_completed_;
      keep_payload_buffer(qp.sq.front());
      qp.sq.pop_front();
    }
    qp.retries_left = qp.retry_count;
    qp.timer_armed = false;
    irn_arm_retransmit(qp);
  } else if (qp.timer_armed &&
             sim_now() + ns_time(protocol::irn_timeout_ns(qp.irn_caps, qp.irn_tx.unsacked())) <
                 qp.irn_timer_at) {
    // SACKs without cumulative progress left at most N packets that can still be acknowledged:
    // RTO_low from now if that fires earlier (docs/protocol.md 8.4).
    irn_arm_retransmit(qp);
  }
  // The transmit scheduler is woken only if this ACK may have given the QP something to send
  // (issue 31): otherwise its scan over the QPs finds nothing, as it did before the ACK, and
  // the wake-up changes no state (the ACK of a call's last packet, once per call).
  if (irn_may_send(qp)) tx_work_.notify(sc_core::SC_ZERO_TIME);
}

bool Transport::irn_send_next_packet(Qp& qp) {
  if (const auto psn = qp.irn_tx.take_retransmit()) {
    ++retransmits_;
    irn_send_packet(qp, *psn, true);
    return true;
  }
  if (qp.psn_send == qp.psn_tail || !qp.irn_tx.can_send_new()) return false;
  const std::uint32_t psn = qp.psn_send;
  qp.psn_send = psn_add(psn, 1);
  qp.irn_tx.sent_new();
  // Coalesced ACKs: the last packet we can send for now asks for its ACK.
  const bool more = qp.psn_send != qp.psn_tail && qp.irn_tx.can_send_new();
  irn_send_packet(qp, psn, !more);
  return true;
}

void Transport::irn_send_packet(Qp& qp, std::uint32_t psn, bool urgent) {
  const SendWqe* w = nullptr;
  std::uint32_t off = 0;
  for (const SendWqe& c : qp.sq) {
    off = psn_diff(psn, c.first_psn);
    if (off < c.packets) {
      w = &c;
      break;
    }
  }
  if (w == nullptr) model_fatal(name(), "IRN send PSN outside every posted message");
  const bool first = off == 0;
  const bool last = off + 1 == w->packets;
  if (w->op == SendWqe::Op::read_response) {
    irn_send_read_response(qp, *w, psn, off, urgent);
    return;
  }
  // One kept PacketHeaders (issue 31): the BTH fields and extension headers a data packet may
  // carry are all set or cleared below; the others are never engaged.
  protocol::PacketHeaders& h = irn_data_headers_;
  h.reth.reset();
  h.irn_eth.reset();
  h.immediate.reset();
  const std::size_t begin = std::size_t{off} * qp.mtu;
  const std::size_t len =
      std::min<std::size_t>(qp.mtu, w->data.size() - std::min(begin, w->data.size()));
  if (w->op == SendWqe::Op::write) {
    h.bth.opcode = (first && last) ? (w->imm ? op::kIrnWriteOnlyImm : op::kIrnWriteOnly)
                   : first         ? op::kIrnWriteFirst
                   : last          ? (w->imm ? op::kIrnWriteLastImm : op::kIrnWriteLast)
                                   : op::kIrnWriteMiddle;
    h.reth = protocol::Reth{w->remote_va + begin, w->rkey,
                            static_cast<std::uint32_t>(w->data.size() - begin)};
    if (last && w->imm) h.irn_eth = protocol::IrnEth{w->irn_recv_sn, off};
  } else {
    h.bth.opcode = (first && last) ? (w->imm ? op::kIrnSendOnlyImm : op::kIrnSendOnly)
                   : first         ? op::kIrnSendFirst
                   : last          ? (w->imm ? op::kIrnSendLastImm : op::kIrnSendLast)
                                   : op::kIrnSendMiddle;
    h.irn_eth = protocol::IrnEth{w->irn_recv_sn, off};
  }
  if (last && w->imm) h.immediate = *w->imm;
  h.bth.solicited_event = last && w->solicited;
  // IRN: every packet is acknowledged; with coalesced ACKs only those that need it at once.
  h.bth.ack_req = !qp.irn_caps.coalesced_acks() || urgent || last ||
                  off % protocol::kIrnCoalescedAcks == protocol::kIrnCoalescedAcks - 1;
  h.bth.dest_qpn = qp.peer_qpn;
  h.bth.psn = psn;
  irn_put_packet(qp, qp.generation, h, {w->data.data() + begin, len});
}

// A packet of the QP's own stream onto the wire, unless the QP changed (generation) or left RTS
// while the pool or a memory read waited.
void Transport::irn_put_packet(Qp& qp, std::uint32_t gen, const protocol::PacketHeaders& h,
                               protocol::ByteView payload) {
  Packet* p = ctx_.pool.get();
  if (qp.generation != gen || qp.state != QpState::rts) {
    ctx_.pool.put(p);
    return;
  }
  const auto n = protocol::encode_packet(h, payload, {p->data.data(), p->data.size()});
  if (!n) model_fatal(name(), "cannot encode an IRN packet");
  p->size = *n;
  p->peer_ip = qp.peer_ip;
  p->src_qpn = qp.qpn;
  ++tx_packets_;
  tx_payload_bytes_ += payload.size();
  if (!qp.timer_armed) irn_arm_retransmit(qp);
  const std::uint64_t stage =
      SimConfig::stage_cycles(p->size, ctx_.cfg.width, ctx_.cfg.transport_latency);
  if (tx_in_turn_) {  // post_last_send's turn: tx_thread hands it over when the stage ends
    tx_meter_.account(stage);
    tx_pending_ = p;
    tx_pending_at_ = sim_now() + tx_meter_.times(stage);
    return;
  }
  tx_meter_.spend(stage);
  to_tx->put(p);
}

// Packet `off` of a READ's responses (a first transmission or a retransmission): read from memory
// now, as go-back-N's READ RESPONSE is; IrnETH = read_WQE_SN, offset (docs/protocol.md 8.5).
void Transport::irn_send_read_response(Qp& qp, const SendWqe& w, std::uint32_t psn,
                                       std::uint32_t off, bool urgent) {
  const std::uint32_t n = w.packets;
  const std::uint64_t begin = std::uint64_t{off} * qp.mtu;
  const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(
      qp.mtu, w.read_length - std::min<std::uint64_t>(begin, w.read_length)));
  protocol::PacketHeaders h;
  h.bth.opcode = n == 1         ? op::kIrnReadResponseOnly
                 : off == 0     ? op::kIrnReadResponseFirst
                 : off + 1 == n ? op::kIrnReadResponseLast
                                : op::kIrnReadResponseMiddle;
  h.irn_eth = protocol::IrnEth{w.irn_recv_sn, off};
  h.bth.ack_req = !qp.irn_caps.coalesced_acks() || urgent || off + 1 == n ||
                  off % protocol::kIrnCoalescedAcks == protocol::kIrnCoalescedAcks - 1;
  h.bth.dest_qpn = qp.peer_qpn;
  h.bth.psn = psn;
  const std::uint32_t gen = qp.generation;
  // `w` may go (acknowledged) while the memory read waits: nothing of it is used after.
  if (len != 0 && !mem.read(w.remote_va + begin, scratch_.data(), len, tx_meter_)) {
    model_fatal(name(), "memory read outside the memory passed the MR check");
  }
  irn_put_packet(qp, gen, h, {scratch_.data(), len});
}

std::uint64_t Transport::irn_retransmit_ns(const protocol::CapabilityBlock& caps,
                                           const protocol::IrnSendWindow& w) noexcept {
  return retransmit_ns(caps, w);
}

void Transport::irn_arm_retransmit(Qp& qp) {
  const std::uint32_t cookie = qp_index(qp) << kCookieShift | kCookieRetransmit;
  const std::uint64_t ns = retransmit_ns(qp.irn_caps, qp.irn_tx);
  if (ns == 0) {
    ctx_.timers.cancel(*this, cookie);
    qp.timer_armed = false;
    return;
  }
  // The timeout is one of the QPs' two RTOs, nearly always the last one: its sc_time is kept
  // (issue 31: ns_time's library call once per nop call).
  if (ns != irn_rto_ns_) {
    irn_rto_ns_ = ns;
    irn_rto_time_ = ns_time(ns);
  }
  const sc_core::sc_time after = irn_rto_time_;
  ctx_.timers.arm(*this, cookie, after);
  qp.timer_armed = true;
  qp.irn_timer_at = sim_now() + after;
}

void Transport::irn_on_timeout(Qp& qp) {
  if (qp.irn_tx.in_flight() == 0) return;  // everything was acknowledged meanwhile
  ++timeouts_;
  if (qp.retries_left == 0) {
    retry_exhausted(qp, "retry exceeded (timeout)");
    return;
  }
  --qp.retries_left;
  qp.irn_tx.on_timeout();
  irn_arm_retransmit(qp);
  tx_work_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace naa::sim
