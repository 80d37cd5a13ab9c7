// naa-sim as a child process of a test: the one way tests start and stop naa-sim (testbench/
// README.md "naa-sim in tests"). It fails loudly instead of reading a dead naa-sim as zeros:
// - statistics (SIGUSR1 -> --stats-file snapshot) throw NaaSimError if naa-sim has exited, does
//   not answer, or wrote a snapshot that does not parse; a key missing from a snapshot throws too;
// - at the end of the test (the destructor) naa-sim is stopped if still running and its exit
//   status must be the expected one (0 unless expect_exit() said otherwise: 3 for a lockstep
//   divergence, 2 for a refused option); anything else fails the running Catch2 test case, so a
//   divergence or crash on a test's last operation does not pass unseen;
// - with NAA_SIM_CHECK_RTL=1 in the environment (the suites' lockstep runs) a clean exit must also
//   show, in its exit statistics, no divergence and every block that has RTL at the run's width
//   (the fixture's own list, from the build's Verilated widths) and was asked for lockstep
//   reporting lockstep, with the RTL doing the work: every MR lookup, every dispatch of a kernel
//   with RTL, every packet the receive path checked.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "naa/tools/sim_process.hpp"

namespace naa::testbench {

struct NaaSimError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class NaaSim {
 public:
  // Starts naa-sim (NAA_SIM_BINARY) with --listen ip --stats-file <tmp> plus `args`, plus the
  // words of NAA_SIM_EXTRA_ARGS from the environment (e.g. "--mr-table=rtl --kernels=rtl": a
  // suite runs again with the RTL blocks), and waits for its ready line. naa-sim's stderr goes to
  // `stderr_file` if given, else it is inherited. A naa-sim that does not come up is not an
  // exception here (ready() is false; tests of refused options expect that). The process itself
  // is naa::tools::SimProcess (host/tools/common), the same code naa-bench uses.
  //
  // Seeds: unless `args` name --seed, naa-sim gets `--seed <n>` with n derived from the test seed
  // (NAA_TEST_SEED; seed.hpp) and the number of naa-sims this process started before, so its
  // secrets and fault decisions repeat with the seed the test prints on failure (issue 26 item
  // 10). Tests of unseeded runs themselves construct it with NaaSim::unseeded.
  explicit NaaSim(const std::string& ip, const std::vector<std::string>& args = {},
                  const std::string& stderr_file = {});
  struct Unseeded {};
  static constexpr Unseeded unseeded{};
  NaaSim(Unseeded, const std::string& ip, const std::vector<std::string>& args = {},
         const std::string& stderr_file = {});
  // The end-of-test check: check_exit(); a mismatch is a failed Catch2 assertion.
  ~NaaSim();
  NaaSim(const NaaSim&) = delete;
  NaaSim& operator=(const NaaSim&) = delete;

  [[nodiscard]] bool ready() const { return proc_.ready(); }
  [[nodiscard]] const std::string& ready_line() const { return proc_.ready_line(); }
  [[nodiscard]] pid_t pid() const { return proc_.pid(); }
  [[nodiscard]] bool running() { return proc_.running(); }  // reaps an exit meanwhile

  // A fresh snapshot (SIGUSR1, then the next one in the stats file). After stop()/wait_exit()
  // returned, the snapshot naa-sim wrote on its way out. Throws NaaSimError as described above.
  std::string stats_text();
  std::uint64_t stat(const std::string& key);  // from a fresh snapshot
  // The value of `key` in a snapshot; throws NaaSimError if it is missing or not a number.
  // Counters naa-sim prints only once non-zero (naa::tools::sim_stat_sparse) read 0 when absent.
  static std::uint64_t stat_in(const std::string& text, const std::string& key);
  // Fresh snapshots until `key` reads `value` or `limit` passes (a liveness limit, never a
  // measurement); returns the last snapshot, for the test to check `key` and more in it.
  std::string wait_stat(const std::string& key, std::uint64_t value,
                        std::chrono::milliseconds limit = std::chrono::seconds(30));
  // The statistics file as it is (no checks), e.g. to read the exit snapshot of a crash.
  [[nodiscard]] std::string last_stats() const;

  // SIGTERM, waits (SIGKILL after 10 s); returns the exit status (-1 if ended by a signal).
  int stop();
  // Waits up to `timeout` for naa-sim to exit by itself (e.g. a lockstep divergence); returns
  // the exit status (-1 if ended by a signal), or nullopt if it is still running.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
    return proc_.wait_exit(timeout);
  }
  // The exit status the end-of-test check requires (default 0).
  void expect_exit(int status) { expected_exit_ = status; }
  // Stops naa-sim if it still runs; returns what is wrong with its exit status (nullopt: it is
  // the expected one). The destructor fails the test with this text.
  std::optional<std::string> check_exit();

  // SIGSTOP / SIGCONT: datagrams sent while frozen wait in naa-sim's socket and are all read in
  // one batch after thaw(), so they enter the model at the same simulated time (tests of races
  // that wall-clock timing alone cannot produce reliably).
  void freeze() { proc_.freeze(); }
  void thaw() { proc_.thaw(); }

 private:
  std::vector<std::string> args_;  // naa-sim's arguments after --listen (the fixture's and extra)
  tools::SimProcess proc_;
  int expected_exit_ = 0;
  bool checked_ = false;
};

}  // namespace naa::testbench
