// The interface the UdpRoce endpoint drives a queue pair through: one per RC implementation.
// RcQp (rc_qp.hpp) is go-back-N as PROTOCOL.md 3 and every standard peer speak it; IrnQp
// (irn_qp.hpp) is IRN's selective repeat, used only when the CM exchange negotiated it
// (docs/protocol.md "IRN"). Both are pure state machines: no socket, no clock of their own.
//
// Not thread-safe: the endpoint calls them under its lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <system_error>

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
  // A packet addressed to this QP whose ICRC has been verified.
  virtual void on_packet(const protocol::PacketView& packet, Clock::time_point now) = 0;
  virtual void on_timer(Clock::time_point now) = 0;
  [[nodiscard]] virtual std::optional<Clock::time_point> next_deadline() const noexcept = 0;
  virtual void to_error(std::error_code status) = 0;
  [[nodiscard]] virtual std::size_t poll(std::span<WorkCompletion> out) = 0;
  [[nodiscard]] virtual bool has_completions() const noexcept = 0;
};

}  // namespace naa::host::detail
