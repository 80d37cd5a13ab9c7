// The interface the UdpRoce endpoint drives a queue pair through: one per RC implementation.
// RcQp (rc_qp.hpp) is go-back-N as PROTOCOL.md 3 and every standard peer speak it; IrnQp
// (irn_qp.hpp) is IRN's selective repeat, used only when the CM exchange negotiated it
// (docs/protocol.md "IRN"). Both are pure state machines: no socket, no clock of their own.
//
// Not thread-safe: the endpoint calls them under its lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <span>
#include <system_error>

#include "naa/host/error.hpp"
#include "naa/host/transport.hpp"
#include "naa/protocol/packet.hpp"

namespace naa::host::detail {

using Clock = std::chrono::steady_clock;

class QpEngine {
 public:
  virtual ~QpEngine() = default;
  [[nodiscard]] virtual std::error_code error() const noexcept = 0;
  [[nodiscard]] bool in_error() const noexcept { return static_cast<bool>(error()); }
  virtual std::error_code post_send(const SendWr& wr, Clock::time_point now) = 0;
  virtual std::error_code post_recv(const RecvWr& wr) = 0;
  // QueuePair::cancel_recv (transport.hpp): not_supported unless the engine can.
  virtual std::error_code cancel_recv(std::uint64_t wr_id) {
    (void)wr_id;
    return make_error_code(Errc::not_supported);
  }
  // A packet addressed to this QP whose ICRC has been verified.
  virtual void on_packet(const protocol::PacketView& packet, Clock::time_point now) = 0;
  virtual void on_timer(Clock::time_point now) = 0;
  [[nodiscard]] virtual std::optional<Clock::time_point> next_deadline() const noexcept = 0;
  // The packet with this PSN, which the QP sent, left the NIC for the wire
  // (UdpRoceOptions::wire_timers). True when that armed the retransmit timer.
  virtual bool on_wire(std::uint32_t psn, Clock::time_point now) {
    (void)psn;
    (void)now;
    return false;
  }
  virtual void to_error(std::error_code status) = 0;
  [[nodiscard]] virtual std::size_t poll(std::span<WorkCompletion> out) = 0;
  [[nodiscard]] virtual bool has_completions() const noexcept = 0;
};

// What both implementations share: the completion queue, polled in order, and the flush of the
// queues when the QP goes to error (PROTOCOL.md 3, IBTA 10.3.1): the oldest send WR completes
// with the error, every later one and every receive WR with Errc::flushed. `opcode_of` gives a
// send WQE's completion opcode; WQEs carry their work request as `.wr`.
class CompletionQueue {
 public:
  void push(const WorkCompletion& wc) { q_.push_back(wc); }
  [[nodiscard]] bool empty() const noexcept { return q_.empty(); }
  [[nodiscard]] std::size_t poll(std::span<WorkCompletion> out) {
    std::size_t n = 0;
    while (n < out.size() && !q_.empty()) {
      out[n++] = q_.front();
      q_.pop_front();
    }
    return n;
  }
  template <class SendQueue, class RecvQueue, class OpcodeOf>
  void flush(SendQueue& sq, RecvQueue& rq, std::error_code status, std::uint32_t qpn,
             OpcodeOf opcode_of) {
    bool front = true;
    for (const auto& w : sq) {
      WorkCompletion wc;
      wc.wr_id = w.wr.wr_id;
      wc.status = front ? status : make_error_code(Errc::flushed);
      wc.opcode = opcode_of(w);
      wc.qp_num = qpn;
      q_.push_back(wc);
      front = false;
    }
    sq.clear();
    for (const auto& r : rq) {
      WorkCompletion wc;
      wc.wr_id = r.wr.wr_id;
      wc.status = Errc::flushed;
      wc.opcode = WcOpcode::recv;
      wc.qp_num = qpn;
      q_.push_back(wc);
    }
    rq.clear();
  }

 private:
  std::deque<WorkCompletion> q_;
};

}  // namespace naa::host::detail
