#include "own_case.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <stdexcept>

namespace naa::testbench {

OwnCaseRun run_own_case(const std::string& name) {
  if (name.find_first_of(",[]*~\"") != std::string::npos) {
    throw std::invalid_argument("run_own_case: '" + name + "' holds test-spec characters");
  }
  std::array<char, 4096> self{};
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) throw std::runtime_error("run_own_case: cannot read /proc/self/exe");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("run_own_case: pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("run_own_case: fork failed");
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    const char* argv[] = {self.data(), name.c_str(), "--use-colour", "no", nullptr};
    ::execv(self.data(), const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(fds[1]);
  OwnCaseRun run;
  std::array<char, 4096> buf{};
  for (ssize_t got; (got = ::read(fds[0], buf.data(), buf.size())) != 0;) {
    if (got < 0) break;
    run.output.append(buf.data(), static_cast<std::size_t>(got));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace naa::testbench
