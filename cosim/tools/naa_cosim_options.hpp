// naa-cosim's command line (docs/adr/0004): everything it asks for, parsed into Options.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loss_sweep.hpp"
#include "naa/cosim/cosim.hpp"
#include "naa/sim/block_modes.hpp"
#include "naaice_sweep.hpp"

namespace naa::cosim::tools {

// The blocks with RTL run as naa-sim's do for the same options, with the same defaults
// (naa::sim::BlockModes, docs/sim/rtl.md "Defaults").
#if NAA_COSIM_HAS_RTL
inline constexpr bool kHasRtl = true;
#else
inline constexpr bool kHasRtl = false;
#endif
// The exit status after a lockstep divergence (its report on stderr).
inline constexpr int kExitLockstepDivergence = 4;

struct RegionArg {
  enum Kind : unsigned { in = 1, out = 2, inout = 3, stream_in = 4, stream_inout = 5 };
  unsigned kind = 0;
  std::uint64_t size = 0;
  std::string source;  // gen:SIZE[:SEED], seq:SIZE or "" (out)
};

struct Options {
  naa::cosim::CosimConfig cfg;
  int fn = 0;
  int repeat = 1;
  std::uint32_t mtu = 4096;
  std::uint64_t seed = 1;
  std::vector<RegionArg> regions;
  std::uint64_t stream_arg = 0;  // --stream-arg: the streaming descriptor's argument
  bool irn = false;              // --irn: the host offers IRN (default go-back-N)
  bool rto_given = false;        // --rto-high / --rto-low: one session uses them too
  bool stats = false;
  std::string save_regions;  // --save-regions DIR: every region's bytes before and after
  bool quiet = false;
  naa::cosim::SweepOptions sweep;  // csv_path set: --naaice-sweep
  naa::cosim::LossSweepOptions loss;
  bool loss_sweep = false;
  naa::sim::BlockModes blocks{kHasRtl};  // --mr-table, --kernels, --rx-pipe, --hpu, --blocks
  std::string command_line;              // for a lockstep divergence report
};

std::string usage();
// Prints the message and the usage, exits 2.
[[noreturn]] void usage_error(const std::string& msg);
// Reads the command line; a bad option prints usage and exits 2 (usage_error).
Options parse_options(int argc, char* argv[]);

}  // namespace naa::cosim::tools
