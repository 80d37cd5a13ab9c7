#include "naa/sim/rtl_block_setup.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace naa::sim {

namespace {

BlockMode mode_of(const std::string& m, const char* option) {
  const auto mode = parse_block_mode(m);
  if (!mode) throw std::invalid_argument(std::string(option) + ": bad mode " + m);
  return *mode;
}

}  // namespace

std::shared_ptr<RtlBlocks> install_rtl_blocks(const BlockModes& modes, RtlBlocksOptions options,
                                              SimConfig& cfg, std::ostream& notes,
                                              std::string_view program) {
  options.mr_table = mode_of(modes.mr_table, "--mr-table");
  options.kernels = mode_of(modes.kernels, "--kernels");
  options.kernels_by_default = !modes.kernels_given;
  options.rx_pipe = mode_of(modes.rx_pipe, "--rx-pipe");
  options.rx_pipe_by_default = !modes.rx_pipe_given;
  options.hpu = mode_of(modes.hpu, "--hpu");
  options.hpu_given = modes.hpu_given;
  auto rtl = std::make_shared<RtlBlocks>(std::move(options), cfg);
  for (const std::string& note : rtl->notes())
    notes << program << ": " << note << '\n';
  cfg.blocks = rtl;
  return rtl;
}

}  // namespace naa::sim
