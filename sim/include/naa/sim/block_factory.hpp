// BlockFactory: where the Naa gets the implementations of the blocks that also exist as RTL
// (ARCHITECTURE.md "The NAA model": each runs as the C++ model, as Verilated RTL or in lockstep,
// chosen per block at run time). naa::sim itself knows only the C++ models and never sees
// Verilator; a program that wants RTL (naa-sim, through naa::sim_rtl, docs/sim/rtl.md) puts a
// factory into SimConfig::blocks. The Naa calls it while it is built, before simulation starts.
#pragma once

#include <memory>
#include <ostream>

#include "naa/rtl/hpu.hpp"
#include "naa/sim/config.hpp"
#include "naa/sim/kernels.hpp"
#include "naa/sim/mr_table.hpp"
#include "naa/sim/rx_checks.hpp"

namespace naa::sim {

class BlockFactory {
 public:
  virtual ~BlockFactory() = default;
  // The MR table behind MrTableIf; nullptr = the C++ model (MrTableModel).
  [[nodiscard]] virtual std::unique_ptr<MrTableIf> make_mr_table(const SimConfig& cfg) = 0;
  // Replaces kernels of `registry` by other implementations of the same function codes (a kernel
  // without another implementation stays as registered).
  virtual void install_kernels(KernelRegistry& registry, const SimConfig& cfg) = 0;
  // The receive path's ICRC and structural checks (rx_checks.hpp); nullptr (the default) = the
  // protocol library in RxPipe, the C++ model.
  [[nodiscard]] virtual std::unique_ptr<RxChecksIf> make_rx_checks(const SimConfig& /*cfg*/) {
    return nullptr;
  }
  // The core of HPU `index` that runs sPIN handler images (rtl/hpu); nullptr (the default) = the
  // C++ model (rtl::HpuModel). Called once per HPU while the Naa is built.
  [[nodiscard]] virtual std::unique_ptr<rtl::HpuPort> make_hpu(const SimConfig& /*cfg*/,
                                                               std::uint32_t /*index*/) {
    return nullptr;
  }
  // Statistics of the implementations, `key=value` lines (docs/sim/naa-sim.md).
  virtual void report(std::ostream& os) const = 0;
};

}  // namespace naa::sim
