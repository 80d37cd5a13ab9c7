// The lockstep runs' check (issue 14 item 3, issue 26 items 3 and 4): what is wrong with the exit
// statistics of a naa-sim that a lockstep run started with `args` (its arguments after --listen),
// or nullopt. A block family that has RTL at the run's --width (this build's Verilated widths,
// NAA_RTL_BLOCK_WIDTHS from cmake/NaaRtlBlock.cmake: the check's own knowledge, not naa-sim's
// mode logic) and was not asked to be the model must report lockstep, with no divergence, and its
// RTL must have done the family's work: every MR lookup, every run of a kernel with RTL (stored
// calls and streaming handlers), every packet the receive path checked.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace naa::testbench {

std::optional<std::string> lockstep_problem(const std::string& stats,
                                            const std::vector<std::string>& args);

}  // namespace naa::testbench
