// The IRN queue pair (docs/protocol.md "IRN"; seed 001): the second RC implementation behind
// QpEngine, used only when the CM exchange negotiated IRN.
//   Requester: SEND / WRITE / WRITE_WITH_IMM / READ in IRN opcodes (RETH on every WRITE packet,
//     recv_WQE_SN on SEND and WRITE_WITH_IMM, read_WQE_SN on READ), BDP flow control, selective
//     retransmission from the SACKs, RTO_low / RTO_high (protocol::IrnSendWindow).
//   Responder: out-of-order placement with the 2-bitmap (protocol::IrnReceiveWindow), receive
//     completions only when every packet up to the last has arrived, duplicates never
//     re-executed, packets beyond the bitmap dropped and counted, an IRN ACK for every packet.
//   READ (irn_read.cpp; docs/protocol.md 8.5): a READ request executes when every packet before
//     it has arrived; its responses are queued on this side's own send stream (so the same
//     selective repeat, BDP cap and timers carry them), and the requester places them out of
//     order through the same 2-bitmap, its IRN ACKs NACKing the missing ones.
//
// Not thread-safe.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "mr_table.hpp"
#include "naa/protocol/irn.hpp"
#include "qp_engine.hpp"
#include "rc_qp.hpp"

namespace naa::host::detail {

// What the responder counts beyond RcCounters.
struct IrnCounters {
  std::uint64_t dropped_beyond_bitmap = 0;
  std::uint64_t dropped_no_receive = 0;
  std::uint64_t completions_deferred = 0;   // a last packet that waited for its gap
  std::uint64_t reads_executed = 0;         // peer READs whose responses we queued
  std::uint64_t read_responses_placed = 0;  // response packets of our READs placed (fresh)
};

class IrnQp : public QpEngine {
 public:
  IrnQp(const RcConfig& config, const protocol::CapabilityBlock& caps, MrTable& mrs,
        PacketSink& sink, RcCounters& counters);

  [[nodiscard]] std::error_code error() const noexcept override { return error_; }
  std::error_code post_send(const SendWr& wr, Clock::time_point now) override;
  std::error_code post_recv(const RecvWr& wr) override;
  void on_packet(const protocol::PacketView& packet, Clock::time_point now) override;
  void on_timer(Clock::time_point now) override;
  [[nodiscard]] std::optional<Clock::time_point> next_deadline() const noexcept override;
  bool on_wire(std::uint32_t psn, Clock::time_point now) override;
  void to_error(std::error_code status) override;
  [[nodiscard]] std::size_t poll(std::span<WorkCompletion> out) override;
  [[nodiscard]] bool has_completions() const noexcept override { return !cq_.empty(); }

  [[nodiscard]] const IrnCounters& irn_counters() const noexcept { return irn_; }
  [[nodiscard]] std::uint32_t expected_psn() const noexcept { return rx_.epsn(); }
  [[nodiscard]] std::uint32_t unacknowledged_psn() const noexcept { return tx_.una(); }
  [[nodiscard]] const RttEstimator& rtt() const noexcept { return rtt_; }
  // The timeout armed with `unsacked` PSNs still unSACKed: RTO_low or RTO_high, negotiated or
  // (measured_timers) derived from the round trip: RTO_low = the measured timeout, RTO_high =
  // twice it, both within [floor, max(1 s, negotiated RTO_high)] (docs/reliability.md
  // "Retransmit timers").
  [[nodiscard]] std::chrono::nanoseconds timeout_for(std::uint32_t unsacked) const noexcept;

 private:
  struct SendWqe {
    // posted: a work request of ours; read_response: the responses to a peer's READ, queued on
    // our send stream when its request executed (no completion of ours).
    enum class Kind : std::uint8_t { posted, read_response } kind = Kind::posted;
    SendWr wr;
    std::uint8_t* data = nullptr;  // posted: the local buffer; read_response: the source bytes
    std::uint32_t first_psn = 0;
    std::uint32_t npackets = 1;
    std::uint32_t recv_sn = 0;  // SEND / WRITE_WITH_IMM: recv_WQE_SN; READ: read_WQE_SN
    std::uint32_t length = 0;   // read_response: bytes
    bool read_done = false;     // our READ: every response packet has arrived
    bool read_sent = false;     // our READ: its request went out (counts as in flight)
    [[nodiscard]] bool is_read() const noexcept {
      return kind == Kind::posted && wr.opcode == WrOpcode::rdma_read;
    }
  };
  struct RecvWqe {
    RecvWr wr;
    std::uint8_t* data = nullptr;
  };
  struct Pending {  // a last packet's metadata until the gap before it fills (IRN 5.3.3)
    // receive: SEND / WRITE_WITH_IMM completion; read_request: a peer's READ to execute (va,
    // rkey, byte_len); read_response: the last response packet of our READ recv_sn.
    enum class Kind : std::uint8_t { receive, read_request, read_response } kind = Kind::receive;
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t psn = 0;
    WcOpcode opcode = WcOpcode::recv;
    std::uint32_t byte_len = 0;
    std::optional<std::uint32_t> imm;
    bool solicited = false;
    std::uint32_t recv_sn = 0;
  };

  [[nodiscard]] std::uint32_t packets_for(std::uint64_t length) const noexcept;
  void pump(Clock::time_point now);
  void send_packet(std::uint32_t psn, Clock::time_point now, bool urgent);
  void arm_timer(Clock::time_point now);
  void on_ack(const protocol::PacketView& p, Clock::time_point now);
  void on_request(const protocol::PacketView& p, Clock::time_point now);
  // READ (irn_read.cpp). Each returns false when the packet was refused (the QP failed).
  bool place(const protocol::PacketView& p);  // SEND / WRITE
  bool on_read_request(const protocol::PacketView& p);
  bool on_read_response(const protocol::PacketView& p);
  void execute_read(const Pending& r);  // queues the responses on our send stream
  [[nodiscard]] SendWqe* read_wqe(std::uint32_t read_sn) noexcept;
  [[nodiscard]] const SendWqe* wqe_of(std::uint32_t psn, std::uint32_t& k) const noexcept;
  void retire();  // completes the acknowledged (and for READ, answered) WQEs at the front
  void insert_pending(const Pending& p);
  void complete(std::uint32_t psn);
  void send_ack(std::uint32_t sack_psn);
  void fail(std::uint8_t syndrome, std::uint32_t psn, Errc local_status);
  [[nodiscard]] RecvWqe* receive_for(std::uint32_t recv_sn) noexcept;

  RcConfig cfg_;
  protocol::CapabilityBlock caps_;
  MrTable& mrs_;
  PacketSink& sink_;
  RcCounters& counters_;
  IrnCounters irn_;
  std::error_code error_;
  CompletionQueue cq_;

  // Requester.
  std::deque<SendWqe> sq_;
  std::uint32_t sq_psn_ = 0;           // PSN for the next posted WR
  std::uint32_t send_sn_ = 0;          // recv_WQE_SN for the next SEND / WRITE_WITH_IMM
  std::uint32_t read_sn_ = 0;          // read_WQE_SN for our next READ
  std::uint32_t reads_in_flight_ = 0;  // our READs sent and not yet answered in full
  protocol::IrnSendWindow tx_;
  std::uint8_t retries_left_ = 0;
  std::optional<Clock::time_point> retransmit_at_;
  // One past the newest PSN the NIC reported on the wire (RcConfig::wire_timers).
  std::uint32_t wire_next_ = 0;
  RttEstimator rtt_;
  // Per PSN slot (PSN mod BDP cap): when it was first sent, for its RTT sample; unset after a
  // retransmission (Karn's rule) or once sampled.
  std::vector<std::optional<Clock::time_point>> sent_at_;

  // Responder.
  protocol::IrnReceiveWindow rx_;
  std::uint32_t msn_ = 0;
  std::deque<RecvWqe> rq_;
  std::uint32_t recv_sn_ = 0;       // recv_WQE_SN of rq_.front()
  std::uint32_t peer_read_sn_ = 0;  // read_WQE_SN of the peer's next READ to execute
  std::deque<Pending> pending_;
};

}  // namespace naa::host::detail
