// One Reliable Connected queue pair: requester and responder of PROTOCOL.md 3, as a pure state
// machine. It owns no socket and no clock: packets come in through on_packet(), time through
// on_timer() and the `now` arguments, packets go out through a PacketSink, completions collect in
// its completion queue. The UdpRoce endpoint drives it under its lock; the unit tests drive it
// directly against a scripted peer.
//
// Not thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <system_error>

#include "mr_table.hpp"
#include "naa/host/error.hpp"
#include "naa/host/transport.hpp"
#include "naa/protocol/packet.hpp"
#include "qp_engine.hpp"
#include "rtt_estimator.hpp"

namespace naa::host::detail {

inline constexpr std::uint32_t kHalfPsnSpace = 0x800000;  // PSN a is before b if b - a < this
inline constexpr std::size_t kSavedReads = 16;            // READ requests kept for replay

// Where a QP's packets go. The endpoint adds the ICRC, the IPv4/UDP context and the socket.
class PacketSink {
 public:
  virtual ~PacketSink() = default;
  virtual void send_packet(std::uint32_t local_qpn, std::uint32_t dst_ip,
                           const protocol::PacketHeaders& headers, protocol::ByteView payload) = 0;
};

// Counters a QP bumps (the endpoint's TransportStats).
struct RcCounters {
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t seq_naks_received = 0;
  std::uint64_t rnr_naks_received = 0;
  std::uint64_t seq_naks_sent = 0;
  std::uint64_t rnr_naks_sent = 0;
  std::uint64_t duplicates_received = 0;
  std::uint64_t dropped_out_of_order = 0;
  std::uint64_t dropped_other = 0;
  // Measured timers (RcConfig::measured_timers): round-trip samples taken, and the latest
  // retransmit timeout armed from them (ns; 0 = none yet).
  std::uint64_t rtt_samples = 0;
  std::uint64_t measured_timeout_ns = 0;
};

struct RcConfig {
  std::uint32_t qpn = 0;
  std::uint32_t remote_qpn = 0;
  std::uint32_t remote_ip = 0;
  std::uint32_t send_psn = 0;  // first PSN we send (the REP's starting PSN, PROTOCOL.md 4)
  std::uint32_t recv_psn = 0;  // first PSN we expect (our REQ's starting PSN)
  std::uint32_t mtu = 4096;
  std::uint8_t local_ack_timeout = 15;  // 4.096 us x 2^t, 0 = never
  std::uint8_t retry_count = 7;
  std::uint8_t rnr_retry = 7;               // 7 = infinite
  std::uint8_t max_reads_outstanding = 16;  // our RDMA READs in flight (initiator depth)
  std::uint8_t rnr_timer_code = 12;         // what our RNR NAKs ask for (0.64 ms)
  // Retransmit timeouts from the measured round trip (rtt_estimator.hpp; the endpoint sets this
  // on the wall clock): go-back-N's timeout, IRN's RTO_low and RTO_high. Otherwise the
  // configured constants (simulated time: the co-simulation keeps the IRN paper's values).
  bool measured_timers = false;
  std::chrono::nanoseconds timer_floor{1000000};
  std::chrono::nanoseconds initial_rtt{0};  // a first sample (the CM REQ -> REP), 0 = none
  // Go-back-N requester: AckReq on every ack_req_interval-th PSN and on a message's last
  // (UdpRoceOptions::ack_request_interval).
  std::uint32_t ack_req_interval = 64;
  // The fabric's options (UdpRoceOptions::irn_rto_low_ns, irn_rto_high_ns, gbn_max_unacked_psns,
  // wire_timers): 0 / false keep the negotiated timeouts, PROTOCOL.md 3's window, and timers
  // that start when a packet is handed to the link.
  std::chrono::nanoseconds irn_rto_low{0};
  std::chrono::nanoseconds irn_rto_high{0};
  std::uint32_t max_unacked_psns = 0;
  bool wire_timers = false;
};

using protocol::kMaxUnackedPsns;  // PROTOCOL.md 3

class RcQp : public QpEngine {
 public:
  RcQp(const RcConfig& config, MrTable& mrs, PacketSink& sink, RcCounters& counters);

  [[nodiscard]] const RcConfig& config() const noexcept { return cfg_; }
  [[nodiscard]] std::error_code error() const noexcept override { return error_; }

  // Validates (lkey, bounds, opcode), assigns PSNs and sends what the window allows.
  std::error_code post_send(const SendWr& wr, Clock::time_point now) override;
  std::error_code post_recv(const RecvWr& wr) override;
  // Removes a posted receive no SEND has started to fill (the front one is busy between a
  // multi-packet SEND's first and last packet); later messages take the receives after it, in
  // order, as if it had never been posted.
  std::error_code cancel_recv(std::uint64_t wr_id) override;

  // A packet addressed to this QP whose ICRC has been verified.
  void on_packet(const protocol::PacketView& packet, Clock::time_point now) override;
  // Runs expired timers (retransmission, RNR wait).
  void on_timer(Clock::time_point now) override;
  [[nodiscard]] std::optional<Clock::time_point> next_deadline() const noexcept override;

  // Moves the QP to the error state: the oldest send WR completes with `status`, all others and
  // all receives with Errc::flushed (IBTA 10.8.3 / verbs IBV_WC_WR_FLUSH_ERR).
  void to_error(std::error_code status) override;

  [[nodiscard]] std::size_t poll(std::span<WorkCompletion> out) override;
  [[nodiscard]] bool has_completions() const noexcept override { return !cq_.empty(); }
  [[nodiscard]] std::size_t outstanding_sends() const noexcept { return sq_.size(); }

  // Test visibility.
  [[nodiscard]] std::uint32_t next_send_psn() const noexcept { return sq_psn_; }
  [[nodiscard]] std::uint32_t expected_psn() const noexcept { return epsn_; }
  [[nodiscard]] std::uint32_t msn() const noexcept { return msn_; }
  [[nodiscard]] const RttEstimator& rtt() const noexcept { return rtt_; }
  // The retransmit timeout armed now: the local ACK timeout, or the measured one below it.
  [[nodiscard]] std::chrono::nanoseconds retransmit_timeout() const noexcept;

 private:
  struct SendWqe {
    SendWr wr;
    std::uint8_t* data = nullptr;  // local bytes: source (send/write) or destination (read)
    std::uint32_t first_psn = 0;
    std::uint32_t npackets = 1;  // PSNs the message consumes
    std::uint32_t read_received = 0;
    bool read_sent = false;  // a READ REQUEST for it is in flight
  };
  struct RecvWqe {
    RecvWr wr;
    std::uint8_t* data = nullptr;
  };
  struct SavedRead {
    std::uint32_t first_psn = 0;
    std::uint32_t npackets = 0;
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;
  };

  [[nodiscard]] std::uint32_t packets_for(std::uint64_t length) const noexcept;
  // Requester.
  void pump(Clock::time_point now);
  void send_request_packet(std::size_t wqe_index, std::uint32_t pkt, Clock::time_point now);
  void go_back_to(std::uint32_t psn);
  void acknowledge_through(std::uint32_t psn, Clock::time_point now);  // all PSNs <= psn acked
  void complete_front(std::error_code status);
  void on_response(const protocol::PacketView& p, Clock::time_point now);
  void on_read_response(const protocol::PacketView& p, Clock::time_point now);
  bool retry_or_fail(Clock::time_point now);  // false: retries exhausted, QP in error
  [[nodiscard]] bool in_flight(std::uint32_t psn) const noexcept;  // una <= psn < max_sent
  // Responder.
  void on_request(const protocol::PacketView& p, Clock::time_point now);
  void send_ack(std::uint8_t syndrome, std::uint32_t psn);
  void nak_and_fail(std::uint8_t syndrome, std::uint32_t psn, Errc local_status);
  void send_read_responses(const SavedRead& read, std::uint32_t from_psn);
  void complete_recv(WcOpcode opcode, std::uint32_t byte_len, std::optional<std::uint32_t> imm,
                     bool solicited, std::error_code status = {});

  RcConfig cfg_;
  MrTable& mrs_;
  PacketSink& sink_;
  RcCounters& counters_;
  std::error_code error_;
  CompletionQueue cq_;

  // Requester state.
  std::deque<SendWqe> sq_;          // posted and not yet completed, in PSN order
  std::size_t next_wqe_ = 0;        // WQE holding the next packet to (re)transmit
  std::uint32_t next_pkt_ = 0;      // its packet index
  std::uint32_t sq_psn_ = 0;        // PSN for the next posted WR
  std::uint32_t una_psn_ = 0;       // oldest unacknowledged PSN
  std::uint32_t max_sent_psn_ = 0;  // one past the highest PSN sent so far
  std::uint8_t retries_left_ = 0;
  std::uint8_t rnr_retries_left_ = 0;
  std::optional<Clock::time_point> retransmit_at_;
  std::optional<Clock::time_point> rnr_until_;
  std::uint32_t rnr_psn_ = 0;  // the PSN the last RNR NAK named, resent when rnr_until_ passes
  bool rnr_echo_ = false;      // its one sequence-error NAK (PROTOCOL.md 3) has not come yet
  std::uint32_t reads_in_flight_ = 0;
  RttEstimator rtt_;
  std::optional<std::pair<std::uint32_t, Clock::time_point>> timed_;  // PSN whose ACK we time

  // Responder state.
  std::uint32_t epsn_ = 0;
  std::uint32_t msn_ = 0;
  bool seq_nak_outstanding_ = false;
  bool last_was_duplicate_ = false;
  enum class InMessage : std::uint8_t { none, send, write } in_msg_ = InMessage::none;
  std::deque<RecvWqe> rq_;
  std::uint32_t msg_bytes_ = 0;        // bytes received so far in the current message
  std::uint8_t* write_ptr_ = nullptr;  // where the next WRITE payload goes
  std::uint32_t write_rkey_ = 0;
  std::uint32_t write_length_ = 0;  // RETH DMA length of the current WRITE
  std::deque<SavedRead> reads_;     // for replaying duplicate READ requests
};

}  // namespace naa::host::detail
