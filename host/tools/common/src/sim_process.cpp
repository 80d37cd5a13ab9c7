#include "naa/tools/sim_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "naa/tools/sim_stats.hpp"

namespace naa::tools {

namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

SimProcess::SimProcess(const SimLaunch& launch) {
  stats_file_ = launch.stats_file;
  if (stats_file_.empty()) {
    char tmpl[] = "/tmp/naa-sim-stats-XXXXXX";
    const int tfd = ::mkstemp(tmpl);
    if (tfd < 0) throw SimProcessError(errno_text("mkstemp"));
    ::close(tfd);
    stats_file_ = tmpl;
    temp_stats_ = true;
  }
  ::unlink(stats_file_.c_str());  // the first snapshot creates it
  std::vector<std::string> argv_s = {launch.binary, "--listen", launch.listen, "--stats-file",
                                     stats_file_};
  argv_s.insert(argv_s.end(), launch.args.begin(), launch.args.end());
  for (const auto& a : argv_s)
    command_ += (command_.empty() ? "" : " ") + a;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) throw SimProcessError(errno_text("pipe"));
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    throw SimProcessError(errno_text("fork"));
  }
  if (pid_ == 0) {
    if (!launch.stderr_file.empty()) {
      const int efd = ::open(launch.stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (efd >= 0) {
        ::dup2(efd, STDERR_FILENO);
        ::close(efd);
      }
    }
    ::dup2(pipefd[1], STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& s : argv_s)
      argv.push_back(s.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  owned_ = true;
  ::close(pipefd[1]);
  // The ready line; EOF first means naa-sim exited (e.g. a refused option).
  std::string out;
  const auto end = Clock::now() + launch.ready_timeout;
  while (Clock::now() < end) {
    pollfd pfd{pipefd[0], POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    char buf[256];
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    const auto nl = out.find('\n');
    if (nl != std::string::npos) {
      ready_line_ = out.substr(0, nl);
      ready_ = ready_line_.rfind("naa-sim: listening on ", 0) == 0;
      break;
    }
  }
  if (ready_line_.empty()) ready_line_ = out;
  // Statistics go to the file; nothing more is read from stdout.
  ::close(pipefd[0]);
}

SimProcess::~SimProcess() {
  if (owned_) (void)stop();
  if (temp_stats_) ::unlink(stats_file_.c_str());
}

void SimProcess::attach(pid_t pid, const std::string& stats_file) {
  pid_ = pid;
  stats_file_ = stats_file;
  owned_ = false;
  ready_ = true;
  command_ = "naa-sim pid " + std::to_string(pid);
}

void SimProcess::record_exit(int wait_status) {
  wait_status_ = wait_status;
  pid_ = -1;
}

std::string SimProcess::describe_exit() const {
  if (!wait_status_) return "naa-sim is still running";
  const int st = *wait_status_;
  if (WIFEXITED(st)) return "naa-sim exited with status " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) {
    return "naa-sim was killed by signal " + std::to_string(WTERMSIG(st)) + " (" +
           strsignal(WTERMSIG(st)) + ")";
  }
  return "naa-sim ended with wait status " + std::to_string(st);
}

bool SimProcess::running() {
  if (pid_ <= 0) return false;
  if (!owned_) return ::kill(pid_, 0) == 0;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    record_exit(st);
    return false;
  }
  return true;
}

std::string SimProcess::stats_file_text() const {
  std::ifstream f(stats_file_);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string SimProcess::snapshot(std::chrono::milliseconds timeout) {
  if (!running()) {
    throw SimProcessError("statistics of a naa-sim that is gone: " + describe_exit() + " (" +
                          command_ + ")");
  }
  ::kill(pid_, SIGUSR1);
  // naa-sim replaces the file (rename) per snapshot: read it only when its inode changed, and
  // poll gently, so that waiting costs naa-sim (sharing the CPUs) nothing.
  ino_t seen = 0;
  const auto end = Clock::now() + timeout;
  while (Clock::now() < end) {
    struct stat st {};
    if (::stat(stats_file_.c_str(), &st) == 0 && st.st_ino != seen) {
      seen = st.st_ino;
      const std::string s = stats_file_text();
      if (const auto problem = sim_stats_problem(s)) {
        throw SimProcessError("naa-sim's statistics snapshot " + *problem + " (" + command_ + ")");
      }
      const auto seq = sim_stat_count(sim_stat_text(s, "naa-sim.stats_seq").value_or(""));
      if (!seq) throw SimProcessError("naa-sim's statistics have no valid naa-sim.stats_seq");
      if (*seq > seq_) {
        seq_ = *seq;
        return s;
      }
    }
    if (!running()) {
      throw SimProcessError("naa-sim died before answering SIGUSR1: " + describe_exit() + " (" +
                            command_ + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  throw SimProcessError("naa-sim wrote no statistics within " + std::to_string(timeout.count()) +
                        " ms of SIGUSR1 (hung?): " + command_);
}

void SimProcess::freeze() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void SimProcess::thaw() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

std::optional<int> SimProcess::wait_exit(std::chrono::milliseconds timeout) {
  const auto end = Clock::now() + timeout;
  while (running()) {
    if (Clock::now() > end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!wait_status_) return std::nullopt;
  return WIFEXITED(*wait_status_) ? WEXITSTATUS(*wait_status_) : -1;
}

int SimProcess::stop(std::chrono::milliseconds grace) {
  if (owned_ && running()) {
    ::kill(pid_, SIGCONT);  // a frozen naa-sim cannot act on SIGTERM
    ::kill(pid_, SIGTERM);
    const auto end = Clock::now() + grace;
    while (running()) {
      if (Clock::now() > end) {
        ::kill(pid_, SIGKILL);
        int st = 0;
        ::waitpid(pid_, &st, 0);
        record_exit(st);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (!wait_status_) return -1;
  return WIFEXITED(*wait_status_) ? WEXITSTATUS(*wait_status_) : -1;
}

std::optional<double> SimProcess::cpu_seconds() const {
  if (pid_ <= 0) return std::nullopt;
  std::ifstream f("/proc/" + std::to_string(pid_) + "/stat");
  std::string s;
  if (!std::getline(f, s)) return std::nullopt;
  const std::size_t rp = s.rfind(')');  // the command name may contain spaces
  if (rp == std::string::npos || rp + 2 > s.size()) return std::nullopt;
  std::istringstream in(s.substr(rp + 2));
  std::vector<std::string> fields;
  for (std::string x; in >> x;)
    fields.push_back(x);
  // Fields after the name start at field 3 (state); utime and stime are fields 14 and 15.
  if (fields.size() < 13) return std::nullopt;
  const double ticks =
      std::strtod(fields[11].c_str(), nullptr) + std::strtod(fields[12].c_str(), nullptr);
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace naa::tools
