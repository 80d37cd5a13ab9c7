// BlockModes: the options --mr-table, --kernels, --rx-pipe, --hpu and --blocks (docs/sim/rtl.md),
// how the blocks that also exist as RTL run, for every program that builds a Naa (naa-sim,
// naa-cosim): one parser, one set of defaults, one help text. naa::sim only reads them (it never
// sees Verilator); naa::sim_rtl builds the blocks they ask for (install_rtl_blocks,
// naa/sim/rtl_block_setup.hpp).
#pragma once

#include <string>
#include <string_view>

namespace naa::sim {

struct BlockModes {
  // The defaults (docs/sim/rtl.md "Defaults"): a program linked with the RTL blocks runs the MR
  // table and the kernels as RTL and the receive path as the model; one without runs the models.
  explicit BlockModes(bool rtl_built);

  std::string mr_table;  // model, rtl or lockstep
  std::string kernels;
  std::string rx_pipe;
  std::string hpu;              // the HPU cores that run sPIN handler images (rtl/hpu, --handler)
  bool mr_table_given = false;  // named on the command line (else the default or --blocks)
  bool kernels_given = false;
  bool rx_pipe_given = false;
  bool hpu_given = false;
  std::string blocks;  // --blocks; empty: not given

  // Takes option `name` (mr-table, kernels, rx-pipe, hpu or blocks) with `mode`; false with *why
  // for a mode other than model, rtl or lockstep.
  bool set(std::string_view name, std::string_view mode, std::string* why);
  // After the whole command line: --blocks applies to every block not named explicitly.
  void resolve();
  // A block is not the C++ model: the program needs the RTL blocks. The HPU cores are not
  // counted: they exist only when a handler image is given (hpu_rtl()).
  [[nodiscard]] bool any_rtl() const;
  [[nodiscard]] bool hpu_rtl() const { return hpu != "model"; }

  // The five options' help lines with this build's defaults (naa-sim's column layout).
  [[nodiscard]] static std::string help(bool rtl_built);
  // What a program built without the RTL blocks says when asked for them.
  [[nodiscard]] static std::string without_rtl(std::string_view program);
};

}  // namespace naa::sim
