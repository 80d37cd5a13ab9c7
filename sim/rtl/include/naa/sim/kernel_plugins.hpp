// naa-sim --kernel PATH.so (docs/rtl/kernel-shell.md "Plug-ins"): kernels from outside the
// repository, built by naa_add_kernel() against the installed package, loaded at startup and run
// like the built-in kernels with RTL: through the kernel shell's ports (ShellKernel) as the
// plug-in's Verilated RTL, its C++ model or both in lockstep, as --kernels says.
//
// KernelPlugins is a BlockFactory around the program's other one (RtlBlocks, or none when every
// block is the C++ model): it passes everything through and then registers the plug-ins' kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "naa/rtl/kernel_plugin.hpp"
#include "naa/sim/block_factory.hpp"
#include "naa/sim/rtl_blocks.hpp"

namespace naa::sim {

class KernelPlugins final : public BlockFactory {
 public:
  // Loads every path and makes its kernel's port in `mode` at cfg's width, reset. Throws
  // rtl::KernelPluginError with a message for the user: not a plug-in, another naa version,
  // a function code a built-in kernel or an earlier plug-in has, a width other than cfg.width,
  // model or lockstep mode for a plug-in without a model. `rtl` (may be null) receives lockstep
  // divergences and counts RTL cycles; `inner` is the factory passed through (may be null).
  KernelPlugins(std::span<const std::string> paths, BlockMode mode, const SimConfig& cfg,
                std::shared_ptr<RtlBlocks> rtl, std::shared_ptr<BlockFactory> inner);
  ~KernelPlugins() override;

  [[nodiscard]] std::unique_ptr<MrTableIf> make_mr_table(const SimConfig& cfg) override;
  void install_kernels(KernelRegistry& registry, const SimConfig& cfg) override;
  [[nodiscard]] std::unique_ptr<RxChecksIf> make_rx_checks(const SimConfig& cfg) override;
  // The inner factory's lines, then kernel_plugin.<name>.{fn,calls,cycles} per plug-in.
  void report(std::ostream& os) const override;

  // One line per plug-in for the user at startup ("xor_const (fn 9, W=64, rtl) from PATH").
  [[nodiscard]] std::vector<std::string> describe() const;

 private:
  struct Loaded;
  BlockMode mode_;
  std::shared_ptr<RtlBlocks> rtl_;
  std::shared_ptr<BlockFactory> inner_;
  std::vector<std::shared_ptr<Loaded>> loaded_;
};

}  // namespace naa::sim
