// The RC queue pairs of the NAA: connection parameters from the CM (PROTOCOL.md 4), responder and
// requester state (PROTOCOL.md 3). The table belongs to the NAA top level; CmAgent allocates and
// releases entries, Transport runs them, MrspHandler and KernelEngine address them by QPN.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include <systemc>

#include "naa/protocol/irn.hpp"
#include "naa/protocol/mrsp.hpp"

namespace naa::sim {

enum class QpState : std::uint8_t {
  free,   // not allocated
  rtr,    // REP sent, waiting for RTU (or the first valid data packet)
  rts,    // connected
  error,  // a fatal transport error: everything is dropped until the connection ends
};

// A message the NAA sends on a QP (its requester side, PROTOCOL.md 3).
struct SendWqe {
  // read_response (IRN only, docs/protocol.md 8.5): the responses to a peer's READ, queued on our
  // send stream when the request executed; read from memory at remote_va per packet sent.
  enum class Op : std::uint8_t { send, write, read_response } op = Op::send;
  std::vector<std::uint8_t> data;  // snapshot of the payload (retransmissions resend it)
  std::uint64_t remote_va = 0;     // write; read_response: the NAA address read
  std::uint32_t read_length = 0;   // read_response: bytes
  std::uint32_t rkey = 0;          // write
  std::optional<std::uint32_t> imm;
  bool solicited = false;
  bool probe = false;  // an idle-liveness probe (zero-length WRITE, docs/sim/transport.md)
  std::uint32_t first_psn = 0;
  std::uint32_t packets = 0;
  std::uint32_t irn_recv_sn = 0;  // IRN: recv_WQE_SN (SEND, WRITE_WITH_IMM); read_WQE_SN
};

// A pending RDMA READ response (responder side).
struct ReadJob {
  std::uint64_t va = 0;
  std::uint32_t length = 0;
  std::uint32_t first_psn = 0;
  std::uint32_t packets = 0;
  std::uint32_t next = 0;  // packets already sent
};

struct Qp {
  std::uint32_t qpn = 0;
  std::uint32_t generation = 0;  // bumps on every allocation, so stale work is recognised
  QpState state = QpState::free;

  // Allocation of slot `index` (the CM agent's for a REQ, the MRSP handler's for a peer QP): the
  // next generation (never 0) and the QPN it gives, generation << 8 | slot.
  void claim(std::uint32_t index) noexcept {
    generation = (generation + 1) & 0xFFFFU;
    if (generation == 0) generation = 1;
    qpn = (generation << 8) | index;
  }

  // ---- connection (from the CM REQ/REP) ----
  std::uint32_t peer_ip = 0;
  std::uint32_t peer_qpn = 0;
  std::uint32_t mtu = 1024;
  std::uint8_t ack_timeout = 0;  // local ACK timeout exponent (0 = no retransmit timer)
  std::uint8_t retry_count = 7;
  std::uint8_t rnr_retry = 7;  // 7 = infinite
  bool reads_allowed = false;  // initiator depth granted >= 1
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint64_t half_open_seq = 0;  // order of the REPs: the oldest half-open QP is displaced first
  std::array<std::uint8_t, 256> rep_mad{};  // answered again to a duplicate REQ

  // ---- responder ----
  std::uint32_t epsn = 0;
  std::uint32_t msn = 0;
  bool nak_sequence_sent = false;
  enum class InMessage : std::uint8_t { none, send, write } in_message = InMessage::none;
  std::uint64_t write_va = 0;
  std::uint64_t write_remaining = 0;
  bool recv_posted = true;  // the MRSP receive buffer
  std::vector<std::uint8_t> recv_buf;
  std::size_t recv_len = 0;
  std::deque<ReadJob> reads;

  // ---- requester ----
  std::deque<SendWqe> sq;      // posted, not yet acknowledged, in PSN order
  std::uint32_t psn_una = 0;   // oldest unacknowledged PSN
  std::uint32_t psn_send = 0;  // next PSN to transmit
  std::uint32_t psn_tail = 0;  // PSN after the last posted packet
  std::uint32_t retries_left = 7;
  std::uint32_t rnr_left = 7;
  bool rnr_waiting = false;
  bool timer_armed = false;
  std::uint32_t timer_una = 0;  // psn_una when the retransmit timer was armed

  // ---- IRN (docs/protocol.md "IRN"; transport_irn*.cpp), when the CM negotiated it ----
  bool irn = false;
  protocol::CapabilityBlock irn_caps;
  protocol::IrnReceiveWindow irn_rx;  // responder: the 2-bitmap
  protocol::IrnSendWindow irn_tx;     // requester: selective repeat
  std::uint32_t irn_recv_sn = 0;      // recv_WQE_SN of the next receive (SEND / WRITE_WITH_IMM)
  sc_core::sc_time irn_timer_at;      // when the armed retransmit timer fires
  std::uint32_t irn_send_sn = 0;      // recv_WQE_SN our next SEND / WRITE_WITH_IMM consumes
  std::uint32_t irn_read_sn = 0;      // read_WQE_SN of the peer's next READ to execute
  // Completions waiting for the gap before them to fill: the last packet's metadata (IRN 5.3.3).
  struct IrnPending {
    std::uint32_t psn = 0;
    bool send = false;  // SEND (MRSP message) or WRITE
    bool read = false;  // a READ request, executed when every packet before it has arrived
    std::uint64_t read_va = 0;
    std::uint32_t read_length = 0;
    std::optional<std::uint32_t> imm;
    std::uint32_t send_len = 0;  // SEND: bytes of the message
    std::uint32_t recv_sn = 0;   // recv_WQE_SN of the last packet
  };
  std::deque<IrnPending> irn_pending;
  // STREAM regions on IRN: the last PSN of each message whose header handler was handed to the
  // HandlerEngine (its first packet to arrive ran it; docs/protocol.md 8.3), until it completes.
  std::vector<std::uint32_t> irn_stream_headers;
  std::uint64_t irn_send_bytes = 0;  // SEND: highest byte placed in recv_buf (message length)

  // ---- peers (docs/protocol.md "Peers"; mrsp_handler.cpp, transport_peer.cpp) ----
  // A requester QP a host bound to one of its connections with MRSP 0x06: no CM side, released
  // with that connection (owner_index), only its handlers' puts go out on it.
  bool peer_requester = false;
  std::uint32_t owner_index = 0;
  // A connection whose requester is another NAA's peer QP (0x08 handover, applied once our 0x09
  // answer is acknowledged): its calls are answered to nobody (the peer does not wait for one).
  struct Handover {
    std::uint32_t peer_ip = 0, peer_qpn = 0, psn = 0;
  };
  std::optional<Handover> handover_pending;
  bool handed_over = false;
  std::uint32_t cm_peer_ip = 0;  // handed over: the host whose DREQ still ends the connection

  // ---- idle liveness ----
  sc_core::sc_time last_heard;  // simulated time of the last valid packet from the peer
};

}  // namespace naa::sim
