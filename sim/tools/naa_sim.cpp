// naa-sim: the simulated NAA (docs/sim/naa-sim.md). parse_options() reads the command line into
// Options; run() builds the RTL blocks it asks for and hands over to the Runner, which elaborates
// the SystemC model and serves until SIGINT/SIGTERM.
#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "naa/sim/block_modes.hpp"
#include "naa/sim/runner.hpp"
#include "naa_sim_options.hpp"
#if NAA_SIM_HAS_RTL
#include "naa/rtl/mr_table_broken_rtl.hpp"
#include "naa/sim/kernel_plugins.hpp"
#include "naa/sim/rtl_block_setup.hpp"
#include "naa/sim/rtl_blocks.hpp"
#endif
namespace {

using naa::sim::tools::Options;
using naa::sim::tools::usage;
using naa::sim::tools::usage_error;

// Serves as the options say; the exit status (docs/sim/naa-sim.md).
int run(Options options) {
  naa::sim::SimConfig& cfg = options.cfg;
  // Large transient buffers (a kernel's copy of its regions, a WQE's payload: up to the NAA's
  // memory per call) come from the heap and go back to it, instead of being fresh zero pages from
  // the OS on every call: glibc maps every block above 32 MiB anew and returns it at free, and
  // the first touch of each 4 KiB page is a page fault (in a VM several microseconds; a 64 MiB
  // call spent a quarter of naa-sim's time in them, docs/performance-wall-clock.md "Caller-driven
  // progress, copies per call"). Free memory above 256 MiB is still returned to the OS.
  (void)::mallopt(M_MMAP_MAX, 0);
  (void)::mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // SystemC's own reports would otherwise end the process on a warning-turned-error; keep them
  // as messages (nothing a peer sends reaches SystemC).
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY);
  const bool want_rtl =
      options.blocks.any_rtl() || !options.trace_path.empty() ||
      options.mr_table_variant != "reference" ||
      (options.blocks.hpu_rtl() && (!cfg.handler_images.empty() || options.blocks.hpu_given));
#if !NAA_SIM_HAS_RTL
  if (!options.kernel_plugins.empty()) {
    usage_error("--kernel: this naa-sim was built without RTL support (NAA_BUILD_RTL=OFF)");
  }
#endif
#if NAA_SIM_HAS_RTL
  std::shared_ptr<naa::sim::RtlBlocks> rtl;
  if (want_rtl) {
    naa::sim::RtlBlocksOptions ro;
    ro.trace_fst = options.trace_path;
    ro.trace_window = options.trace_window;
    ro.trace_start_ps = options.trace_start_ps;
    ro.command_line = options.command_line;
    // Without --seed the rkeys, comm IDs and PSNs of this run came from the OS random source: the
    // same command and traffic will not repeat them (docs/sim/naa-sim.md "Secrets and --seed").
    if (!cfg.seed) ro.command_line += "  (not seeded: add --seed N to make rkeys and PSNs repeat)";
    ro.mr_table_variant = options.mr_table_variant;
    if (options.mr_table_variant == "broken") {
      if (options.blocks.mr_table == "model") {
        usage_error("--mr-table-variant needs --mr-table=rtl or lockstep");
      }
      ro.mr_table_rtl = [](const naa::rtl::RtlOptions& o) {
        return naa::rtl::make_mr_table_broken_rtl(o);
      };
    }
    try {
      rtl = naa::sim::install_rtl_blocks(options.blocks, std::move(ro), cfg, std::cerr, "naa-sim");
    } catch (const std::exception& e) {
      usage_error(e.what());
    }
  }
  // Kernel plug-ins (--kernel): loaded and checked before anything serves; a plug-in that cannot
  // run is a bad command line (exit 2), said in one message without the usage text.
  if (!options.kernel_plugins.empty()) {
    try {
      const auto mode = naa::sim::parse_block_mode(options.blocks.kernels);
      auto plugins = std::make_shared<naa::sim::KernelPlugins>(
          options.kernel_plugins, mode.value_or(naa::sim::BlockMode::rtl), cfg, rtl, cfg.blocks);
      for (const std::string& line : plugins->describe())
        std::cerr << "naa-sim: " << line << '\n';
      cfg.blocks = std::move(plugins);
    } catch (const std::exception& e) {
      std::cerr << "naa-sim: " << e.what() << '\n';
      return 2;
    }
  }
#else
  if (want_rtl) {
    usage_error(naa::sim::BlockModes::without_rtl("naa-sim") + "; --trace is not available");
  }
#endif
  naa::sim::Runner runner(cfg, std::move(options.run), options.level);
  const int status = runner.run();
#if NAA_SIM_HAS_RTL
  // Stopped (a signal, or a divergence): the waveform's window is written and the file closed,
  // so it is complete whatever stopped the run.
  if (rtl) rtl->finish();
  // The run was stopped by a lockstep divergence (the report is on stderr).
  if (rtl && rtl->diverged()) return naa::sim::kExitLockstepDivergence;
#endif
  return status;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  Options options = naa::sim::tools::parse_options(argc, argv);
  if (options.help) {
    std::cout << usage();
    return 0;
  }
  return run(std::move(options));
}

// Our own main (libsystemc's would print its banner on stdout, which scripts parse, before
// sc_main runs): SystemC reads SYSTEMC_DISABLE_COPYRIGHT_MESSAGE from the environment.
int main(int argc, char* argv[]) {
  ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout must not end the NAA
  return sc_core::sc_elab_and_sim(argc, argv);
}
