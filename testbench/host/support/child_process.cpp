#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace naa::testbench {

namespace {

std::vector<char*> argv_of(const std::string& path, const std::vector<std::string>& args,
                           std::vector<std::string>& storage) {
  storage.clear();
  storage.push_back(path);
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> v;
  for (auto& s : storage)
    v.push_back(s.data());
  v.push_back(nullptr);
  return v;
}

}  // namespace

RunResult run_program(const std::string& path, const std::vector<std::string>& args,
                      const std::vector<std::string>& env, std::chrono::milliseconds timeout) {
  RunResult r;
  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return r;
  std::vector<std::string> storage;
  std::vector<char*> argv = argv_of(path, args, storage);
  // getenv() takes the first match: the overrides go first, the last given wins.
  std::vector<char*> envp;
  for (auto it = env.rbegin(); it != env.rend(); ++it)
    envp.push_back(const_cast<char*>(it->c_str()));
  for (char** e = environ; *e != nullptr; ++e)
    envp.push_back(*e);
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execve(path.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true;
  bool err_open = true;
  bool killed = false;
  while (out_open || err_open) {
    pollfd p[2] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    if (::poll(p, 2, static_cast<int>(std::min<long>(left.count(), 100))) <= 0) continue;
    char buf[4096];
    for (int i = 0; i < 2; ++i) {
      if ((p[i].revents & (POLLIN | POLLHUP)) == 0) continue;
      const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = !killed && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

ChildProcess::ChildProcess(const std::string& path, const std::vector<std::string>& args) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  std::vector<std::string> storage;
  std::vector<char*> argv = argv_of(path, args, storage);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::execv(path.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  out_fd_ = out[0];
}

ChildProcess::~ChildProcess() {
  stop();
  if (out_fd_ >= 0) ::close(out_fd_);
}

void ChildProcess::pump(int timeout_ms) {
  if (out_fd_ < 0) return;
  pollfd p{out_fd_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return;
  char buf[4096];
  const ssize_t n = ::read(out_fd_, buf, sizeof buf);
  if (n > 0) {
    output_.append(buf, static_cast<std::size_t>(n));
    // A misbehaving server must not eat the test's memory: keep the head and the tail.
    constexpr std::size_t kKeep = 256 * 1024;
    if (output_.size() > 2 * kKeep) {
      output_ = output_.substr(0, kKeep / 4) + "\n[... output truncated ...]\n" +
                output_.substr(output_.size() - kKeep);
    }
  } else {
    ::close(out_fd_);
    out_fd_ = -1;
  }
}

bool ChildProcess::running() {
  if (exited_ || pid_ <= 0) return false;
  if (::waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
  return !exited_;
}

bool ChildProcess::wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (output_.find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline || !running()) {
      pump(0);
      return output_.find(text) != std::string::npos;
    }
    pump(50);
  }
  return true;
}

const std::string& ChildProcess::output() {
  pump(0);
  return output_;
}

int ChildProcess::stop() {
  if (pid_ <= 0) return -1;
  if (running()) {
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (running() && std::chrono::steady_clock::now() < deadline)
      pump(20);
    if (running()) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      exited_ = true;
    }
  }
  while (out_fd_ >= 0)
    pump(10);
  pid_ = -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

}  // namespace naa::testbench
