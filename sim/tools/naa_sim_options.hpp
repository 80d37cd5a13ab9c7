// naa-sim's command line (docs/sim/naa-sim.md): everything it asks for, parsed into Options.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "naa/impair/fault_spec.hpp"
#include "naa/sim/block_modes.hpp"
#include "naa/sim/config.hpp"
#include "naa/sim/runner.hpp"

namespace naa::sim::tools {

// The blocks' defaults follow the build: RTL for the MR table, the kernels and the HPU cores when
// naa-sim was built with it (naa::sim::BlockModes, docs/sim/rtl.md "Defaults").
#if NAA_SIM_HAS_RTL
inline constexpr bool kHasRtl = true;
#else
inline constexpr bool kHasRtl = false;
#endif

// Everything the command line asks for.
struct Options {
  naa::sim::SimConfig cfg;
  naa::sim::RunOptions run;
  naa::sim::LogLevel level = naa::sim::LogLevel::warn;
  // Blocks with RTL (docs/sim/rtl.md): parsed here, built by run() once the whole command line is
  // known.
  naa::sim::BlockModes blocks{kHasRtl};  // --mr-table, --kernels, --rx-pipe, --hpu, --blocks
  std::string trace_path;
  std::uint64_t trace_window = 0;    // --trace-window: cycles kept; 0 = the whole run
  std::uint64_t trace_start_ps = 0;  // --trace-start
  std::string mr_table_variant = "reference";
  std::string command_line;  // quoted for a shell: what a divergence report says to run again
  bool help = false;
  std::optional<naa::impair::FaultKey> fault_key;  // --fault-key
  std::vector<std::string> kernel_plugins;         // --kernel, in order
};

std::string usage();
// Prints the message and the usage, exits 2.
[[noreturn]] void usage_error(const std::string& msg);
// Reads the command line; a bad option prints usage and exits 2 (usage_error). --handler images
// are read and checked here (a file that cannot run: exit 2 with the reason).
Options parse_options(int argc, char* argv[]);

}  // namespace naa::sim::tools
