// Transport, responder side (PROTOCOL.md 3): ePSN and MSN, duplicates and out-of-order packets,
// opcode sequence and length checks, MR checks, SEND into the MRSP receive buffer, WRITE payload
// to Memory (posted), WRITE_WITH_IMM calls, READ requests and their responses, ACKs and NAKs.
#include <algorithm>
#include <cstring>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/sim/transport.hpp"

namespace naa::sim {
namespace {

namespace op = protocol::opcode;
using protocol::psn_add;
using protocol::psn_after;

}  // namespace

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
          access->check(r.rkey, r.va, r.dma_length, kMrRemoteRead, qp.qpn) == MrCheck::ok) {
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
        messages->deliver(qp);
      }
      break;
    }
    case protocol::OpKind::rdma_write: {
      if (info.starts_message()) {
        const protocol::Reth& r = *v.headers.reth;
        // Zero-length writes skip the R_Key check (IBTA); otherwise the whole DMA length is
        // checked up front, so a failure writes nothing.
        if (r.dma_length != 0) {
          const MrCheck c = access->check(r.rkey, r.va, r.dma_length, kMrRemoteWrite, qp.qpn);
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
      if (v.headers.immediate && !calls->can_accept(qp)) {
        naks_.add(static_cast<std::size_t>(NakSent::rnr));
        send_ack(qp, psn, protocol::rnr_nak_syndrome(ctx_.cfg.rnr_timer_code));
        return;  // ePSN unchanged: the peer retries this packet
      }
      // A STREAM region's payload goes to the handlers, not to Memory; with no HPU and no HPU
      // memory free the packet is RNR-NAKed like a missing receive (flow control, nothing lost).
      const bool streamed = len != 0 && streams.size() != 0 && streams->streams(qp, qp.write_va);
      if (streamed && !streams->can_take(qp, len)) {
        naks_.add(static_cast<std::size_t>(NakSent::rnr));
        send_ack(qp, psn, protocol::rnr_nak_syndrome(ctx_.cfg.rnr_timer_code));
        return;
      }
      qp.in_message = Qp::InMessage::write;
      const std::uint32_t gen = qp.generation;
      if (streamed) {
        streams->take(qp, qp.write_va, v.payload, info.starts_message());
      } else {
        wait_posted_write();
        if (qp.generation != gen || qp.state == QpState::free) return;  // released meanwhile
        if (len != 0 && !post_write(qp.write_va, v.payload.data(), len)) {
          model_fatal(name(), "memory write outside the memory passed the MR check");
        }
      }
      qp.write_va += len;
      qp.write_remaining -= len;
      if (info.ends_message()) {
        qp.in_message = Qp::InMessage::none;
        qp.msn = psn_add(qp.msn, 1);
        if (v.headers.immediate) {
          if (streams.size() != 0 && streams->owns_calls(qp)) {
            streams->complete(qp, *v.headers.immediate);
          } else {
            calls->post_call(qp, *v.headers.immediate);
          }
        }
      }
      break;
    }
    case protocol::OpKind::rdma_read_request: {
      const protocol::Reth& r = *v.headers.reth;
      if (!read_allowed(qp, psn, r)) return;
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
// The previous posted write is still in flight (wait_posted_write): wait for its end.
void Transport::wait_for_posted_write() {
  const sc_core::sc_time d = write_done_ - sim_now();
  rx_meter_.account(static_cast<std::uint64_t>(d / rx_meter_.cycle() + 0.5));
  sc_core::wait(d);
}

bool Transport::post_write(std::uint64_t addr, const std::uint8_t* data, std::uint64_t len) {
  tlm::tlm_generic_payload& trans = post_trans_;  // reused: b_transport does not wait
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
  mem.b_transport(trans, delay);
  write_done_ = sim_now() + delay;
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
  to_tx->put(p);
}

void Transport::fatal_nak(Qp& qp, std::uint32_t psn, std::uint8_t syndrome) {
  naks_.add(static_cast<std::size_t>(syndrome == protocol::kNakRemoteAccessError
                                         ? NakSent::remote_access
                                         : NakSent::invalid_request));
  send_ack(qp, psn, syndrome);
  qp_error(qp,
           syndrome == protocol::kNakRemoteAccessError ? "remote access error" : "invalid request");
}

bool Transport::read_allowed(Qp& qp, std::uint32_t psn, const protocol::Reth& r) {
  if (!qp.reads_allowed) {  // initiator depth 0 was granted
    fatal_nak(qp, psn, protocol::kNakInvalidRequest);
    return false;
  }
  if (r.dma_length != 0 &&
      access->check(r.rkey, r.va, r.dma_length, kMrRemoteRead, qp.qpn) != MrCheck::ok) {
    fatal_nak(qp, psn, protocol::kNakRemoteAccessError);
    return false;
  }
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
  to_tx->put(p);
  return true;
}

}  // namespace naa::sim
