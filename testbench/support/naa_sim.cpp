#include "naa_sim.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <utility>

#include "lockstep.hpp"
#include "naa/tools/sim_stats.hpp"
#include "seed.hpp"

namespace naa::testbench {

namespace {

using Clock = std::chrono::steady_clock;

// Liveness limits, not measurements: generous enough for a loaded 2-core CI machine.
constexpr auto kStatsTimeout = std::chrono::seconds(20);
constexpr auto kStopTimeout = std::chrono::seconds(10);

bool names_seed(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "--seed" || a.rfind("--seed=", 0) == 0;
  });
}

// naa-sim's arguments: the test's, NAA_SIM_EXTRA_ARGS's words, and a --seed from the test seed
// unless either names one or the test asked for an unseeded run.
std::vector<std::string> sim_args(const std::vector<std::string>& args, bool seeded) {
  std::vector<std::string> out = args;
  if (const char* extra = std::getenv("NAA_SIM_EXTRA_ARGS")) {
    std::istringstream words(extra);
    for (std::string w; words >> w;)
      out.push_back(w);
  }
  if (seeded && !names_seed(out)) {
    static std::uint64_t started = 0;  // naa-sims this process started: one stream each
    out.push_back("--seed");
    out.push_back(std::to_string(seed_for("naa-sim " + std::to_string(started++))));
  }
  return out;
}

tools::SimLaunch launch_for(const std::string& ip, const std::vector<std::string>& args,
                            const std::string& stderr_file) {
  tools::SimLaunch l;
  l.binary = NAA_SIM_BINARY;
  l.listen = ip;
  l.args = args;
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
// naa_add_lockstep_run) start every naa-sim with its RTL blocks in lockstep, and its exit
// statistics must show it (lockstep_problem, lockstep.hpp).
bool check_rtl() {
  const char* v = std::getenv("NAA_SIM_CHECK_RTL");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace

NaaSim::NaaSim(const std::string& ip, const std::vector<std::string>& args,
               const std::string& stderr_file)
    : args_(sim_args(args, true)), proc_(launch_for(ip, args_, stderr_file)) {}

NaaSim::NaaSim(Unseeded /*unseeded*/, const std::string& ip, const std::vector<std::string>& args,
               const std::string& stderr_file)
    : args_(sim_args(args, false)), proc_(launch_for(ip, args_, stderr_file)) {}

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
    if (const auto problem = lockstep_problem(last_stats(), args_)) {
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
