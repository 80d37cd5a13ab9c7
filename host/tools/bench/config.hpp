// naa-bench: what to measure (Config, from the command line) and the figures of each point.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "sim_probe.hpp"

namespace naa::bench {

struct Config {
  std::string naa_address;
  std::uint16_t cm_port = 12345;
  std::string net = "127.40.1";  // the first three octets of every local address
  std::uint64_t min_size = 1;
  std::uint64_t max_size = 64ULL << 20;
  double factor = 1.5;
  int reps = 10;
  int fn = 3;
  std::uint64_t stream_bytes = 64ULL << 20;
  std::uint64_t write_max = 4ULL << 20;
  // WRITEs a stream keeps outstanding: deep enough that the sender never waits for an ACK
  // round trip (4 made every 4 KiB WRITE a wake-up on both sides: 0.05 of raw UDP, issue 19).
  int stream_depth = 64;
  int sessions = 8;
  std::uint64_t call_size = 1ULL << 20;
  int calls = 8;
  int target_reps = 300;
  int ratio_pairs = 0;  // --ratios N: paired ratios to raw UDP (bench/ratios.hpp); 0 = off
  double idle_seconds = 5;
  std::uint32_t mtu = 4096;
  std::string out_dir;
  std::string plot = "png";
  bool quiet = false;
  bool do_latency = true, do_stream = true, do_sessions = true, do_targets = true;
  bool do_streaming = false;         // --streaming: stored vs streaming add1 (bench/streaming.hpp)
  std::string sim_mode = "default";  // naa-sim's default blocks, or --sim-args / --modes
};

inline std::string local_ip(const Config& c, int host) {
  return c.net + "." + std::to_string(host);
}

struct LatencyPoint {
  std::uint64_t size = 0;
  int reps = 0;
  double setup_s = 0, connect_s = 0, mrsp_s = 0;
  Summary wall;
  std::vector<double> walls;
  std::uint64_t bytes_per_call = 0;  // in + out
  SimDelta sim;
  Summary udp;
};

struct StreamPoint {
  std::uint64_t bytes = 0;
  std::uint64_t write_size = 0;
  double wall_s = 0;
  double udp_s = 0;
  SimDelta sim;
};

struct SessionsPoint {
  int sessions = 0;
  std::uint64_t call_size = 0;
  int calls = 0;
  double wall_s = 0;
  std::uint64_t bytes = 0;  // in + out, all sessions
  SimDelta sim;
};

struct Targets {
  Summary call64, udp64;
  std::uint64_t big_size = 0;
  double big_call_gbps = 0, udp_bulk_gbps = 0;
  double sim_write_gbps = 0;     // best simulated goodput of 1 MiB+ WRITEs, end to end
  double sim_pipeline_gbps = 0;  // the same, pipeline bound
  double line_rate_gbps = 0;
  double sim_speed = 0;         // simulated work cycles per wall second while streaming
  double stream_wall_gbps = 0;  // best wall-clock goodput of the streaming points
  double sim_speed_cpu = 0;
  double idle_cpu_s = -1, idle_window_s = 0;
};

}  // namespace naa::bench
