// The naa-sim main loop (docs/sim/timing.md). SystemC owns simulated time; the runner alternates
// between running the kernel while the model has work and blocking on the socket (Boost.Asio)
// when it has none, so an idle NAA uses no CPU. It also owns the peer-wait timers
// (peer_timers.hpp): a timer fires only once its simulated AND its wall-clock deadline have passed,
// and while the model's only pending work is such timers the runner waits in wall time, advancing
// simulated time by the wall time waited, and wakes early for arriving datagrams.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "naa/sim/common.hpp"
#include "naa/sim/kernels.hpp"
#include "naa/sim/peer_timers.hpp"

namespace naa::sim {

struct RunOptions {
  std::uint32_t listen_ip = 0x7F000002;  // 127.0.0.2
  std::string pcap_path;                 // empty = no capture
  bool stats_on_exit = false;            // --stats
  std::string stats_file;                // stats go here instead of stdout
  // After a step that sent datagrams, non-blocking reads for up to this long (wall us) before
  // the blocking wait: the peer's answer often arrives within it, saving a wake-up (issue 19).
  std::uint32_t poll_us = 50;  // --poll-us; 0 = block at once
};

class Runner final : public PeerTimers {
 public:
  Runner(const SimConfig& cfg, RunOptions opts, LogLevel level);
  ~Runner();
  // Elaborates the model, serves until SIGINT/SIGTERM, returns the exit status.
  int run();

  void arm(PeerTimerClient& client, std::uint32_t cookie, sc_core::sc_time after) override;
  void cancel(PeerTimerClient& client, std::uint32_t cookie) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace naa::sim
