// When naa-sim's runner polls its socket before it blocks (--poll-us; docs/sim/timing.md
// "Polling before a wait"). A blocking wait costs a wake-up (the scheduler's latency, ~10-30 us
// on the VMs CI runs in) when the next datagram comes; while a peer is active, its next datagram
// usually comes sooner. The window is --poll-us of wall time after the last datagram the model
// sent OR read: a call's request, the NAA's ACK and answer, then the host's ACK of the answer,
// after which the host posts its next call. Until issue 31 only a step that sent opened it, so
// the wait after the host's ACK (read, nothing sent) blocked and the next request paid the
// wake-up: a 64 B nop call took 23-29 us (median) instead of 18 us on the same machine.
// An idle naa-sim never polls: nothing moves the window without a datagram.
#pragma once

#include <chrono>
#include <cstdint>

namespace naa::sim {

class PollWindow {
 public:
  using Clock = std::chrono::steady_clock;

  explicit PollWindow(std::chrono::microseconds length) : length_(length) {}

  // `datagrams` = datagrams read + datagrams sent so far; a change since the last call reopens
  // the window at `now`.
  void note(std::uint64_t datagrams, Clock::time_point now) {
    if (length_.count() == 0 || datagrams == seen_) return;
    seen_ = datagrams;
    until_ = now + length_;
  }
  // Whether note(datagrams, ...) would reopen the window (the caller reads the clock only then).
  [[nodiscard]] bool moved(std::uint64_t datagrams) const {
    return length_.count() != 0 && datagrams != seen_;
  }
  // Whether a wait starting at `now` polls first.
  [[nodiscard]] bool open(Clock::time_point now) const { return now < until_; }
  // The end of the poll: the window's end or `limit`, whichever is first.
  [[nodiscard]] Clock::time_point end(Clock::time_point limit) const {
    return limit < until_ ? limit : until_;
  }

 private:
  std::chrono::microseconds length_;
  std::uint64_t seen_ = 0;
  Clock::time_point until_{};
};

}  // namespace naa::sim
