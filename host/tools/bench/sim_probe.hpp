// naa-bench: the NAA's simulated time around a measured point, from naa-sim's statistics
// (naa::tools::SimProcess and sim_stats.hpp, shared with the tests' naa-sim fixture).
#pragma once

#include <iostream>
#include <optional>

#include "bench_util.hpp"
#include "naa/tools/sim_process.hpp"
#include "naa/tools/sim_stats.hpp"

namespace naa::bench {

using naa::tools::sim_stat;
using naa::tools::SimStats;

// Busy cycles per block and simulated time between two snapshots.
struct SimDelta {
  bool valid = false;
  double time_ns = 0;
  double cycles = 0;
  double work_cycles = 0;
  double peer_wait_ns = 0;  // simulated time that only waited for peers (not in time_ns)
  double clock_mhz = 0;
  double wall_s = 0;  // naa-sim's own wall clock between the snapshots
  double transport = 0;
  double memory = 0;
  double kernel = 0;
  double net_port = 0;
  double rx_pipe = 0;
  double tx_pipe = 0;
  double rx_payload_bytes = 0;
  double cpu_s = 0;  // naa-sim's CPU time (user + system) between the snapshots
};

inline SimDelta delta(const std::optional<SimStats>& a, const std::optional<SimStats>& b,
                      double cpu_s) {
  SimDelta d;
  if (!a || !b) return d;
  auto df = [&](const char* k) { return sim_stat(*b, k) - sim_stat(*a, k); };
  d.valid = true;
  // The NAA's own time: sim.work_cycles leaves out the simulated time that only followed wall
  // time while the model waited for a peer (retransmit/RNR timers pending, docs/sim/timing.md).
  d.work_cycles = df("sim.work_cycles");
  d.cycles = d.work_cycles;
  const double mhz = sim_stat(*b, "sim.clock_mhz");
  d.time_ns = mhz > 0 ? d.work_cycles * 1e3 / mhz : 0.0;
  d.peer_wait_ns = df("sim.peer_wait_ns");
  d.clock_mhz = mhz;
  d.wall_s = df("wall.seconds");
  d.transport = df("transport.rx_cycles") + df("transport.tx_cycles");
  d.memory = df("memory.cycles");
  d.kernel = df("kernel.cycles");
  d.net_port = df("net_port.rx_cycles") + df("net_port.tx_cycles");
  d.rx_pipe = df("rx_pipe.cycles");
  d.tx_pipe = df("tx_pipe.cycles");
  d.rx_payload_bytes = df("transport.rx_payload_bytes");
  d.cpu_s = cpu_s;
  return d;
}

using naa::tools::SimProcess;

// A statistics snapshot, or nullopt (with a warning: the simulated figures of this point are
// then missing) if naa-sim does not give one.
inline std::optional<SimStats> snapshot(SimProcess& sim) {
  if (sim.pid() <= 0 || sim.stats_file().empty()) return std::nullopt;
  try {
    return naa::tools::parse_sim_stats(sim.snapshot(std::chrono::seconds(10)));
  } catch (const naa::tools::SimProcessError& e) {
    std::cerr << "naa-bench: " << e.what() << "\n";
    return std::nullopt;
  }
}

// Snapshot pair around a measured point, with naa-sim's CPU time.
class SimProbe {
 public:
  explicit SimProbe(SimProcess& sim) : sim_(sim) {}
  void begin() {
    before_ = snapshot(sim_);
    cpu_before_ = sim_.cpu_seconds();
  }
  SimDelta end() {
    const auto after = snapshot(sim_);
    const auto cpu_after = sim_.cpu_seconds();
    const double cpu = (cpu_before_ && cpu_after) ? *cpu_after - *cpu_before_ : 0.0;
    return delta(before_, after, cpu);
  }

 private:
  SimProcess& sim_;
  std::optional<SimStats> before_;
  std::optional<double> cpu_before_;
};

}  // namespace naa::bench
