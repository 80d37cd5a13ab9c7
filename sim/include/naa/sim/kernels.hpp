// The kernel registry (PROTOCOL.md 5.3): a kernel is a class with a function code, a name, a cycle
// cost model and a run() over the connection's regions. Adding a kernel is adding a class and one
// register_kernel() line (docs/rtl/add-a-kernel.md), not editing a switch. A kernel backed by
// Verilated RTL (naa::sim_rtl, docs/sim/rtl.md) implements the same contract; its execute() takes
// the cycle count from the RTL run instead of the cost model.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"

namespace naa::sim {

// One region of the call, in MRSP 0x01 order, with its bytes loaded (non-internal regions only;
// internal regions have an empty `bytes`).
struct KernelRegion {
  std::uint8_t flags = 0;  // protocol::kMrspFlag*
  std::uint64_t naa_address = 0;
  std::uint32_t size = 0;
  std::span<std::uint8_t> bytes;
  std::uint32_t result_length = 0;  // set by the kernel for OUTPUT regions (default: size)

  [[nodiscard]] bool is_input() const { return (flags & protocol::kMrspFlagInput) != 0; }
  [[nodiscard]] bool is_output() const { return (flags & protocol::kMrspFlagOutput) != 0; }
  [[nodiscard]] bool is_internal() const { return (flags & protocol::kMrspFlagInternal) != 0; }
};

struct KernelCall {
  std::uint8_t fn = 0;
  std::uint32_t user = 0;  // the 24 user bits of the immediate
  std::span<KernelRegion> regions;

  // The i-th INPUT / OUTPUT region (in 0x01 order), or nullptr.
  [[nodiscard]] KernelRegion* input(std::size_t i) const;
  [[nodiscard]] KernelRegion* output(std::size_t i) const;
};

// The outcome of one kernel run: the return code and the compute cycles it took.
struct KernelRun {
  std::uint32_t rc = 0;
  std::uint64_t cycles = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  [[nodiscard]] virtual std::uint8_t function_code() const = 0;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Return code 0x04 (invalid arguments) if the call lacks what the kernel needs, else 0.
  [[nodiscard]] virtual std::uint32_t check(const KernelCall& call) const = 0;
  // Compute cycles at datapath width `width` (the cost model; excludes memory transfers).
  [[nodiscard]] virtual std::uint64_t cycles(const KernelCall& call, std::uint32_t width) const = 0;
  // Runs on the loaded bytes; returns the return code (0 = success, 0x10.. kernel-specific).
  virtual std::uint32_t run(KernelCall& call) const = 0;
  // What the KernelEngine calls (after check() passed): runs and says how many cycles it took.
  // The default is the cost model plus run(); an RTL-backed kernel counts the cycles at its
  // block's ports.
  virtual KernelRun execute(KernelCall& call, std::uint32_t width) const {
    const std::uint64_t c = cycles(call, width);
    return KernelRun{run(call), c};
  }
  // True if execute() does nothing but compute on the call's buffers (the built-in C++ models):
  // what it does cannot be seen at the simulated time it runs, so the KernelEngine may run it
  // as soon as the last load has been issued and wait the load's time and the kernel's as one
  // (issue 31: one process activation less per call; the same end time). False (the default)
  // for a kernel that clocks an RTL block: its beats are at the time it runs (waveforms).
  [[nodiscard]] virtual bool computes_only() const { return false; }
};

class KernelRegistry {
 public:
  // Registers k under its function code, replacing what was there.
  void register_kernel(std::unique_ptr<Kernel> k);
  // Inline: once per kernel call (issue 31).
  [[nodiscard]] const Kernel* find(std::uint8_t fn) const {
    return fn < by_fn_.size() ? by_fn_[fn].get() : nullptr;
  }
  // Removes the kernel of `fn` and hands it over (nullptr if none): to wrap it in another
  // implementation of the same function and register that.
  [[nodiscard]] std::unique_ptr<Kernel> take(std::uint8_t fn);
  [[nodiscard]] std::size_t size() const;
  // The registry with the built-in kernels of PROTOCOL.md 5.3.
  [[nodiscard]] static KernelRegistry with_builtins();

 private:
  std::vector<std::unique_ptr<Kernel>> by_fn_ = std::vector<std::unique_ptr<Kernel>>(128);
};

}  // namespace naa::sim
