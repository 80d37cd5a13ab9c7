#include "naa/sim/block_modes.hpp"

#include <utility>

namespace naa::sim {

namespace {

// The receive path's default is the C++ model whatever the build: its RTL (rx_parser,
// icrc_check) costs about 15 times the model's wall time while streaming (docs/sim/rtl.md "What
// each mode costs"); --rx-pipe=rtl or --blocks=rtl asks for it.
constexpr const char* kRxPipeDefault = "model";

const char* default_mode(bool rtl_built) {
  return rtl_built ? "rtl" : "model";
}

bool valid_mode(std::string_view m) {
  return m == "model" || m == "rtl" || m == "lockstep";
}

constexpr const char* kHelp =
    R"(  --mr-table=MODE    the MR table as the C++ model, as the Verilated RTL (rtl/mr_table/mr_table.sv),
                     or both in lockstep: model, rtl or lockstep (default @DEFAULT_MODE@)
  --kernels=MODE     the same for the kernels that have RTL (add1/add2, vadd_i32, sum_u64,
                     crc32; RTL kernels need --width 16 or 64, add1/add2 also 1); others stay
                     C++ models
                     (default @DEFAULT_MODE@; by default a kernel not Verilated at --width
                     stays the C++ model)
  --rx-pipe=MODE     the receive path's checks (rtl/rx_parser: headers, TVer, pad, length,
                     opcode; rtl/icrc_check: the ICRC) as the C++ model, the Verilated RTL or
                     both in lockstep: model, rtl or lockstep (default @RX_DEFAULT@); in rtl
                     mode the drop counters take the RTL's reasons
  --hpu=MODE         the HPU cores that run sPIN handler images (--handler; rtl/hpu, RV32IM) as
                     the C++ model, the Verilated RTL or both in lockstep (default @DEFAULT_MODE@)
  --blocks=MODE      every block with RTL in MODE (model, rtl or lockstep) as a default: a block
                     not Verilated at --width stays the C++ model (a note says so); an explicit
                     --mr-table, --kernels, --rx-pipe or --hpu wins
)";

}  // namespace

BlockModes::BlockModes(bool rtl_built)
    : mr_table(default_mode(rtl_built)),
      kernels(default_mode(rtl_built)),
      rx_pipe(kRxPipeDefault),
      hpu(default_mode(rtl_built)) {}

bool BlockModes::set(std::string_view name, std::string_view mode, std::string* why) {
  if (!valid_mode(mode)) {
    if (why)
      *why = "--" + std::string(name) + " must be model, rtl or lockstep, not " + std::string(mode);
    return false;
  }
  if (name == "mr-table") {
    mr_table = mode;
    mr_table_given = true;
  } else if (name == "kernels") {
    kernels = mode;
    kernels_given = true;
  } else if (name == "rx-pipe") {
    rx_pipe = mode;
    rx_pipe_given = true;
  } else if (name == "hpu") {
    hpu = mode;
    hpu_given = true;
  } else if (name == "blocks") {
    blocks = mode;
  } else {
    if (why) *why = "unknown block option --" + std::string(name);
    return false;
  }
  return true;
}

void BlockModes::resolve() {
  if (blocks.empty()) return;
  if (!mr_table_given) mr_table = blocks;
  if (!kernels_given) kernels = blocks;
  if (!rx_pipe_given) rx_pipe = blocks;
  if (!hpu_given) hpu = blocks;
}

bool BlockModes::any_rtl() const {
  return mr_table != "model" || kernels != "model" || rx_pipe != "model";
}

std::string BlockModes::help(bool rtl_built) {
  std::string u = kHelp;
  for (const auto& [mark, mode] :
       {std::pair<std::string, const char*>{"@DEFAULT_MODE@", default_mode(rtl_built)},
        {"@RX_DEFAULT@", kRxPipeDefault}}) {
    for (auto at = u.find(mark); at != std::string::npos; at = u.find(mark))
      u.replace(at, mark.size(), mode);
  }
  return u;
}

std::string BlockModes::without_rtl(std::string_view program) {
  return "this " + std::string(program) +
         " was built without the RTL blocks (NAA_BUILD_RTL=OFF): --mr-table, --kernels, "
         "--rx-pipe, --hpu and --blocks take only model";
}

}  // namespace naa::sim
