// Memory: the card's DDR (ARCHITECTURE.md "The NAA model") as a sparse byte store behind a TLM-2.0
// target. b_transport annotates latency + ceil(len / mem_width) cycles; callers wait it. Pages
// that were never written read as zeros and take no host memory, so the default 4 GiB costs
// nothing until used.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"

namespace naa::sim {

class SparseStore {
 public:
  static constexpr std::uint64_t kPageSize = 64 * 1024;
  void read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const;
  void write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t len);
  void clear(std::uint64_t addr, std::uint64_t len);  // reads as zeros afterwards
  [[nodiscard]] std::size_t pages() const { return pages_.size(); }

 private:
  std::unordered_map<std::uint64_t, std::unique_ptr<std::uint8_t[]>> pages_;
};

// Provides the two TLM targets and MemoryScrub (to MrspHandler).
class Memory : public sc_core::sc_module, public MemoryScrub {
 public:
  // Two target ports (a simple_target_socket takes one initiator): Transport and KernelEngine.
  tlm_utils::simple_target_socket<Memory> socket;
  tlm_utils::simple_target_socket<Memory> kernel_socket;
  tlm_utils::simple_target_socket<Memory> handler_socket;  // HandlerEngine

  Memory(sc_core::sc_module_name name, const SimConfig& cfg);
  // Untimed access for the statistics and for clearing (modelled as a background scrub).
  void clear(std::uint64_t addr, std::uint64_t len) override { store_.clear(addr, len); }
  // Untimed read for checks outside the model (Naa::peek_memory).
  void peek(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const {
    store_.read(addr, out, len);
  }
  [[nodiscard]] std::uint64_t size() const { return cfg_.mem_size; }
  void report(std::ostream& os) const;

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);

  const SimConfig& cfg_;
  SparseStore store_;
  sc_core::sc_time busy_until_ = sc_core::SC_ZERO_TIME;
  std::uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0, busy_cycles_ = 0;
};

}  // namespace naa::sim
