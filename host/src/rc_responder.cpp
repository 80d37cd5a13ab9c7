// The RC queue pair's responder (PROTOCOL.md 3; as Linux rxe_resp.c): requests in, ACKs, NAKs
// and READ responses out, with the saved READs that duplicate requests replay.
#include <algorithm>
#include <cstring>

#include "naa/host/error.hpp"
#include "naa/protocol/headers.hpp"
#include "naa/protocol/opcode.hpp"
#include "rc_qp.hpp"

namespace naa::host::detail {

namespace op = protocol::opcode;
using protocol::psn_add;
using protocol::psn_diff;

void RcQp::send_ack(std::uint8_t syndrome, std::uint32_t psn) {
  protocol::PacketHeaders h;
  h.bth.opcode = op::kAcknowledge;
  h.bth.dest_qpn = cfg_.remote_qpn;
  h.bth.psn = psn & protocol::kMax24;
  h.aeth = protocol::Aeth{syndrome, msn_ & protocol::kMax24};
  sink_.send_packet(cfg_.qpn, cfg_.remote_ip, h, {});
}

void RcQp::nak_and_fail(std::uint8_t syndrome, std::uint32_t psn, Errc local_status) {
  send_ack(syndrome, psn);
  // Our own send WRs did nothing wrong: they are flushed, and error() says why the QP died.
  to_error(make_error_code(Errc::flushed));
  error_ = local_status;
}

void RcQp::complete_recv(WcOpcode opcode, std::uint32_t byte_len, std::optional<std::uint32_t> imm,
                         bool solicited, std::error_code status) {
  RecvWqe r = rq_.front();
  rq_.pop_front();
  WorkCompletion wc;
  wc.wr_id = r.wr.wr_id;
  wc.status = status;
  wc.opcode = opcode;
  wc.byte_len = byte_len;
  wc.imm = imm;
  wc.solicited = solicited;
  wc.qp_num = cfg_.qpn;
  cq_.push(wc);
}

void RcQp::send_read_responses(const SavedRead& r, std::uint32_t from_psn) {
  std::uint8_t* base = nullptr;
  if (r.length > 0) {
    base = mrs_.remote(r.rkey, r.va, r.length, Access::remote_read);
    if (base == nullptr) return;  // deregistered since the first execution
  }
  for (std::uint32_t k = psn_diff(from_psn, r.first_psn); k < r.npackets; ++k) {
    protocol::PacketHeaders h;
    h.bth.dest_qpn = cfg_.remote_qpn;
    h.bth.psn = psn_add(r.first_psn, k);
    if (r.npackets == 1) {
      h.bth.opcode = op::kReadResponseOnly;
    } else if (k == 0) {
      h.bth.opcode = op::kReadResponseFirst;
    } else if (k + 1 < r.npackets) {
      h.bth.opcode = op::kReadResponseMiddle;
    } else {
      h.bth.opcode = op::kReadResponseLast;
    }
    if (h.bth.opcode != op::kReadResponseMiddle) h.aeth = protocol::Aeth{protocol::kAethAck, msn_};
    protocol::ByteView payload;
    const std::uint64_t off = std::uint64_t{k} * cfg_.mtu;
    if (r.length > 0) {
      payload = protocol::ByteView(
          base + off, static_cast<std::size_t>(std::min<std::uint64_t>(cfg_.mtu, r.length - off)));
    }
    sink_.send_packet(cfg_.qpn, cfg_.remote_ip, h, payload);
  }
}

void RcQp::on_request(const protocol::PacketView& p, Clock::time_point /*now*/) {
  const protocol::PacketHeaders& h = p.headers;
  const protocol::OpcodeInfo& info = *p.info;
  const std::uint32_t psn = h.bth.psn;
  const std::uint32_t d = psn_diff(psn, epsn_);
  if (d != 0) {
    if (d < kHalfPsnSpace) {
      // Ahead of ePSN: one sequence NAK carrying ePSN, then silence until ePSN arrives.
      if (!seq_nak_outstanding_) {
        send_ack(protocol::kNakPsnSequenceError, epsn_);
        seq_nak_outstanding_ = true;
        ++counters_.seq_naks_sent;
      } else {
        ++counters_.dropped_out_of_order;
      }
      return;
    }
    // Duplicate: never re-executed (an immediate is never re-delivered). READs are replayed.
    ++counters_.duplicates_received;
    if (info.kind == protocol::OpKind::rdma_read_request) {
      for (const SavedRead& r : reads_) {
        if (psn_diff(psn, r.first_psn) < r.npackets) {
          send_read_responses(r, psn);
          break;
        }
      }
      return;
    }
    if (h.bth.ack_req || !last_was_duplicate_) {
      send_ack(protocol::kAethAck, psn_add(epsn_, protocol::kMax24));  // last acknowledged PSN
    }
    last_was_duplicate_ = true;
    return;
  }
  last_was_duplicate_ = false;
  seq_nak_outstanding_ = false;

  const std::size_t len = p.payload.size();
  const bool first = info.starts_message();
  const bool last = info.ends_message();
  if ((info.payload == protocol::PayloadRule::full_mtu && len != cfg_.mtu) || len > cfg_.mtu) {
    nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
    return;
  }

  switch (info.kind) {
    case protocol::OpKind::send: {
      if (first) {
        if (in_msg_ != InMessage::none) {
          nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
          return;
        }
        if (rq_.empty()) {
          send_ack(protocol::rnr_nak_syndrome(cfg_.rnr_timer_code), psn);
          ++counters_.rnr_naks_sent;
          return;
        }
        msg_bytes_ = 0;
      } else if (in_msg_ != InMessage::send) {
        nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
        return;
      }
      RecvWqe& r = rq_.front();
      if (msg_bytes_ + len > r.wr.sge.length) {
        complete_recv(WcOpcode::recv, 0, std::nullopt, false, Errc::local_length_error);
        nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::local_length_error);
        return;
      }
      if (len > 0) {
        std::memcpy(r.data + msg_bytes_, p.payload.data(), len);
        mrs_.count_written(r.wr.sge.lkey, len);
      }
      msg_bytes_ += static_cast<std::uint32_t>(len);
      epsn_ = psn_add(psn, 1);
      if (last) {
        msn_ = psn_add(msn_, 1);
        in_msg_ = InMessage::none;
        complete_recv(WcOpcode::recv, msg_bytes_, h.immediate, h.bth.solicited_event);
      } else {
        in_msg_ = InMessage::send;
      }
      break;
    }
    case protocol::OpKind::rdma_write: {
      if (first) {
        if (in_msg_ != InMessage::none) {
          nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
          return;
        }
        const protocol::Reth& reth = *h.reth;
        write_ptr_ = nullptr;
        // A zero-length WRITE skips R_Key validation (IBTA, PROTOCOL.md 3).
        if (reth.dma_length > 0) {
          write_ptr_ = mrs_.remote(reth.rkey, reth.va, reth.dma_length, Access::remote_write);
          if (write_ptr_ == nullptr) {
            nak_and_fail(protocol::kNakRemoteAccessError, psn, Errc::remote_access_error);
            return;
          }
        }
        write_rkey_ = reth.rkey;
        write_length_ = reth.dma_length;
        msg_bytes_ = 0;
      } else if (in_msg_ != InMessage::write) {
        nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
        return;
      }
      if (msg_bytes_ + len > write_length_ || (last && msg_bytes_ + len != write_length_)) {
        nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
        return;
      }
      if (h.immediate && rq_.empty()) {
        // No receive for the immediate: RNR NAK with this PSN, no state change (PROTOCOL.md 3).
        send_ack(protocol::rnr_nak_syndrome(cfg_.rnr_timer_code), psn);
        ++counters_.rnr_naks_sent;
        return;
      }
      if (len > 0) {
        std::memcpy(write_ptr_ + msg_bytes_, p.payload.data(), len);
        mrs_.count_written(write_rkey_, len);
      }
      msg_bytes_ += static_cast<std::uint32_t>(len);
      epsn_ = psn_add(psn, 1);
      if (last) {
        msn_ = psn_add(msn_, 1);
        in_msg_ = InMessage::none;
        if (h.immediate) {
          complete_recv(WcOpcode::recv_rdma_with_imm, write_length_, h.immediate,
                        h.bth.solicited_event);
        }
      } else {
        in_msg_ = InMessage::write;
      }
      break;
    }
    case protocol::OpKind::rdma_read_request: {
      const protocol::Reth& reth = *h.reth;
      if (in_msg_ != InMessage::none) {
        nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
        return;
      }
      if (reth.dma_length > 0 &&
          mrs_.remote(reth.rkey, reth.va, reth.dma_length, Access::remote_read) == nullptr) {
        nak_and_fail(protocol::kNakRemoteAccessError, psn, Errc::remote_access_error);
        return;
      }
      SavedRead r{psn, packets_for(reth.dma_length), reth.va, reth.rkey, reth.dma_length};
      reads_.push_back(r);
      if (reads_.size() > kSavedReads) reads_.pop_front();
      epsn_ = psn_add(psn, r.npackets);
      msn_ = psn_add(msn_, 1);
      send_read_responses(r, psn);
      return;  // the responses are the acknowledgement
    }
    default:
      // Atomics (we grant none) and anything else a requester may not send us.
      nak_and_fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
      return;
  }
  if (h.bth.ack_req) send_ack(protocol::kAethAck, psn);
}

}  // namespace naa::host::detail
