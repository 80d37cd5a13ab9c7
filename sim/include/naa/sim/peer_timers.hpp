// Timers that model waiting for the peer: the RC retransmit timer, the RNR wait and the expiry of
// a half-open CM connection. They differ from every other delay in the model: the other delays
// are the NAA's own work and may run ahead of wall time, but these stand for time the PEER gets to
// answer, and a peer is real and lives in wall time. So they are not plain SystemC timed events:
// the runner owns them and fires one only when its simulated deadline AND its wall-clock deadline
// have both passed (docs/sim/timing.md). Without a runner (a pure simulation), SimOnlyTimers fires
// them in simulated time alone.
#pragma once

#include <cstdint>

#include <systemc>

namespace naa::sim {

class PeerTimerClient {
 public:
  // Called between delta cycles or between sc_start() calls; it may only notify events and set
  // state for the client's processes to pick up.
  virtual void on_peer_timer(std::uint32_t cookie) = 0;

 protected:
  ~PeerTimerClient() = default;
};

class PeerTimers {
 public:
  // (Re)arms the timer (client, cookie) to fire `after` from now. Arming an armed timer restarts
  // it.
  virtual void arm(PeerTimerClient& client, std::uint32_t cookie, sc_core::sc_time after) = 0;
  virtual void cancel(PeerTimerClient& client, std::uint32_t cookie) = 0;

 protected:
  ~PeerTimers() = default;
};

}  // namespace naa::sim
