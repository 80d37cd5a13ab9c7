// Helpers shared by the reliability suites (testbench/reliability): addresses, environment knobs,
// process memory figures and a summary sink for the figures docs/reliability.md tabulates.
#pragma once

#include <dirent.h>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace naa::reliability {

// Legacy hand-numbered addresses 127.30.<n>.<m> (n: test case, m: 1 = naa-sim), kept only until
// the last suites move to naa::testbench::test_addresses() (testbench/support/test_addresses.hpp).
inline std::string ip(int n, int m) {
  return "127.30." + std::to_string(n) + "." + std::to_string(m);
}

// An integer knob from the environment (CI runs the defaults; the full sizes are opt-in).
inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

// The pid of the naa-sim serving `listen_ip` (found by its command line), or -1.
inline int find_naa_sim_pid(const std::string& listen_ip) {
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return -1;
  int found = -1;
  while (dirent* e = ::readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream f("/proc/" + std::string(e->d_name) + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmd.find("naa-sim") == std::string::npos) continue;
    if (cmd.find(std::string("--listen") + '\0' + listen_ip + '\0') == std::string::npos) continue;
    found = pid;
    break;
  }
  ::closedir(d);
  return found;
}

// VmRSS / VmHWM (peak) of a process in KiB, 0 if unknown.
inline std::uint64_t proc_kib(int pid, const std::string& field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field + ":", 0) == 0)
      return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10);
  }
  return 0;
}

// One line of figures for the report: printed, and appended to $NAA_RELIABILITY_REPORT if set.
inline void report_line(const std::string& line) {
  std::cout << "[reliability] " << line << std::endl;
  if (const char* path = std::getenv("NAA_RELIABILITY_REPORT")) {
    std::ofstream(path, std::ios::app) << line << '\n';
  }
}

}  // namespace naa::reliability
