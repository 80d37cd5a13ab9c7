// naa-sim as a child process: the one way tools (naa-bench) and tests (the naa-sim fixture,
// testbench/support/naa_sim.hpp) start it, read its statistics and stop it. naa-sim prints
// "naa-sim: listening on ..." on stdout when it is ready and writes statistics snapshots to its
// --stats-file on SIGUSR1 and on exit (sim_stats.hpp). Errors are exceptions (SimProcessError)
// naming what happened, never zeros.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace naa::tools {

struct SimProcessError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SimLaunch {
  std::string binary;             // the naa-sim to run
  std::string listen;             // --listen ADDR
  std::vector<std::string> args;  // more arguments
  std::string stderr_file;        // naa-sim's stderr goes here if set, else it is inherited
  std::string stats_file;         // --stats-file; empty: a temporary file, removed at the end
  std::chrono::milliseconds ready_timeout = std::chrono::seconds(20);  // a liveness limit
};

class SimProcess {
 public:
  SimProcess() = default;
  // Starts naa-sim and waits for its ready line. Throws SimProcessError if it cannot be run at
  // all; a naa-sim that exits or stays silent is not an exception here (ready() is false).
  explicit SimProcess(const SimLaunch& launch);
  // Stops a naa-sim it started (stop()) and removes a temporary stats file.
  ~SimProcess();
  SimProcess(const SimProcess&) = delete;
  SimProcess& operator=(const SimProcess&) = delete;

  // Another naa-sim (started elsewhere): statistics only; never stopped by this object.
  void attach(pid_t pid, const std::string& stats_file);

  [[nodiscard]] bool ready() const { return ready_; }
  [[nodiscard]] const std::string& ready_line() const { return ready_line_; }
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] const std::string& command() const { return command_; }
  [[nodiscard]] const std::string& stats_file() const { return stats_file_; }
  [[nodiscard]] bool started() const { return pid_ > 0 || wait_status_.has_value(); }
  [[nodiscard]] bool running();  // reaps (and records) an exit that happened meanwhile

  // SIGUSR1, then the first snapshot with a higher naa-sim.stats_seq than the last one read.
  // Throws SimProcessError if naa-sim is gone, dies meanwhile, writes a malformed snapshot or
  // none within `timeout`.
  std::string snapshot(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // The stats file as it is now (no checks): e.g. the snapshot naa-sim wrote on its way out.
  [[nodiscard]] std::string stats_file_text() const;

  // SIGTERM (SIGKILL after `grace`); returns the exit status, -1 if ended by a signal.
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // Waits up to `timeout` for naa-sim to exit by itself; its exit status (-1: by a signal), or
  // nullopt if it still runs.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  // The raw waitpid status once naa-sim was reaped.
  [[nodiscard]] std::optional<int> wait_status() const { return wait_status_; }
  // "naa-sim exited with status 3", "naa-sim was killed by signal 9 (Killed)", ...
  [[nodiscard]] std::string describe_exit() const;

  // SIGSTOP / SIGCONT.
  void freeze();
  void thaw();
  // naa-sim's CPU time (user + system) so far, from /proc/<pid>/stat.
  [[nodiscard]] std::optional<double> cpu_seconds() const;

 private:
  void record_exit(int wait_status);

  pid_t pid_ = -1;
  bool owned_ = false;
  bool temp_stats_ = false;
  bool ready_ = false;
  std::string ready_line_;
  std::string stats_file_;
  std::string command_;
  std::uint64_t seq_ = 0;
  std::optional<int> wait_status_;
};

}  // namespace naa::tools
