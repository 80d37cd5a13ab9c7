// The peer-wait timers (peer_timers.hpp) as naa-sim's runner keeps them: each has a simulated
// and a wall-clock deadline and fires once both have passed (docs/sim/timing.md). Wall time is
// passed in, so the rules are tested exactly (test sim_wall_timers).
//
// Order: timers due at once fire in the order they were last armed (the Transport handles fired
// timers in the order they fire, and a retransmit timeout puts packets on the wire, so the order
// is observable). Re-arming a timer therefore moves it behind every other, as cancelling it and
// arming it anew did before issue 31.
//
// Issue 31: the IRN retransmit timer is armed and cancelled once per call. Each used to scan the
// whole list with remove_if and erase (arm cancelled first, then appended): ~100 instructions
// per nop call. At most one entry per (client, cookie) exists (arm keeps it so), so a scan may
// stop at the first match; a timer armed anew (the common case: the call's ACK cancelled the
// previous one) is one scan and an append.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "naa/sim/peer_timers.hpp"
#include "naa/sim/sim_time.hpp"

namespace naa::sim {

class WallTimerList {
 public:
  using Clock = std::chrono::steady_clock;
  struct Timer {
    PeerTimerClient* client;
    std::uint32_t cookie;
    sc_core::sc_time sim_deadline;
    Clock::time_point wall_deadline;
  };

  // (Re)arms (client, cookie): an armed one gets the new deadlines and moves to the end.
  void arm(PeerTimerClient& client, std::uint32_t cookie, const sc_core::sc_time& sim_deadline,
           Clock::time_point wall_deadline) {
    const Timer timer{&client, cookie, sim_deadline, wall_deadline};
    const auto it = find(client, cookie);
    if (it == timers_.end()) {
      timers_.push_back(timer);
      return;
    }
    std::rotate(it, it + 1, timers_.end());  // behind every other, as a cancel and an append
    timers_.back() = timer;
  }

  void cancel(PeerTimerClient& client, std::uint32_t cookie) {
    const auto it = find(client, cookie);
    if (it != timers_.end()) timers_.erase(it);
  }

  // Moves every timer whose simulated and wall deadlines have both passed into `due` (cleared
  // first), in the order they were armed; the others keep their order.
  void take_due(Clock::time_point now_wall, const sc_core::sc_time& now_sim,
                std::vector<Timer>& due) {
    due.clear();
    const auto it = std::remove_if(timers_.begin(), timers_.end(), [&](const Timer& t) {
      if (t.wall_deadline <= now_wall && t.sim_deadline <= now_sim) {
        due.push_back(t);
        return true;
      }
      return false;
    });
    timers_.erase(it, timers_.end());
  }

  // The earliest simulated deadline among timers whose wall deadline has passed at `now_wall`
  // (they may fire as soon as simulated time gets there), or nullopt.
  [[nodiscard]] std::optional<sc_core::sc_time> next_sim_deadline_wall_passed(
      Clock::time_point now_wall) const {
    std::optional<sc_core::sc_time> best;
    for (const Timer& t : timers_) {
      if (t.wall_deadline <= now_wall && (!best || t.sim_deadline < *best)) best = t.sim_deadline;
    }
    return best;
  }

  // Whether next_sim_deadline_wall_passed(now_wall) has a value.
  [[nodiscard]] bool any_wall_passed(Clock::time_point now_wall) const {
    return std::any_of(timers_.begin(), timers_.end(),
                       [&](const Timer& t) { return t.wall_deadline <= now_wall; });
  }

  [[nodiscard]] const std::vector<Timer>& timers() const { return timers_; }
  [[nodiscard]] bool empty() const { return timers_.empty(); }
  [[nodiscard]] std::size_t size() const { return timers_.size(); }

 private:
  // A plain loop, inline: the list holds a few timers (a connection's idle and retransmit
  // timers), and std::find_if's unrolled loop was a call costing more than the scan.
  std::vector<Timer>::iterator find(const PeerTimerClient& client, std::uint32_t cookie) {
    auto it = timers_.begin();
    while (it != timers_.end() && (it->client != &client || it->cookie != cookie))
      ++it;
    return it;
  }

  std::vector<Timer> timers_;
};

// The simulated time a wall wait of `waited` stands for (the runner advances simulated time by
// the wall time an idle model waited): sc_time(waited in seconds, SC_SEC) without SystemC's
// double constructor (issue 31: ~36 instructions per nop call). That constructor sets
// value = int64(v * 1e12 + 0.5) at 1 ps, v = ns / 1e9 as a double. For ns < 2^40 (~18 min) both
// roundings together are off from 1000 ns by less than 1000 ns * 2^-52 < 0.25, and the doubles
// near 1000 ns are 0.25 apart or closer, so the sum lies in (1000 ns, 1000 ns + 1) and is
// truncated to 1000 ns: from_value's value. Longer waits and other resolutions take the double
// constructor as before (test sim_wall_timers compares the two).
[[nodiscard]] inline sc_core::sc_time wall_wait_time(std::chrono::nanoseconds waited) {
  const std::int64_t ns = waited.count();
  if (ns >= 0 && ns < (std::int64_t{1} << 40) && resolution_is_1ps()) {
    return sc_core::sc_time::from_value(static_cast<std::uint64_t>(ns) * 1000);
  }
  return sc_core::sc_time(std::chrono::duration<double>(waited).count(), sc_core::SC_SEC);
}

}  // namespace naa::sim
