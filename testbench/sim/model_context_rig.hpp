// What a block of the model needs around it to run in-process without naa-sim (the block tests:
// test_block_ports.cpp, test_link_model.cpp, test_kernel_post.cpp): a ModelContext over its own
// configuration, packet pool, QPs and timers that never fire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "naa/sim/context.hpp"
#include "naa/sim/memory.hpp"
#include "naa/sim/memory_port.hpp"

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

// The figure `key` a block prints in its report() ("key=value" lines), or all ones if it prints
// none, which fails any check on it.
template <class Block>
std::uint64_t reported(const Block& block, const std::string& key) {
  std::ostringstream os;
  block.report(os);
  std::istringstream in(os.str());
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + "=", 0) == 0) return std::stoull(line.substr(key.size() + 1));
  }
  return ~std::uint64_t{0};
}

// Initiators for the Memory target sockets the blocks under test leave unbound (SystemC requires
// every socket bound, and a port to live in a module).
class UnusedMemoryInitiators : public sc_core::sc_module {
 public:
  using Target = tlm_utils::simple_target_socket<sim::Memory>;
  UnusedMemoryInitiators(const sc_core::sc_module_name& name, sim::Memory& memory,
                         const std::vector<Target*>& targets)
      : sc_module(name) {
    for (Target* t : targets) {
      ports_.push_back(
          std::make_unique<sim::MemoryPort>(("unused_" + std::to_string(ports_.size())).c_str()));
      ports_.back()->bind_memory(memory, *t);
    }
  }

 private:
  std::vector<std::unique_ptr<sim::MemoryPort>> ports_;
};

}  // namespace naa::testbench
