// naa-bench: latency and bandwidth sweeps of calls to an NAA, with raw UDP baselines measured in
// the same run, the 100 GbE line-rate arithmetic, the NAA's simulated time (read from naa-sim's
// statistics before and after every point), simulator speed and naa-sim's idle CPU
// (docs/performance.md explains every figure).
//
// By default it starts its own naa-sim (next to this binary) on <net>.1 (--net) with
// --stats-file, and takes a statistics snapshot (SIGUSR1, then wait for the next stats_seq in the
// file) before and after each point. With --naa it uses a running NAA instead; simulated figures
// then need --sim-pid and --sim-stats (that naa-sim's --stats-file).
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.hpp"
#include "bench/config.hpp"
#include "bench/loss_sweep.hpp"
#include "bench/measure.hpp"
#include "bench/options.hpp"
#include "bench/output.hpp"
#include "bench/ratios.hpp"
#include "bench/sim_probe.hpp"
#include "bench/streaming.hpp"
#include "bench/udp_baseline.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/transport.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/tools/size_arg.hpp"

namespace naa::bench {

// --cosim (issue 15 item 4): naa-cosim (next to naa-bench; host/ does not link the model, cosim/
// does) runs the NAAICE sweep in the calibrated co-simulation into DIR/latency_naaice.csv;
// gnuplot draws the plot beside the FPGA's points. 0 done, 3 failure.
int run_cosim(const Options& o) {
  const Config& c = o.c;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string();
  dir = dir.substr(0, dir.rfind('/') + 1);
  const std::string out = c.out_dir.empty() ? std::string(".") : c.out_dir;
  std::vector<std::string> args = {dir + "naa-cosim", "--calibrated",
                                   "--naaice-sweep",  out + "/latency_naaice.csv",
                                   "--max",           std::to_string(c.max_size)};
  if (o.loss_sweep) {  // --loss-sweep --cosim: the sweep in simulated time (cosim/tools/loss_sweep)
    args = {dir + "naa-cosim", "--loss-sweep", out, "--stream", std::to_string(c.stream_bytes)};
    if (c.quiet) args.push_back("-q");
  } else if (!o.reference.empty()) {
    args.push_back("--reference");
    args.push_back(o.reference);
  }
  auto spawn = [](const std::vector<std::string>& a) {
    std::vector<char*> argv;
    for (const auto& s : a)
      argv.push_back(const_cast<char*>(s.c_str()));  // NOLINT: execv's signature
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    int st = 0;
    if (pid < 0 || ::waitpid(pid, &st, 0) < 0) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  if (spawn(args) != 0) {
    std::cerr << "naa-bench: " << args[0] << " failed\n";
    return 3;
  }
  if (c.plot != "none" && !o.loss_sweep) {  // the loss sweep draws loss.svg itself
    if (spawn({"/usr/bin/gnuplot", out + "/latency_naaice.gp"}) != 0) {
      std::cerr << "naa-bench: gnuplot missing or failed: no plot (the CSV is written)\n";
    }
  }
  return 0;
}

// Runs the benchmarks of `o`: 0 done, 3 connection, MRSP or naa-sim failure. The figures of the
// targets go to *result if given.
int run(Options o, Targets* result = nullptr) {
  Config& c = o.c;
  std::string& sim_path = o.sim_path;
  const std::string& sim_args = o.sim_args;
  const std::string& sim_stats = o.sim_stats;
  const long sim_pid = o.sim_pid;
  const bool external = o.external;
  if (!c.out_dir.empty()) {
    if (::mkdir(c.out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      std::cerr << "naa-bench: cannot create " << c.out_dir << "\n";
      return 3;
    }
  }
  ::signal(SIGPIPE, SIG_IGN);
  if (o.cosim) return run_cosim(o);

  // naa-sim.
  std::unique_ptr<SimProcess> sim_owner;
  std::string tmp_dir;
  if (external) {
    sim_owner = std::make_unique<SimProcess>();
    if (sim_pid != 0 && !sim_stats.empty()) {
      sim_owner->attach(static_cast<pid_t>(sim_pid), sim_stats);
    }
  } else {
    if (sim_path.empty()) {
      char self[4096];
      const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
      std::string dir =
          n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string("naa-bench");
      dir = dir.substr(0, dir.rfind('/') + 1);
      sim_path = dir + "naa-sim";
    }
    char tmpl[] = "/tmp/naa-bench.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      std::cerr << "naa-bench: mkdtemp failed\n";
      return 3;
    }
    tmp_dir = tmpl;
    if (o.loss_sweep) {
      return run_loss_sweep(c, sim_path, tmp_dir, c.stream_bytes,
                            LossTimers{o.loss_constant_timers, o.loss_timer_floor_us});
    }
    c.naa_address = local_ip(c, 1);
    naa::tools::SimLaunch launch;
    launch.binary = sim_path;
    launch.listen = c.naa_address;
    launch.stats_file = tmp_dir + "/naa-sim.stats";
    std::istringstream words(sim_args);
    for (std::string w; words >> w;)
      launch.args.push_back(w);
    try {
      sim_owner = std::make_unique<SimProcess>(launch);
    } catch (const naa::tools::SimProcessError& e) {
      std::cerr << "naa-bench: " << e.what() << "\n";
      return 3;
    }
    if (!sim_owner->ready()) {
      std::cerr << "naa-bench: naa-sim did not start (" << sim_owner->command()
                << "): " << sim_owner->describe_exit() << "; its output: '"
                << sim_owner->ready_line() << "'\n";
      return 3;
    }
  }
  SimProcess& sim = *sim_owner;

  const bool bar = !c.quiet && ::isatty(STDERR_FILENO) != 0;
  const auto sizes = sweep_sizes(c);
  std::vector<std::uint64_t> write_sizes;
  for (std::uint64_t w = 4096; w <= std::min(c.write_max, c.stream_bytes); w *= 4)
    write_sizes.push_back(w);
  // Progress units: roughly proportional to the bytes moved.
  double total = 0;
  if (c.do_latency) {
    for (auto s : sizes)
      total += 1 + static_cast<double>(s) * c.reps / (1 << 20);
  }
  if (c.do_stream)
    total += static_cast<double>(write_sizes.size()) *
             (1 + static_cast<double>(c.stream_bytes) / (1 << 20));
  if (c.do_sessions)
    total += c.sessions * (1 + static_cast<double>(c.call_size) * c.calls / (1 << 20));
  if (c.do_targets) total += 4 + static_cast<double>(c.max_size) / (1 << 20);
  Progress progress(bar, total);
  auto say = [&](const char* fmt_line, auto... a) {
    if (c.quiet) return;
    if (bar) std::fprintf(stderr, "\r%80s\r", "");
    std::printf(fmt_line, a...);
    std::fflush(stdout);
  };

  std::vector<LatencyPoint> lat;
  std::vector<StreamPoint> streams;
  std::vector<SessionsPoint> sess;
  Targets tg;
  int rc = 0;
  try {
    UdpPair udp(local_ip(c, 200), local_ip(c, 201));
    if (!udp.ok()) throw naa::host::Error(naa::host::Errc::socket_error, "UDP baseline sockets");
    auto transport = open_transport(local_ip(c, 2));
    say("naa-bench: NAA %s:%u (%s), endpoint %s, MTU %u\n", c.naa_address.c_str(), c.cm_port,
        external ? "external" : "naa-sim started", local_ip(c, 2).c_str(), c.mtu);

    if (c.do_latency) {
      Csv csv(c.out_dir, "latency.csv",
              "bytes,reps,setup_s,connect_s,mrsp_s,wall_min_s,wall_median_s,wall_mean_s,"
              "wall_max_s,sim_cycles,sim_ns,transport_cycles,memory_cycles,kernel_cycles,"
              "net_port_cycles,rx_pipe_cycles,tx_pipe_cycles,bytes_per_call,udp_min_s,"
              "udp_median_s,call_over_udp,sim_peer_wait_ns");
      Csv naaice(c.out_dir, "latency_naaice.csv", "byte_length,setup_time,transfer_time");
      say("\nlatency (fn %d, inout region, %d calls per size; times per call)\n", c.fn, c.reps);
      say("%12s %10s %11s %11s %11s %12s %11s\n", "bytes", "setup ms", "wall med ms", "sim us",
          "udp med ms", "call/udp", "sim cycles");
      for (const std::uint64_t size : sizes) {
        LatencyPoint p = latency_point(c, transport, sim, size, c.reps, c.fn);
        const auto dg = roce_datagrams(size, c.mtu, true);
        std::vector<double> u;
        for (int r = 0; r < c.reps; ++r) {
          const double s = udp.round_trip(dg);
          if (s > 0) u.push_back(s);
        }
        p.udp = summarize(u);
        const double n = p.reps;
        const SimDelta& d = p.sim;
        csv.row(p.size, p.reps, p.setup_s, p.connect_s, p.mrsp_s, p.wall.min, p.wall.median,
                p.wall.mean, p.wall.max, d.cycles / n, d.time_ns / n, d.transport / n, d.memory / n,
                d.kernel / n, d.net_port / n, d.rx_pipe / n, d.tx_pipe / n, p.bytes_per_call,
                p.udp.min, p.udp.median, p.udp.median > 0 ? p.wall.median / p.udp.median : 0.0,
                d.peer_wait_ns / n);
        for (double w : p.walls)
          naaice.row(p.size, p.setup_s, w);
        say("%12" PRIu64 " %10.3f %11.3f %11.3f %11.3f %12.2f %11.0f\n", p.size, p.setup_s * 1e3,
            p.wall.median * 1e3, d.time_ns / n / 1e3, p.udp.median * 1e3,
            p.udp.median > 0 ? p.wall.median / p.udp.median : 0.0, d.cycles / n);
        lat.push_back(std::move(p));
        progress.advance(1 + static_cast<double>(size) * c.reps / (1 << 20),
                         "latency " + human_size(size));
      }
    }

    if (c.do_stream) {
      Csv csv(c.out_dir, "stream.csv",
              "bytes,write_size,wall_s,wall_gbps,sim_ns,sim_cycles,sim_goodput_gbps,"
              "line_rate_goodput_gbps,udp_wall_s,udp_gbps,transport_cycles,memory_cycles,"
              "kernel_cycles,net_port_cycles,rx_pipe_cycles,tx_pipe_cycles,"
              "sim_work_cycles_per_wall_s,sim_cycles_per_cpu_s,sim_mode,mtu,sim_pipeline_gbps");
      say("\none-way RDMA WRITE streaming, %s per point, MTU %u\n",
          human_size(c.stream_bytes).c_str(), c.mtu);
      say("%10s %10s %10s %10s %10s %10s %14s\n", "write", "wall Gb/s", "sim Gb/s", "line Gb/s",
          "udp Gb/s", "sim ms", "sim cyc/wall s");
      WriteStream ws(transport, c, c.stream_bytes);
      // Same datagram sizes as the WRITE packets of the whole stream.
      for (const std::uint64_t w : write_sizes) {
        StreamPoint p;
        p.bytes = c.stream_bytes;
        p.write_size = w;
        SimProbe probe(sim);
        probe.begin();
        p.wall_s = ws.run(w);
        p.sim = probe.end();
        std::vector<std::uint32_t> dg;
        for (std::uint64_t off = 0; off < c.stream_bytes; off += w) {
          const auto part = roce_datagrams(std::min(w, c.stream_bytes - off), c.mtu, false);
          dg.insert(dg.end(), part.begin(), part.end());
        }
        p.udp_s = udp.one_way(dg);
        const SimDelta& d = p.sim;
        const double speed = d.wall_s > 0 ? d.work_cycles / d.wall_s : 0.0;
        const double speed_cpu = d.cpu_s > 0 ? d.work_cycles / d.cpu_s : 0.0;
        const double bytes = static_cast<double>(p.bytes);
        csv.row(p.bytes, p.write_size, p.wall_s, gbps(bytes, p.wall_s), d.time_ns, d.cycles,
                sim_gbps(bytes, d), line_rate_goodput_gbps(w, c.mtu), p.udp_s, gbps(bytes, p.udp_s),
                d.transport, d.memory, d.kernel, d.net_port, d.rx_pipe, d.tx_pipe, speed, speed_cpu,
                c.sim_mode, static_cast<int>(c.mtu), sim_pipeline_gbps(bytes, d));
        say("%10s %10.2f %10.2f %10.2f %10.2f %10.3f %14.3g\n", human_size(w).c_str(),
            gbps(bytes, p.wall_s), sim_gbps(bytes, d), line_rate_goodput_gbps(w, c.mtu),
            gbps(bytes, p.udp_s), d.time_ns / 1e6, speed);
        if (w >= (1ULL << 20)) {
          tg.sim_write_gbps = std::max(tg.sim_write_gbps, sim_gbps(bytes, d));
          tg.sim_pipeline_gbps = std::max(tg.sim_pipeline_gbps, sim_pipeline_gbps(bytes, d));
          tg.line_rate_gbps = line_rate_goodput_gbps(w, c.mtu);
        }
        tg.sim_speed = std::max(tg.sim_speed, speed);
        tg.stream_wall_gbps = std::max(tg.stream_wall_gbps, gbps(bytes, p.wall_s));
        tg.sim_speed_cpu = std::max(tg.sim_speed_cpu, speed_cpu);
        streams.push_back(p);
        progress.advance(1 + bytes / (1 << 20), "stream " + human_size(w));
      }
    }

    if (c.do_sessions) {
      Csv csv(c.out_dir, "sessions.csv",
              "sessions,call_size,calls_per_session,wall_s,bytes,wall_gbps,calls_per_s,sim_ns,"
              "sim_gbps,transport_cycles,memory_cycles,kernel_cycles,net_port_cycles,"
              "rx_pipe_cycles,tx_pipe_cycles");
      say("\ncall throughput, fn %d, inout %s per session, %d calls each (in+out)\n", c.fn,
          human_size(c.call_size).c_str(), c.calls);
      say("%9s %10s %10s %10s %10s\n", "sessions", "wall Gb/s", "calls/s", "sim Gb/s", "sim ms");
      for (int k = 1; k <= c.sessions; ++k) {
        SessionsPoint p = sessions_point(c, transport, sim, k);
        const SimDelta& d = p.sim;
        const double b = static_cast<double>(p.bytes);
        const double cps = p.wall_s > 0 ? k * p.calls / p.wall_s : 0.0;
        csv.row(k, p.call_size, p.calls, p.wall_s, p.bytes, gbps(b, p.wall_s), cps, d.time_ns,
                sim_gbps(b, d), d.transport, d.memory, d.kernel, d.net_port, d.rx_pipe, d.tx_pipe);
        say("%9d %10.2f %10.1f %10.2f %10.3f\n", k, gbps(b, p.wall_s), cps, sim_gbps(b, d),
            d.time_ns / 1e6);
        sess.push_back(p);
        progress.advance(1 + static_cast<double>(c.call_size) * c.calls / (1 << 20),
                         "sessions " + std::to_string(k));
      }
    }

    if (c.do_streaming) run_streaming(c, transport, sim, say);
    if (c.ratio_pairs > 0) (void)run_ratios(c, transport, sim, udp, c.ratio_pairs, say);

    if (c.do_targets) {
      // 64 B nop call vs a 64 B UDP ping-pong (the same datagram sizes).
      {
        std::vector<std::uint8_t> b(64);
        naa::host::Session s(transport, session_options(c), {naa::host::Region::inout(b)});
        std::vector<double> w;
        for (int r = 0; r < c.target_reps; ++r)
          w.push_back(seconds(s.call(3).wall));
        tg.call64 = summarize(w);
        s.disconnect();
        const auto dg = roce_datagrams(64, c.mtu, true);
        std::vector<double> u;
        for (int r = 0; r < c.target_reps; ++r) {
          const double x = udp.round_trip(dg);
          if (x > 0) u.push_back(x);
        }
        tg.udp64 = summarize(u);
        progress.advance(2, "targets: 64 B");
      }
      // The largest call (default 64 MiB) vs raw UDP out and back of the same datagrams.
      {
        tg.big_size = c.max_size;
        const LatencyPoint* have = nullptr;
        for (const auto& p : lat) {
          if (p.size == c.max_size) have = &p;
        }
        LatencyPoint fresh;
        if (have == nullptr) {
          fresh = latency_point(c, transport, sim, c.max_size, 3, 3);
          have = &fresh;
        }
        tg.big_call_gbps = gbps(static_cast<double>(have->bytes_per_call), have->wall.median);
        const auto dg = roce_datagrams(c.max_size, c.mtu, true);
        std::vector<double> u;
        for (int r = 0; r < 3; ++r) {
          const double x = udp.round_trip(dg);
          if (x > 0) u.push_back(x);
        }
        tg.udp_bulk_gbps = gbps(2.0 * static_cast<double>(c.max_size), summarize(u).median);
        progress.advance(2 + static_cast<double>(c.max_size) / (1 << 20), "targets: bulk");
      }
    }
    transport.reset();
  } catch (const naa::host::Error& e) {
    progress.finish();
    std::cerr << "naa-bench: " << e.what() << " ["
              << naa::host::errc_name(static_cast<naa::host::Errc>(e.code().value())) << "]\n";
    rc = 3;
  }
  progress.finish();

  // naa-sim idle: CPU time over a quiet window (nothing connected any more).
  if (rc == 0 && c.do_targets && c.idle_seconds > 0 && sim.pid() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the last DREQs settle
    const auto a = sim.cpu_seconds();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(c.idle_seconds));
    const auto b = sim.cpu_seconds();
    if (a && b) {
      tg.idle_cpu_s = *b - *a;
      tg.idle_window_s = seconds(Clock::now() - t0);
    }
  }

  if (rc == 0 && c.do_targets) {
    Csv csv(c.out_dir, "targets.csv", "target,goal,measured,unit,met");
    std::ostringstream out;
    auto line = [&](const std::string& name, const std::string& goal, double v,
                    const std::string& unit, bool ok, bool known) {
      char b[256];
      std::snprintf(b, sizeof b, "  %-44s %-16s %12.4g %-10s %s\n", name.c_str(), goal.c_str(), v,
                    unit.c_str(), known ? (ok ? "met" : "NOT met") : "n/a");
      out << b;
      csv.row(name, goal, v, unit, std::string(known ? (ok ? "yes" : "no") : "n/a"));
    };
    out << "targets (issue 7):\n";
    const double ratio_big = tg.udp_bulk_gbps > 0 ? tg.big_call_gbps / tg.udp_bulk_gbps : 0;
    line(human_size(tg.big_size) + " call wall throughput / raw UDP bulk", ">= 0.5", ratio_big,
         "ratio", ratio_big >= 0.5, tg.udp_bulk_gbps > 0);
    line("  call (in+out)", "", tg.big_call_gbps, "Gb/s", true, true);
    line("  raw UDP out and back", "", tg.udp_bulk_gbps, "Gb/s", true, true);
    const double ratio64 = tg.udp64.median > 0 ? tg.call64.median / tg.udp64.median : 0;
    line("64 B nop call latency / raw UDP ping-pong", "<= 2", ratio64, "ratio (med)",
         ratio64 <= 2.0, tg.udp64.median > 0);
    line("  call median", "", tg.call64.median * 1e6, "us", true, true);
    line("  UDP ping-pong median", "", tg.udp64.median * 1e6, "us", true, true);
    const double ratio64min = tg.udp64.min > 0 ? tg.call64.min / tg.udp64.min : 0;
    line("  min / min", "", ratio64min, "ratio", true, true);
    line("simulated goodput, 1 MiB+ WRITEs (end to end)", ">= 97", tg.sim_write_gbps, "Gb/s",
         tg.sim_write_gbps >= 97.0, tg.sim_write_gbps > 0);
    line("  pipeline bound (busiest block)", ">= 97", tg.sim_pipeline_gbps, "Gb/s",
         tg.sim_pipeline_gbps >= 97.0, tg.sim_pipeline_gbps > 0);
    line("  100 GbE line-rate goodput at this MTU", "", tg.line_rate_gbps, "Gb/s", true, true);
    line("simulator speed while streaming (" + c.sim_mode + ")", ">= 5e6", tg.sim_speed, "cycles/s",
         tg.sim_speed >= 5e6, tg.sim_speed > 0);
    line("  per naa-sim CPU second", "", tg.sim_speed_cpu, "cycles/s", true, true);
    const double idle_pct = tg.idle_window_s > 0 ? 100.0 * tg.idle_cpu_s / tg.idle_window_s : -1;
    line("naa-sim idle CPU", "0 (1 tick)", idle_pct, "% of a core",
         tg.idle_cpu_s >= 0 && tg.idle_cpu_s <= 0.011, tg.idle_cpu_s >= 0);
    std::cout << (c.quiet ? "" : "\n") << out.str();
    if (!c.out_dir.empty()) {
      std::ofstream(c.out_dir + "/summary.txt") << out.str();
    }
  }
  if (!c.out_dir.empty()) {
    std::ofstream env(c.out_dir + "/env.txt");
    env << "naa_address=" << c.naa_address << "\nmtu=" << c.mtu << "\nsim_mode=" << c.sim_mode
        << "\nreps=" << c.reps << "\nfn=" << c.fn << "\n";
    write_plots(c, !lat.empty(), !streams.empty(), !sess.empty());
  }
  sim.stop();
  if (!tmp_dir.empty()) {
    (void)std::remove((tmp_dir + "/naa-sim.stats").c_str());
    (void)std::remove((tmp_dir + "/naa-sim.stats.tmp").c_str());
    (void)::rmdir(tmp_dir.c_str());
  }
  if (result != nullptr) *result = tg;
  return rc;
}

// --modes: the streaming measurement once per block mode, each against a naa-sim of its own with
// every block that has RTL in that mode (docs/sim/rtl.md "What each mode costs"), then one table:
// the best wall-clock goodput and the best simulated cycles per wall second of each mode, and
// their ratio to the first mode's.
int run_modes(const Options& o) {
  struct Row {
    std::string mode;
    Targets tg;
  };
  std::vector<Row> rows;
  if (!o.c.out_dir.empty() && ::mkdir(o.c.out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    std::cerr << "naa-bench: cannot create " << o.c.out_dir << "\n";
    return 3;
  }
  for (const std::string& mode : o.modes) {
    Options one = o;
    one.modes.clear();
    one.sim_args += " --mr-table=" + mode + " --kernels=" + mode + " --rx-pipe=" + mode;
    one.c.sim_mode = mode;
    if (!o.c.out_dir.empty()) one.c.out_dir = o.c.out_dir + "/" + mode;
    if (!o.c.quiet) std::printf("\n== mode %s: naa-sim%s\n", mode.c_str(), one.sim_args.c_str());
    Row r{mode, {}};
    if (const int rc = run(one, &r.tg); rc != 0) return rc;
    rows.push_back(r);
  }
  std::printf(
      "\nspeed per block mode (one-way RDMA WRITE streaming, %s per point, MTU %u; best "
      "point of each mode)\n",
      human_size(o.c.stream_bytes).c_str(), o.c.mtu);
  std::printf("%-10s %12s %20s %10s\n", "mode", "wall Gb/s", "sim cycles/wall s",
              ("vs " + rows.front().mode).c_str());
  Csv csv(o.c.out_dir, "modes.csv", "mode,stream_bytes,wall_gbps,sim_cycles_per_wall_s,ratio");
  for (const Row& r : rows) {
    const double base = rows.front().tg.sim_speed;
    const double ratio = base > 0 ? r.tg.sim_speed / base : 0.0;
    std::printf("%-10s %12.3f %20.3g %9.0f%%\n", r.mode.c_str(), r.tg.stream_wall_gbps,
                r.tg.sim_speed, 100 * ratio);
    csv.row(r.mode, o.c.stream_bytes, r.tg.stream_wall_gbps, r.tg.sim_speed, ratio);
  }
  return 0;
}

}  // namespace naa::bench

int main(int argc, char** argv) {
  const naa::bench::Options o = naa::bench::parse_options(argc, argv);
  return o.modes.empty() ? naa::bench::run(o) : naa::bench::run_modes(o);
}
