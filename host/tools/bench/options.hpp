// naa-bench's command line (usage text, parsing, validation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"

namespace naa::bench {

// The command line: what to measure (Config) and which naa-sim to start or attach to.
struct Options {
  Config c;
  std::string sim_path;   // --sim (default: naa-sim next to naa-bench)
  std::string sim_args;   // --sim-args
  std::string sim_stats;  // --sim-stats (with --naa)
  long sim_pid = 0;       // --sim-pid (with --naa)
  bool external = false;  // --naa: a running NAA
  bool cosim = false;     // --cosim: the calibrated co-simulation's NAAICE sweep instead
  std::string reference;  // --reference: NAAICE-form CSV for --cosim's deviation
  // --modes: the streaming measurement once per block mode (model, rtl, lockstep), each with a
  // naa-sim of its own (run_modes in naa_bench.cpp).
  std::vector<std::string> modes;
  bool loss_sweep = false;  // --loss-sweep: go-back-N vs IRN under loss (bench/loss_sweep.hpp)
  bool loss_constant_timers = false;      // --loss-timers constants: the host's constant timers
  std::uint32_t loss_timer_floor_us = 0;  // --timer-floor-us (0: the library's default)
};

// Reads the command line; a bad option prints usage and exits 2, --help prints it and exits 0.
Options parse_options(int argc, char** argv);

}  // namespace naa::bench
