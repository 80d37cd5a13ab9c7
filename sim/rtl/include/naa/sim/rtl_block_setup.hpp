// install_rtl_blocks: how naa-sim and naa-cosim turn their block options (BlockModes,
// naa/sim/block_modes.hpp) into the RtlBlocks of SimConfig::blocks (docs/sim/rtl.md), so both
// programs run the same blocks for the same options.
#pragma once

#include <memory>
#include <ostream>
#include <string_view>

#include "naa/sim/block_modes.hpp"
#include "naa/sim/config.hpp"
#include "naa/sim/rtl_blocks.hpp"

namespace naa::sim {

// Sets the modes of `modes` in `options` (a mode that is the default, not asked for, lets a block
// not Verilated at cfg.width stay the C++ model), builds the RtlBlocks for `cfg`, puts them into
// cfg.blocks and writes their notes to `notes` as "<program>: <note>" lines. Throws
// std::invalid_argument with a message for the user when the options cannot work with cfg.
std::shared_ptr<RtlBlocks> install_rtl_blocks(const BlockModes& modes, RtlBlocksOptions options,
                                              SimConfig& cfg, std::ostream& notes,
                                              std::string_view program);

}  // namespace naa::sim
