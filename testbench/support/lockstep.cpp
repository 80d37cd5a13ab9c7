// The lockstep check of the suites' lockstep runs (NAA_SIM_CHECK_RTL=1), shared by the naa-sim
// fixture (naa_sim.cpp) and, through naa_lockstep_check, the shell tests that start naa-sim.
#include "lockstep.hpp"

#include <sstream>
#include <utility>

#include "naa/tools/sim_stats.hpp"

namespace naa::testbench {

namespace {

// The value of option `name` in naa-sim's arguments ("--name=v" or "--name v"; the last wins),
// or `fallback`.
std::string option_value(const std::vector<std::string>& args, const std::string& name,
                         const std::string& fallback) {
  std::string value = fallback;
  const std::string flag = "--" + name;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size()) {
      value = args[i + 1];
    } else if (args[i].rfind(flag + "=", 0) == 0) {
      value = args[i].substr(flag.size() + 1);
    }
  }
  return value;
}

// Whether `block` is Verilated at `width` in this build (NAA_RTL_BLOCK_WIDTHS, from
// cmake/NaaRtlBlock.cmake: "block:w,w block:w"). This is the fixture's own knowledge, not naa-sim's
// mode logic: a naa-sim that silently left a block as the model cannot talk its way past it.
bool has_rtl(const std::string& block, std::uint32_t width) {
  std::istringstream blocks(NAA_RTL_BLOCK_WIDTHS);
  for (std::string entry; blocks >> entry;) {
    const auto colon = entry.find(':');
    if (entry.substr(0, colon) != block) continue;
    std::istringstream widths(entry.substr(colon + 1));
    for (std::string w; std::getline(widths, w, ',');) {
      if (!w.empty() && std::stoul(w) == width) return true;
    }
  }
  return false;
}

// The kernels with RTL and the block that computes them (sim/rtl/src/rtl_blocks.cpp,
// install_kernels); nop has none.
constexpr std::pair<const char*, const char*> kRtlKernels[] = {{"add1", "add_const"},
                                                               {"add2", "add_const"},
                                                               {"vadd_i32", "vadd_i32"},
                                                               {"crc32", "crc32"},
                                                               {"sum_u64", "sum_u64"}};

// What is wrong with a lockstep run's exit statistics, given naa-sim's arguments. A block family
// that has RTL at the run's --width and was not asked to be the model (an explicit --mr-table,
// --kernels or --rx-pipe beats --blocks, as in naa-sim; the MR table and kernels default to rtl,
// the receive path to the model: sim/src/block_modes.cpp) must report lockstep,
// and its RTL must have done the family's work.
}  // namespace

std::optional<std::string> lockstep_problem(const std::string& stats,
                                            const std::vector<std::string>& args) {
  if (const auto problem = tools::sim_stats_problem(stats)) {
    return "its exit statistics " + *problem;
  }
  const auto count = [&stats](const std::string& key) -> std::optional<std::uint64_t> {
    const auto text = tools::sim_stat_text(stats, key);
    return text ? tools::sim_stat_count(*text) : std::nullopt;
  };
  const auto value = [&count](const std::string& key) { return count(key).value_or(0); };
  if (!count("rtl.lockstep.divergences"))
    return std::string("no RTL blocks ran (no rtl.* statistics)");
  if (value("rtl.lockstep.divergences") != 0) return std::string("a lockstep divergence");

  const std::string blocks = option_value(args, "blocks", "");
  const auto mode = [&](const std::string& family, const char* fallback) {
    return option_value(args, family, blocks.empty() ? std::string(fallback) : blocks);
  };
  const auto width = static_cast<std::uint32_t>(std::stoul(option_value(args, "width", "64")));
  const auto must_lockstep = [&](const std::string& family) -> std::optional<std::string> {
    const std::string key = "rtl." + family + ".lockstep";
    if (!count(key)) return key + " is missing from the statistics";
    if (value(key) != 1) {
      return key + " is not 1: that block did not run in lockstep, although it has RTL at " +
             "--width " + std::to_string(width) + " and was not asked to be the model";
    }
    return std::nullopt;
  };
  int families = 0;

  if (mode("mr-table", "rtl") != "model") {
    ++families;
    if (auto problem = must_lockstep("mr_table")) return problem;
    if (value("rtl.mr_table.lookups") != value("mr_table.lookups")) {
      return "the RTL answered " + std::to_string(value("rtl.mr_table.lookups")) + " of " +
             std::to_string(value("mr_table.lookups")) + " MR lookups";
    }
    if (value("mrsp.requests") > 0 && value("rtl.mr_table.searches") == 0) {
      return std::string("MRSP requests were served without the RTL's free-entry search");
    }
  }
  if (mode("kernels", "rtl") != "model") {
    bool any = false;
    std::uint64_t rtl_dispatches = 0;
    for (const auto& [kernel, block] : kRtlKernels) {
      if (!has_rtl(block, width)) continue;
      any = true;
      // Stored calls (KernelEngine) and a streaming call's handlers, which run the kernel of
      // their function code per packet (sim/src/handlers.cpp).
      rtl_dispatches += value(std::string("kernel.dispatches.") + kernel) +
                        value(std::string("handler.kernel_runs.") + kernel);
    }
    if (any) {
      ++families;
      if (auto problem = must_lockstep("kernels")) return problem;
      const std::uint64_t runs = value("rtl.kernels.runs");
      if (runs != rtl_dispatches) {
        return "the RTL ran " + std::to_string(runs) + " kernel calls, the NAA ran " +
               std::to_string(rtl_dispatches) + " of kernels with RTL at --width " +
               std::to_string(width) + " (kernel.dispatches.<name> + handler.kernel_runs.<name>)";
      }
    }
  }
  if (mode("rx-pipe", "model") != "model" && has_rtl("rx_parser", width) &&
      has_rtl("icrc_check", width)) {
    ++families;
    if (auto problem = must_lockstep("rx_pipe")) return problem;
    const std::uint64_t checked = value("rx_pipe.packets") - value("rx_pipe.runts");
    if (value("rtl.rx_pipe.packets") != checked) {
      return "the receive path's RTL checked " + std::to_string(value("rtl.rx_pipe.packets")) +
             " packets, the receive path took " + std::to_string(checked) +
             " (rx_pipe.packets - rx_pipe.runts)";
    }
  }
  // The HPU cores (rtl/hpu) exist only with --handler images: checked when the run built them.
  if (value("rtl.hpu.verilated") > 0) {
    ++families;
    if (auto problem = must_lockstep("hpu")) return problem;
  }
  if (families == 0) return std::string("no block with RTL at its width was asked for it");
  const std::uint64_t work = value("mr_table.lookups") + value("mrsp.requests") +
                             value("kernel.dispatches") + value("rtl.rx_pipe.packets");
  const std::uint64_t rtl_cycles = value("rtl.cycles") - value("rtl.reset_cycles");
  if (work > 0 && rtl_cycles == 0) {
    return "no RTL activity (rtl.cycles " + std::to_string(value("rtl.cycles")) +
           ", all reset cycles) although the NAA did work for the RTL blocks";
  }
  return std::nullopt;
}

}  // namespace naa::testbench
