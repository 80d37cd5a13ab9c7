// What a block of the model needs around it to run in-process without naa-sim (the block tests:
// test_block_ports.cpp, test_link_model.cpp, test_kernel_post.cpp): a ModelContext over its own
// configuration, packet pool, QPs and timers that never fire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "naa/sim/context.hpp"

namespace naa::testbench {

// Peer timers that are never armed to fire (no block under test here waits for a peer).
class NoTimers final : public sim::PeerTimers {
 public:
  void arm(sim::PeerTimerClient&, std::uint32_t, sc_core::sc_time) override {}
  void cancel(sim::PeerTimerClient&, std::uint32_t) override {}
};

struct ModelContextRig {
  explicit ModelContextRig(sim::SimConfig c = {}, std::size_t packets = 64)
      : cfg(c), pool(packets) {}
  ModelContextRig(const ModelContextRig&) = delete;
  ModelContextRig& operator=(const ModelContextRig&) = delete;

  const sim::SimConfig cfg;
  const sim::Log log{sim::LogLevel::error};
  sim::PacketPool pool;
  NoTimers timers;
  sim::SecretSource rng{std::uint64_t{1}};
  std::vector<sim::Qp> qps = std::vector<sim::Qp>(cfg.qps);
  sim::ModelContext ctx{cfg, log, pool, timers, rng, 1, qps};
};

}  // namespace naa::testbench
