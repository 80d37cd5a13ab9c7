// naa-bench: output: CSV files, figures derived from a point, gnuplot plots.
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

#include "config.hpp"

namespace naa::bench {

class Csv {
 public:
  Csv(const std::string& dir, const std::string& name, const std::string& header) {
    if (dir.empty()) return;
    f_.open(dir + "/" + name);
    if (!f_) {
      std::cerr << "naa-bench: cannot write " << dir << "/" << name << "\n";
      std::exit(3);
    }
    f_ << header << '\n';
  }
  template <class... T>
  void row(const T&... v) {
    if (!f_.is_open()) return;
    bool first = true;
    ((f_ << (first ? "" : ",") << fmt(v), first = false), ...);
    f_ << '\n';
    f_.flush();
  }

 private:
  static std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
  }
  static std::string fmt(std::uint64_t v) { return std::to_string(v); }
  static std::string fmt(int v) { return std::to_string(v); }
  static std::string fmt(const std::string& v) { return v; }
  std::ofstream f_;
};

inline double gbps(double bytes, double s) {
  return s > 0 ? bytes * 8 / s / 1e9 : 0.0;
}
inline double sim_gbps(double bytes, const SimDelta& d) {
  return d.valid && d.time_ns > 0 ? bytes * 8 / d.time_ns : 0.0;
}
// What the NAA sustains when packets arrive back to back: bytes over the busy time of its
// busiest block (the pipeline bound), independent of how the host's packets were spaced.
inline double sim_pipeline_gbps(double bytes, const SimDelta& d) {
  const double busiest =
      std::max({d.net_port, d.rx_pipe, d.transport, d.memory, d.kernel, d.tx_pipe});
  return d.valid && busiest > 0 && d.clock_mhz > 0 ? bytes * 8 / (busiest * 1e3 / d.clock_mhz)
                                                   : 0.0;
}

inline void write_plots(const Config& c, bool latency, bool stream, bool sessions) {
  if (c.out_dir.empty() || c.plot == "none") return;
  std::vector<std::pair<std::string, std::string>> terms;
  if (c.plot == "png" || c.plot == "both") {
    terms.emplace_back("png", "pngcairo size 1000,650 noenhanced");
  }
  if (c.plot == "svg" || c.plot == "both") {
    terms.emplace_back("svg", "svg size 1000,650 noenhanced");
  }
  const std::string script = c.out_dir + "/plots.gp";
  std::ofstream g(script);
  g << "# gnuplot script written by naa-bench; run: gnuplot plots.gp\n"
       "set datafile separator ','\nset key top left\nset grid\n";
  for (const auto& [ext, term] : terms) {
    g << "set terminal " << term << '\n';
    if (latency) {
      g << "set output 'latency." << ext << "'\n"
        << "set title 'Call round trip vs message size (inout region, " << c.mtu
        << " B MTU)'\nset logscale xy\nset xlabel 'message size (bytes, each way)'\n"
           "set ylabel 'seconds'\nset format y '%g'\n"
           "plot 'latency.csv' using 1:7 with linespoints title 'call wall (median)', \\\n"
           "     '' using 1:($11/1e9) with linespoints title 'call simulated (NAA time)', \\\n"
           "     '' using 1:3 with linespoints title 'setup (register+connect+MRSP)', \\\n"
           "     '' using 1:20 with linespoints title 'raw UDP round trip (median)'\n"
           "unset logscale\n";
    }
    if (stream) {
      g << "set output 'stream." << ext << "'\n"
        << "set title 'One-way RDMA WRITE streaming vs WRITE size'\nset logscale x\n"
           "set xlabel 'RDMA WRITE size (bytes)'\nset ylabel 'Gb/s'\nset yrange [0:*]\n"
           "plot 'stream.csv' using 2:4 with linespoints title 'wall goodput', \\\n"
           "     '' using 2:7 with linespoints title 'simulated goodput', \\\n"
           "     '' using 2:8 with lines dashtype 2 title '100 GbE line rate (goodput)', \\\n"
           "     '' using 2:10 with linespoints title 'raw UDP stream (wall)'\n"
           "unset logscale\nset yrange [*:*]\n";
    }
    if (sessions) {
      g << "set output 'sessions." << ext << "'\n"
        << "set title 'Call throughput vs concurrent sessions (in+out)'\n"
           "set xlabel 'sessions'\nset ylabel 'Gb/s'\nset yrange [0:*]\nset xtics 1\n"
           "plot 'sessions.csv' using 1:6 with linespoints title 'wall', \\\n"
           "     '' using 1:9 with linespoints title 'simulated'\n"
           "set xtics autofreq\nset yrange [*:*]\n";
    }
  }
  g.close();
  const std::string cmd = "cd '" + c.out_dir + "' && gnuplot plots.gp 2>gnuplot.log";
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::cerr << "naa-bench: gnuplot not found; plots.gp written, no plots\n";
    return;
  }
  if (std::system(cmd.c_str()) != 0) {
    std::cerr << "naa-bench: gnuplot failed (see " << c.out_dir << "/gnuplot.log)\n";
  }
}

}  // namespace naa::bench
