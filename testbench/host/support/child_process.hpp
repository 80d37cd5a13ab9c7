// Child processes for the host tests: run a tool to completion (naa-call, the C example) and keep
// a server running for a test case (naa-sim), with its output captured.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <string>
#include <vector>

namespace naa::testbench {

struct RunResult {
  int exit_code = -1;  // -1 if killed (timeout) or not started
  std::string out;
  std::string err;
};

// Runs `path args...` with `env` ("NAME=value") added to the environment; kills it after
// `timeout`.
RunResult run_program(const std::string& path, const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {},
                      std::chrono::milliseconds timeout = std::chrono::seconds(60));

// A background process (stdout and stderr captured); SIGTERM on destruction.
class ChildProcess {
 public:
  ChildProcess(const std::string& path, const std::vector<std::string>& args);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits until a line of stdout contains `text` (false on timeout or exit).
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout);
  // SIGTERM, then waits (SIGKILL after 5 s); returns the exit code (-1 if killed by a signal).
  int stop();
  [[nodiscard]] bool running();
  [[nodiscard]] const std::string& output();  // stdout and stderr so far
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

 private:
  void pump(int timeout_ms);
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string output_;
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace naa::testbench
