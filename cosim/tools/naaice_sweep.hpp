// naa-cosim --naaice-sweep (issue 15 item 4): the NAAICE measurement program's sweep (one in/out
// region, fn 1, sizes 1 B .. --max) co-simulated, written as latency_naaice.csv
// (byte_length,setup_time,transfer_time in seconds of simulated time) with a gnuplot script beside
// it, and the mean relative deviation of transfer_time from a reference (the FPGA's published
// means, testbench/vectors/naaice/fpga_reference.csv) per size range, as NAAICE's own check
// computes it (tests/evaluation.py: mean over sizes of |ref - ours| / ref).
#pragma once

#include <cstdint>
#include <string>

#include "naa/cosim/cosim.hpp"

namespace naa::cosim {

struct SweepOptions {
  std::string csv_path;        // latency_naaice.csv
  std::string reference_path;  // NAAICE-form CSV to compare with (empty: none)
  std::uint64_t max_size = 64ULL << 20;
  int fn = 1;
  std::uint64_t seed = 1;
  std::string blocks = "model mode";  // how the blocks with RTL ran, for the speed line
};

// Runs the sweep on `cfg`; prints the deviation table; returns 0, or 1 if a call failed, 3 on a
// session or file error.
int run_naaice_sweep(const CosimConfig& cfg, const SweepOptions& o);

}  // namespace naa::cosim
