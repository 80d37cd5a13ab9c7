#include "naa/sim/kernel_plugins.hpp"

#include <stdexcept>
#include <utility>

#include "naa/rtl/kernel_driver.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/shell_kernel.hpp"

namespace naa::sim {

struct KernelPlugins::Loaded {
  std::shared_ptr<rtl::KernelPlugin> plugin;
  std::shared_ptr<rtl::KernelPort> port;
  std::uint64_t calls = 0;   // invocations
  std::uint64_t cycles = 0;  // their cycles
};

namespace {

// The function codes the built-in kernels answer (PROTOCOL.md 5.3): a plug-in may not take one.
std::vector<std::uint8_t> builtin_codes() {
  const KernelRegistry builtins = KernelRegistry::with_builtins();
  std::vector<std::uint8_t> codes;
  for (unsigned fn = 1; fn < 128; ++fn) {
    if (builtins.find(static_cast<std::uint8_t>(fn)) != nullptr) {
      codes.push_back(static_cast<std::uint8_t>(fn));
    }
  }
  return codes;
}

}  // namespace

KernelPlugins::KernelPlugins(std::span<const std::string> paths, BlockMode mode,
                             const SimConfig& cfg, std::shared_ptr<RtlBlocks> rtl,
                             std::shared_ptr<BlockFactory> inner)
    : mode_(mode), rtl_(std::move(rtl)), inner_(std::move(inner)) {
  const std::string kmode = "--kernels=" + std::string(to_string(mode));
  if (mode == BlockMode::lockstep && !rtl_) {
    throw std::logic_error("KernelPlugins: lockstep needs the RtlBlocks to report divergences to");
  }
  for (auto& plugin : rtl::KernelPlugin::load_all(paths, builtin_codes())) {
    const rtl::KernelPluginInfo& info = plugin->info();
    const std::string who = plugin->path() + ": " + info.name;
    // One datapath width in the NAA: a kernel of another width would need a width converter
    // that the simulated NAA does not have (the built-in kernels follow --width too).
    if (info.width != cfg.width) {
      throw rtl::KernelPluginError(
          who + " is built at WIDTH " + std::to_string(info.width) + ", naa-sim runs at --width " +
          std::to_string(cfg.width) + ": run with --width " + std::to_string(info.width) +
          " or rebuild it with naa_add_kernel(... WIDTH " + std::to_string(cfg.width) + ")");
    }
    if (mode != BlockMode::rtl && !plugin->has_model()) {
      throw rtl::KernelPluginError(who + ": " + kmode +
                                   " needs the kernel's C++ model, and the plug-in carries "
                                   "none (naa_add_kernel MODEL); use --kernels=rtl");
    }
    auto l = std::make_shared<Loaded>();
    l->plugin = plugin;
    rtl::RtlOptions o;
    o.name = info.name;
    switch (mode) {
      case BlockMode::model:
        l->port = plugin->make_model();
        break;
      case BlockMode::rtl:
        l->port = plugin->make_rtl(o);
        break;
      case BlockMode::lockstep: {
        // The first divergence goes where the built-in blocks' go: RtlBlocks prints the report
        // and stops the run (exit status 3).
        std::weak_ptr<RtlBlocks> blocks = rtl_;
        l->port = std::make_shared<rtl::KernelLockstep>(plugin->make_model(), plugin->make_rtl(o),
                                                        [blocks](const rtl::Divergence& d) {
                                                          if (auto b = blocks.lock())
                                                            b->on_divergence(d);
                                                        });
        break;
      }
    }
    rtl::reset_kernel(*l->port);
    loaded_.push_back(std::move(l));
  }
}

KernelPlugins::~KernelPlugins() = default;

std::unique_ptr<MrTableIf> KernelPlugins::make_mr_table(const SimConfig& cfg) {
  return inner_ ? inner_->make_mr_table(cfg) : nullptr;
}

std::unique_ptr<RxChecksIf> KernelPlugins::make_rx_checks(const SimConfig& cfg) {
  return inner_ ? inner_->make_rx_checks(cfg) : nullptr;
}

void KernelPlugins::install_kernels(KernelRegistry& registry, const SimConfig& cfg) {
  if (inner_) inner_->install_kernels(registry, cfg);
  for (const auto& l : loaded_) {
    const rtl::KernelPluginInfo& info = l->plugin->info();
    if (registry.find(info.function_code) != nullptr) {  // checked at load: a registry changed
      model_fatal("kernel_engine", l->plugin->path() + ": function code " +
                                       std::to_string(info.function_code) + " is taken");
    }
    ShellKernel::Spec spec;
    spec.fn = info.function_code;
    spec.name = info.name;
    spec.shape = info.shape;
    Loaded* raw = l.get();  // loaded_ outlives the registry's kernels: the Naa holds this factory
    std::shared_ptr<RtlBlocks> blocks = mode_ != BlockMode::model ? rtl_ : nullptr;
    registry.register_kernel(std::make_unique<ShellKernel>(
        std::move(spec), l->port, nullptr, [raw, blocks](const rtl::KernelInvocation& inv) {
          ++raw->calls;
          raw->cycles += inv.cycles;
          if (blocks) {
            blocks->counters.kernel_cycles += inv.cycles;
            ++blocks->counters.kernel_runs;
          }
        }));
  }
}

void KernelPlugins::report(std::ostream& os) const {
  if (inner_) inner_->report(os);
  for (const auto& l : loaded_) {
    const std::string key = "kernel_plugin." + std::string(l->plugin->info().name);
    os << key << ".fn=" << unsigned{l->plugin->info().function_code} << '\n'
       << key << ".calls=" << l->calls << '\n'
       << key << ".cycles=" << l->cycles << '\n';
  }
}

std::vector<std::string> KernelPlugins::describe() const {
  std::vector<std::string> lines;
  for (const auto& l : loaded_) {
    const rtl::KernelPluginInfo& info = l->plugin->info();
    lines.push_back("kernel plug-in " + std::string(info.name) + " (function code " +
                    std::to_string(info.function_code) + ", W=" + std::to_string(info.width) +
                    ", " + std::string(to_string(mode_)) + ") from " + l->plugin->path());
  }
  return lines;
}

}  // namespace naa::sim
