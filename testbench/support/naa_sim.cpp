#include "naa_sim.hpp"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "naa/tools/sim_stats.hpp"

namespace naa::testbench {

namespace {

using Clock = std::chrono::steady_clock;

// Liveness limits, not measurements: generous enough for a loaded 2-core CI machine.
constexpr auto kStatsTimeout = std::chrono::seconds(20);
constexpr auto kStopTimeout = std::chrono::seconds(10);

tools::SimLaunch launch_for(const std::string& ip, const std::vector<std::string>& args,
                            const std::string& stderr_file) {
  tools::SimLaunch l;
  l.binary = NAA_SIM_BINARY;
  l.listen = ip;
  l.args = args;
  if (const char* extra = std::getenv("NAA_SIM_EXTRA_ARGS")) {
    std::istringstream words(extra);
    for (std::string w; words >> w;)
      l.args.push_back(w);
  }
  l.stderr_file = stderr_file;
  return l;
}

// SimProcess's errors as the fixture's.
template <class F>
auto rethrown(F f) {
  try {
    return f();
  } catch (const tools::SimProcessError& e) {
    throw NaaSimError(e.what());
  }
}

// NAA_SIM_CHECK_RTL=1: the suites' lockstep runs (testbench/CMakeLists.txt,
// naa_add_lockstep_run) start every naa-sim with every RTL block in lockstep, and its exit
// statistics must show it: no divergence, every block with RTL in lockstep, every MR lookup
// answered by the RTL, and RTL cycles beyond the reset cycles whenever the NAA did work that
// goes through a block with RTL.
bool check_rtl() {
  const char* v = std::getenv("NAA_SIM_CHECK_RTL");
  return v != nullptr && std::string(v) == "1";
}

std::optional<std::string> rtl_problem(const std::string& stats) {
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
  // Every block family reports rtl.<block>.verilated and .lockstep: each one Verilated (at the
  // test's width, or asked for) must run in lockstep.
  std::istringstream in(stats);
  int families = 0;
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    const std::string key = line.substr(0, eq);
    if (key.rfind("rtl.", 0) != 0 || key.size() < 9 ||
        key.compare(key.size() - 9, 9, ".lockstep") != 0) {
      continue;
    }
    const std::string family = key.substr(0, key.size() - 9);
    if (value(family + ".verilated") == 0) continue;
    ++families;
    if (line.substr(eq + 1) != "1") return key + " is not 1: that block did not run in lockstep";
  }
  if (families == 0) return std::string("no block ran as Verilated RTL");
  if (value("rtl.mr_table.lookups") != value("mr_table.lookups")) {
    return "the RTL answered " + std::to_string(value("rtl.mr_table.lookups")) + " of " +
           std::to_string(value("mr_table.lookups")) + " MR lookups";
  }
  if (value("mrsp.requests") > 0 && value("rtl.mr_table.searches") == 0) {
    return std::string("MRSP requests were served without the RTL's free-entry search");
  }
  const std::uint64_t work = value("mr_table.lookups") + value("mrsp.requests") +
                             value("kernel.dispatches") + value("rtl.rx_pipe.packets");
  const std::uint64_t rtl_cycles = value("rtl.cycles") - value("rtl.reset_cycles");
  if (work > 0 && rtl_cycles == 0) {
    return "no RTL activity (rtl.cycles " + std::to_string(value("rtl.cycles")) +
           ", all reset cycles) although the NAA did work for the RTL blocks";
  }
  return std::nullopt;
}

}  // namespace

NaaSim::NaaSim(const std::string& ip, const std::vector<std::string>& args,
               const std::string& stderr_file)
    : proc_(launch_for(ip, args, stderr_file)) {}

NaaSim::~NaaSim() {
  try {
    if (!checked_) {
      if (const auto problem = check_exit()) FAIL_CHECK(*problem);
    }
  } catch (...) {  // never throw from a destructor (it may run while a REQUIRE unwinds)
  }
}

std::uint64_t NaaSim::stat_in(const std::string& text, const std::string& key) {
  const auto value = tools::sim_stat_text(text, key);
  if (!value) {
    if (tools::sim_stat_sparse(key)) return 0;
    if (text.empty()) throw NaaSimError("naa-sim statistic " + key + ": no statistics to read");
    throw NaaSimError("naa-sim statistic " + key + " is not in the snapshot (misspelt?)");
  }
  const auto count = tools::sim_stat_count(*value);
  if (!count) throw NaaSimError("naa-sim statistic " + key + "=" + *value + " is not a count");
  return *count;
}

std::string NaaSim::last_stats() const {
  return proc_.stats_file_text();
}

std::string NaaSim::stats_text() {
  if (proc_.pid() <= 0) {
    if (!proc_.wait_status()) throw NaaSimError("naa-sim was never started: " + proc_.command());
    // Stopped by the test: the snapshot it wrote on its way out.
    const std::string s = last_stats();
    if (const auto problem = tools::sim_stats_problem(s)) {
      throw NaaSimError("naa-sim's exit statistics " + *problem + " (" + proc_.describe_exit() +
                        ")");
    }
    return s;
  }
  return rethrown([&] { return proc_.snapshot(kStatsTimeout); });
}

std::uint64_t NaaSim::stat(const std::string& key) {
  return stat_in(stats_text(), key);
}

std::string NaaSim::wait_stat(const std::string& key, std::uint64_t value,
                              std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  std::string s = stats_text();
  while (stat_in(s, key) != value && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    s = stats_text();
  }
  return s;
}

int NaaSim::stop() {
  return proc_.stop(kStopTimeout);
}

std::optional<std::string> NaaSim::check_exit() {
  checked_ = true;
  if (!proc_.started()) return "naa-sim was never started: " + proc_.command();
  (void)stop();
  const auto st = proc_.wait_status();
  if (st && WIFEXITED(*st) && WEXITSTATUS(*st) == expected_exit_) {
    if (expected_exit_ != 0 || !check_rtl() || !proc_.ready()) return std::nullopt;
    if (const auto problem = rtl_problem(last_stats())) {
      return "NAA_SIM_CHECK_RTL=1 (every RTL block in lockstep): " + *problem + ": " +
             proc_.command();
    }
    return std::nullopt;
  }
  return proc_.describe_exit() + ", expected exit status " + std::to_string(expected_exit_) +
         " (3 = lockstep divergence, 2 = refused option; see naa-sim's stderr above): " +
         proc_.command();
}

}  // namespace naa::testbench
