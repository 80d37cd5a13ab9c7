#include "naa_sim.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace naa::testbench {

namespace {

using Clock = std::chrono::steady_clock;

// Liveness limits, not measurements: generous enough for a loaded 2-core CI machine.
constexpr auto kReadyTimeout = std::chrono::seconds(20);
constexpr auto kStatsTimeout = std::chrono::seconds(20);
constexpr auto kStopTimeout = std::chrono::seconds(10);

// Families of counters naa-sim prints only once non-zero (ReasonCounters::report in
// sim/include/naa/sim/common.hpp, and CmAgent::report's REJ reasons).
bool sparse_key(const std::string& key) {
  for (const char* family : {"cm.rej_sent.reason_", "mr_table.result.", "rx_pipe.drop.",
                             "transport.nak_sent.", "transport.drop."}) {
    if (key.rfind(family, 0) == 0) return true;
  }
  return false;
}

// A complete snapshot: "naa-sim.stats_seq=N" first, "naa-sim.end=1" last, key=value between.
std::optional<std::string> snapshot_problem(const std::string& text) {
  if (text.rfind("naa-sim.stats_seq=", 0) != 0) return "does not start with naa-sim.stats_seq=";
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == line.size()) {
      return "malformed line \"" + line + "\"";
    }
    last = line;
  }
  if (last != "naa-sim.end=1") return "does not end with naa-sim.end=1";
  return std::nullopt;
}

}  // namespace

NaaSim::NaaSim(const std::string& ip, const std::vector<std::string>& args,
               const std::string& stderr_file) {
  char tmpl[] = "/tmp/naa-sim-stats-XXXXXX";
  const int tfd = ::mkstemp(tmpl);
  if (tfd < 0) throw NaaSimError(std::string("mkstemp: ") + std::strerror(errno));
  ::close(tfd);
  stats_file_ = tmpl;
  ::unlink(stats_file_.c_str());
  std::vector<std::string> argv_s = {NAA_SIM_BINARY, "--listen", ip, "--stats-file", stats_file_};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  if (const char* extra = std::getenv("NAA_SIM_EXTRA_ARGS")) {
    std::istringstream words(extra);
    for (std::string w; words >> w;)
      argv_s.push_back(w);
  }
  for (const auto& a : argv_s)
    command_ += (command_.empty() ? "" : " ") + a;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) throw NaaSimError("pipe");
  pid_ = ::fork();
  if (pid_ < 0) throw NaaSimError(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    if (!stderr_file.empty()) {
      const int efd = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (efd >= 0) {
        ::dup2(efd, 2);
        ::close(efd);
      }
    }
    ::dup2(pipefd[1], 1);
    std::vector<char*> argv;
    for (auto& s : argv_s)
      argv.push_back(s.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  // The ready line; EOF first means naa-sim exited (e.g. a refused option).
  std::string out;
  const auto end = Clock::now() + kReadyTimeout;
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
  // Statistics go to the file; nothing more is read from stdout.
  ::close(pipefd[0]);
}

NaaSim::~NaaSim() {
  try {
    if (!checked_) {
      if (const auto problem = check_exit()) FAIL_CHECK(*problem);
    }
  } catch (...) {  // never throw from a destructor (it may run while a REQUIRE unwinds)
  }
  ::unlink(stats_file_.c_str());  // ours (mkstemp): do not leave it in /tmp
}

void NaaSim::record_exit(int wait_status) {
  wait_status_ = wait_status;
  pid_ = -1;
}

std::string NaaSim::describe_exit() const {
  if (!wait_status_) return "naa-sim is still running";
  const int st = *wait_status_;
  if (WIFEXITED(st)) return "naa-sim exited with status " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) {
    return "naa-sim was killed by signal " + std::to_string(WTERMSIG(st)) + " (" +
           strsignal(WTERMSIG(st)) + ")";
  }
  return "naa-sim ended with wait status " + std::to_string(st);
}

bool NaaSim::running() {
  if (pid_ <= 0) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    record_exit(st);
    return false;
  }
  return true;
}

std::uint64_t NaaSim::stat_in(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == '=') {
      const std::string value = line.substr(key.size() + 1);
      std::size_t used = 0;
      std::uint64_t v = 0;
      try {
        v = std::stoull(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size()) {
        throw NaaSimError("naa-sim statistic " + key + "=" + value + " is not a count");
      }
      return v;
    }
  }
  if (sparse_key(key)) return 0;
  if (text.empty()) throw NaaSimError("naa-sim statistic " + key + ": no statistics to read");
  throw NaaSimError("naa-sim statistic " + key + " is not in the snapshot (misspelt?)");
}

std::string NaaSim::last_stats() const {
  std::ifstream f(stats_file_);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string NaaSim::stats_text() {
  if (pid_ <= 0) {
    if (!wait_status_) throw NaaSimError("naa-sim was never started: " + command_);
    // Stopped by the test: the snapshot it wrote on its way out.
    const std::string s = last_stats();
    if (const auto problem = snapshot_problem(s)) {
      throw NaaSimError("naa-sim's exit statistics " + *problem + " (" + describe_exit() + ")");
    }
    return s;
  }
  if (!running()) {
    throw NaaSimError("statistics of a naa-sim that is gone: " + describe_exit() + " (" + command_ +
                      ")");
  }
  ::kill(pid_, SIGUSR1);
  const auto end = Clock::now() + kStatsTimeout;
  while (Clock::now() < end) {
    const std::string s = last_stats();
    if (!s.empty()) {
      if (const auto problem = snapshot_problem(s)) {
        throw NaaSimError("naa-sim's statistics snapshot " + *problem);
      }
      const std::uint64_t seq = stat_in(s, "naa-sim.stats_seq");
      if (seq > seq_) {
        seq_ = seq;
        return s;
      }
    }
    if (!running()) {
      throw NaaSimError("naa-sim died before answering SIGUSR1: " + describe_exit() + " (" +
                        command_ + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  throw NaaSimError("naa-sim wrote no statistics within 20 s of SIGUSR1 (hung?): " + command_);
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

void NaaSim::freeze() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void NaaSim::thaw() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

std::optional<int> NaaSim::wait_exit(std::chrono::milliseconds timeout) {
  const auto end = Clock::now() + timeout;
  while (running()) {
    if (Clock::now() > end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!wait_status_) return std::nullopt;
  return WIFEXITED(*wait_status_) ? WEXITSTATUS(*wait_status_) : -1;
}

int NaaSim::stop() {
  if (running()) {
    ::kill(pid_, SIGCONT);  // a frozen naa-sim cannot act on SIGTERM
    ::kill(pid_, SIGTERM);
    const auto end = Clock::now() + kStopTimeout;
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

std::optional<std::string> NaaSim::check_exit() {
  checked_ = true;
  if (!wait_status_ && pid_ <= 0) return "naa-sim was never started: " + command_;
  (void)stop();
  const int st = *wait_status_;
  if (WIFEXITED(st) && WEXITSTATUS(st) == expected_exit_) return std::nullopt;
  return describe_exit() + ", expected exit status " + std::to_string(expected_exit_) +
         " (3 = lockstep divergence, 2 = refused option; see naa-sim's stderr above): " + command_;
}

}  // namespace naa::testbench
