// naa-bench --streaming (issue 17, docs/performance.md "Streaming handlers"): add1 on one in/out
// region of each size, stored (store-and-forward, the KernelEngine) and streaming (the region
// marked STREAM, the HandlerEngine), with the NAA's simulated time and memory traffic from
// naa-sim's statistics around each call. Writes streaming.csv (bytes,mode,sim_ns,wall_s,
// memory_bytes) and streaming.gp / streaming.png.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "measure.hpp"
#include "output.hpp"
#include "sim_probe.hpp"

namespace naa::bench {

struct StreamingPoint {
  std::uint64_t bytes = 0;
  bool streaming = false;
  double sim_ns = 0, wall_s = 0;
  double memory_bytes = 0;
};

inline StreamingPoint streaming_point(const Config& c,
                                      const std::shared_ptr<naa::host::Transport>& t,
                                      SimProcess& sim, std::uint64_t bytes, bool streaming) {
  std::vector<std::uint8_t> buf(bytes);
  for (std::size_t i = 0; i < buf.size(); ++i)
    buf[i] = static_cast<std::uint8_t>(i * 7 + 3);
  auto o = session_options(c);
  naa::host::Region r = naa::host::Region::inout(buf.data(), buf.size());
  if (streaming) {
    r.stream();
    o.stream_function = 1;
  }
  naa::host::Session s(t, o, {r});
  const auto before = snapshot(sim);
  const auto w0 = std::chrono::steady_clock::now();
  const auto res = s.call(1);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const auto after = snapshot(sim);
  s.disconnect();
  if (res.return_code != 0) {
    throw naa::host::Error(naa::host::Errc::invalid_argument,
                           "add1 returned " + std::to_string(res.return_code));
  }
  StreamingPoint p;
  p.bytes = bytes;
  p.streaming = streaming;
  p.wall_s = wall;
  const SimDelta d = delta(before, after, 0);
  p.sim_ns = d.time_ns;
  if (before && after) {
    auto df = [&](const char* k) { return sim_stat(*after, k) - sim_stat(*before, k); };
    p.memory_bytes = df("memory.bytes_read") + df("memory.bytes_written");
  }
  return p;
}

// The sweep: 64 KiB x4 up to --max (at most 16 MiB), each size stored then streaming.
template <class Say>
void run_streaming(const Config& c, const std::shared_ptr<naa::host::Transport>& t, SimProcess& sim,
                   Say say) {
  Csv csv(c.out_dir, "streaming.csv", "bytes,mode,sim_ns,wall_s,memory_bytes");
  say("\nstreaming handlers: add1 on one in/out region, stored vs streaming (%s)\n",
      "sim = the NAA's simulated time");
  say("%12s %10s %12s %12s %14s\n", "bytes", "mode", "sim us", "wall ms", "memory bytes");
  const std::uint64_t top = std::min<std::uint64_t>(c.max_size, 16ULL << 20);
  for (std::uint64_t b = 64 * 1024; b <= top; b *= 4) {
    for (const bool streaming : {false, true}) {
      const StreamingPoint p = streaming_point(c, t, sim, b, streaming);
      const char* mode = streaming ? "streaming" : "stored";
      csv.row(p.bytes, std::string(mode), p.sim_ns, p.wall_s, p.memory_bytes);
      say("%12llu %10s %12.2f %12.3f %14.0f\n", static_cast<unsigned long long>(p.bytes), mode,
          p.sim_ns / 1e3, p.wall_s * 1e3, p.memory_bytes);
    }
  }
  if (c.out_dir.empty() || c.plot == "none") return;
  std::ofstream g(c.out_dir + "/streaming.gp");
  g << "# gnuplot script written by naa-bench --streaming; run: gnuplot streaming.gp\n"
       "set datafile separator ','\nset key top left\nset grid\n"
       "set terminal pngcairo size 1000,650 noenhanced\nset output 'streaming.png'\n"
       "set title 'add1 on one in/out region: stored vs streaming (simulated NAA time)'\n"
       "set logscale xy\nset xlabel 'region size (bytes)'\nset ylabel 'simulated us'\n"
       "plot \"< grep ',stored,' streaming.csv\" using 1:($3/1e3) with linespoints "
       "title 'stored (store-and-forward)', \\\n"
       "     \"< grep ',streaming,' streaming.csv\" using 1:($3/1e3) with linespoints "
       "title 'streaming handlers'\n";
  g.close();
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return;
  const std::string cmd = "cd '" + c.out_dir + "' && gnuplot streaming.gp 2>>gnuplot.log";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "naa-bench: gnuplot failed\n");
}

}  // namespace naa::bench
