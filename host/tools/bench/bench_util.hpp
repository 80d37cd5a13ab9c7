// naa-bench: time, sizes, summaries and the progress bar, shared by its files.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

namespace naa::bench {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

inline std::string human_size(std::uint64_t b) {
  char buf[32];
  if (b >= (1ULL << 30) && b % (1ULL << 30) == 0) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " GiB", b >> 30);
  } else if (b >= (1ULL << 20)) {
    std::snprintf(buf, sizeof buf, "%.3g MiB", static_cast<double>(b) / (1 << 20));
  } else if (b >= (1ULL << 10)) {
    std::snprintf(buf, sizeof buf, "%.3g KiB", static_cast<double>(b) / (1 << 10));
  } else {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
  }
  return buf;
}

struct Summary {
  double min = 0, median = 0, mean = 0, max = 0;
};

inline Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return s;
}

// ---------------------------------------------------------------------------------------------
// Progress bar: on a terminal (stderr) only, and never with --quiet.

class Progress {
 public:
  Progress(bool enabled, double total) : enabled_(enabled), total_(total) {}
  void set_total(double t) { total_ = t; }
  void advance(double units, const std::string& what) {
    done_ += units;
    if (!enabled_) return;
    const double f = total_ > 0 ? std::min(1.0, done_ / total_) : 1.0;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(f * kWidth);
    std::fprintf(stderr, "\r[%s%s] %3d%% %-40.40s",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(),
                 static_cast<int>(f * 100), what.c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fprintf(stderr, "\r%80s\r", "");
  }

 private:
  bool enabled_;
  double total_;
  double done_ = 0;
};

}  // namespace naa::bench
