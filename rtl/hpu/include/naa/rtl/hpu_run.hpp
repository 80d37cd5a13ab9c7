// Running calls on an HPU core (model, RTL or lockstep): the memory side of hpu's port, a bus
// that answers each request after a latency, a watchdog, and a flat memory with per-region
// permissions for tests and the HandlerEngine (rtl/hpu/README.md "Running a call").
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "naa/rtl/hpu.hpp"

namespace naa::rtl {

// One request as the core presented it (HpuOutputs' mem_* fields).
struct HpuAccess {
  bool fetch = false;
  bool write = false;
  std::uint32_t addr = 0;
  std::uint8_t be = 0xF;
  std::uint32_t wdata = 0;
};

struct HpuBusResponse {
  bool error = false;         // refused: the core traps (fetch_fault, load_fault, store_fault)
  std::uint32_t rdata = 0;    // the aligned word containing the access
  std::uint32_t latency = 1;  // cycles from the request to the response, at least 1
};

// What answers the core's requests: memory, and the memory-mapped sPIN actions later. Called
// once per request, in the cycle the core presents it.
class HpuBus {
 public:
  virtual ~HpuBus() = default;
  virtual HpuBusResponse access(const HpuAccess& a) = 0;
};

struct HpuCall {
  std::uint32_t entry = 0;
  std::uint32_t sp = 0;
  std::array<std::uint32_t, 3> args{};
  std::uint64_t max_cycles = 1'000'000;  // the watchdog
};

enum class HpuOutcome : std::uint8_t { returned, trapped, watchdog };

struct HpuCallResult {
  HpuOutcome outcome = HpuOutcome::returned;
  std::uint32_t ret = 0;  // a0, when returned
  HpuTrap trap = HpuTrap::none;
  std::uint32_t trap_pc = 0;
  std::uint64_t cycles = 0;  // from the start cycle to the done/trap cycle, both included
};

// One cycle with rst_n low: the core is idle afterwards.
void reset_hpu(HpuPort& core);
// Runs one call on an idle core. On the watchdog the core is reset (it was mid-call).
HpuCallResult run_hpu_call(HpuPort& core, HpuBus& bus, const HpuCall& call);

// Flat memory: regions at fixed addresses, each readable, optionally writable and executable;
// every other address is refused (the core traps), as are writes to a read-only region and
// fetches outside an executable one.
class HpuMemory final : public HpuBus {
 public:
  struct Region {
    std::uint32_t base = 0;
    std::vector<std::uint8_t> bytes;
    bool writable = false;
    bool executable = false;
  };
  explicit HpuMemory(std::uint32_t latency = 1) : latency_(latency) {}
  // Adds a region (zero-filled) and returns it. Regions must not overlap (std::invalid_argument).
  Region& add(std::uint32_t base, std::uint32_t size, bool writable, bool executable);
  // The region holding [addr, addr + len), or nullptr.
  [[nodiscard]] Region* find(std::uint32_t addr, std::uint32_t len);
  // Copies bytes in or out; false if the range is not inside one region.
  bool write(std::uint32_t addr, std::span<const std::uint8_t> data);
  bool read(std::uint32_t addr, std::span<std::uint8_t> out);

  HpuBusResponse access(const HpuAccess& a) override;
  [[nodiscard]] std::uint64_t accesses() const noexcept { return accesses_; }

 private:
  std::uint32_t latency_;
  std::vector<Region> regions_;
  std::uint64_t accesses_ = 0;
};

}  // namespace naa::rtl
