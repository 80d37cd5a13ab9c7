// Helpers shared by the reliability suites (testbench/reliability): environment knobs,
// process memory figures and a summary sink for the figures docs/reliability.md tabulates.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace naa::testbench {

// An integer knob from the environment (CI runs the defaults; the full sizes are opt-in).
inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
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

}  // namespace naa::testbench
