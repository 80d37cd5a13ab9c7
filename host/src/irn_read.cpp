// RDMA READ on an IRN queue pair (irn_qp.hpp; docs/protocol.md 8.5; seed 001 "Supporting RDMA
// Reads and Atomics", "WQE matching issues", "Other Considerations").
//   Requester: the READ request (0xCD: RETH, IrnETH = read_WQE_SN, 0) takes one PSN of our stream
//     and is acknowledged like any packet of it. Its responses (0xCE-0xD1) come in the peer's
//     stream: each names its READ by read_WQE_SN and its place by the packet offset, so it is
//     placed at once, in any order, and marked in the same 2-bitmap as the peer's requests; the
//     IRN ACK we send for it is the seed's read (N)ACK (a hole before it: NAK 0x60 with the SACK
//     bitmap). The READ completes when its last response and every packet before it arrived.
//   Responder: a READ request is placed in the "Read WQE buffer" (the pending list, by PSN) and
//     executes only when every packet before it has arrived (seed: "cannot begin processing a
//     Read request R until all packets expected to arrive before R have been received"); then its
//     responses are queued on our own send stream, whose selective repeat, BDP cap and timers
//     retransmit them (the seed's responder-side timeouts). A duplicate request never re-executes.
#include <cstring>

#include "irn_qp.hpp"
#include "naa/protocol/headers.hpp"

namespace naa::host::detail {

IrnQp::SendWqe* IrnQp::read_wqe(std::uint32_t read_sn) noexcept {
  for (SendWqe& w : sq_) {
    if (w.is_read() && w.recv_sn == read_sn) return &w;
  }
  return nullptr;
}

// A peer's READ request, fresh in the bitmap: checked now (a bad one fails at once, as go-back-N
// NAKs it), executed in order (complete -> execute_read).
bool IrnQp::on_read_request(const protocol::PacketView& p) {
  const protocol::PacketHeaders& h = p.headers;
  const std::uint32_t psn = h.bth.psn;
  const protocol::Reth& r = *h.reth;
  if (r.dma_length > 0x80000000U) {
    fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
    return false;
  }
  if (r.dma_length != 0 &&
      mrs_.remote(r.rkey, r.va, r.dma_length, Access::remote_read) == nullptr) {
    fail(protocol::kNakRemoteAccessError, psn, Errc::remote_access_error);
    return false;
  }
  Pending req;
  req.kind = Pending::Kind::read_request;
  req.psn = psn;
  req.recv_sn = h.irn_eth->recv_wqe_sn;  // read_WQE_SN
  req.va = r.va;
  req.rkey = r.rkey;
  req.byte_len = r.dma_length;
  insert_pending(req);
  return true;
}

// Every packet before the READ request has arrived: its responses go on our send stream.
void IrnQp::execute_read(const Pending& r) {
  if (r.recv_sn != peer_read_sn_) {  // READs execute in the order they were posted
    fail(protocol::kNakInvalidRequest, r.psn, Errc::remote_invalid_request);
    return;
  }
  ++peer_read_sn_;
  SendWqe w;
  w.kind = SendWqe::Kind::read_response;
  w.recv_sn = r.recv_sn;
  w.length = r.byte_len;
  if (r.byte_len != 0) {
    w.data = mrs_.remote(r.rkey, r.va, r.byte_len, Access::remote_read);
    if (w.data == nullptr) {  // deregistered since the request arrived
      fail(protocol::kNakRemoteAccessError, r.psn, Errc::remote_access_error);
      return;
    }
  }
  w.first_psn = sq_psn_;
  w.npackets = packets_for(r.byte_len);
  sq_psn_ = protocol::psn_add(sq_psn_, w.npackets);
  sq_.push_back(w);
  ++irn_.reads_executed;
}

// A response to one of our READs, fresh in the bitmap: placed at read_WQE_SN's buffer + offset x
// MTU. Its shape must match the READ we asked for; anything else is a broken peer.
bool IrnQp::on_read_response(const protocol::PacketView& p) {
  const protocol::PacketHeaders& h = p.headers;
  const protocol::OpcodeInfo& info = *p.info;
  const std::uint32_t psn = h.bth.psn;
  const std::size_t len = p.payload.size();
  SendWqe* w = read_wqe(h.irn_eth->recv_wqe_sn);
  if (w == nullptr || !w->read_sent || w->read_done) {
    fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
    return false;
  }
  const std::uint32_t n = packets_for(w->wr.sge.length);
  const std::uint32_t k = h.irn_eth->packet_offset;
  const std::uint64_t at = std::uint64_t{k} * cfg_.mtu;
  const bool shape_ok = k < n && info.starts_message() == (k == 0) &&
                        info.ends_message() == (k + 1 == n) &&
                        (k + 1 == n ? at + len == w->wr.sge.length : len == cfg_.mtu);
  if (!shape_ok) {
    fail(protocol::kNakInvalidRequest, psn, Errc::remote_invalid_request);
    return false;
  }
  if (len > 0) std::memcpy(w->data + at, p.payload.data(), len);
  ++irn_.read_responses_placed;
  if (info.ends_message()) {
    Pending done;
    done.kind = Pending::Kind::read_response;
    done.psn = psn;
    done.recv_sn = w->recv_sn;
    done.opcode = WcOpcode::rdma_read;
    insert_pending(done);
  }
  return true;
}

}  // namespace naa::host::detail
