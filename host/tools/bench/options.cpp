#include "options.hpp"

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

#include "bench_util.hpp"
#include "config.hpp"
#include "measure.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/transport.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/tools/naa_address.hpp"
#include "naa/tools/size_arg.hpp"
#include "output.hpp"
#include "sim_probe.hpp"
#include "udp_baseline.hpp"

namespace {

using namespace naa::bench;

constexpr const char* kUsage = R"USAGE(usage: naa-bench [options]

Benchmarks calls to a (simulated) NAA and prints/writes the figures of docs/performance.md:
  latency     call round trip (inout region of SIZE bytes, WRITE(+IMM) -> kernel -> WRITE back)
              for SIZE = 1 B, x1.5, ... up to --max; setup (registration + connect + MRSP)
              measured separately; raw UDP ping-pong of the same datagram sizes beside it
  --loss-sweep  instead of the above: go-back-N vs IRN at 0/1/5/10 % loss (keyed on QPN, PSN,
              attempt: the same losses for both) on a --stream WRITE stream + 50 add1 calls of
              1 MiB, each point on a fresh naa-sim; writes loss.csv and loss.gp (--out);
              with --cosim: naa-cosim --loss-sweep, timers in simulated time, losses both
              ways, loss.csv and loss.svg (the figures of docs/performance.md);
              --loss-timers measured|constants: the host's timers from the measured round
              trip (default) or the constants; --timer-floor-us N: the measured timers' floor
  stream      one-way RDMA WRITE streaming of --stream bytes in WRITEs of 4 KiB .. --write-max
              (x4), beside a raw UDP stream of the same datagrams; simulated goodput vs the
              100 GbE line rate; simulator speed (simulated cycles per wall second)
  sessions    call throughput with 1 .. --sessions concurrent sessions (--call-size each)
  targets     64 B nop call vs 64 B UDP ping-pong, 64 MiB call vs UDP bulk, naa-sim idle CPU
  streaming   add1 on one in/out region of 64 KiB x4 .. --max (<= 16 MiB), store-and-forward
              vs streaming handlers: streaming.csv (bytes,mode,sim_ns,wall_s,memory_bytes)
Every point has wall time and the NAA's simulated time (cycles, ns) with the per-block busy
cycles (transport, memory, kernel, ...), taken from naa-sim's statistics.

Options:
  -a, --naa ADDR[:PORT]   use a running NAA (default: start naa-sim on <net>.1)
      --sim PATH          naa-sim to start (default: naa-sim next to naa-bench)
      --sim-args ARGS     extra arguments for the started naa-sim (e.g. "--kernels=model")
      --modes LIST        speed per block mode: comma-separated model, rtl, lockstep; starts one
                          naa-sim per mode (--mr-table, --kernels and --rx-pipe set to it),
                          streams in each (-w is stream only) and prints wall goodput and
                          simulated cycles per wall second per mode (modes.csv in DIR)
      --sim-pid PID       with --naa: the naa-sim to signal (SIGUSR1) for statistics
      --sim-stats FILE    with --naa: that naa-sim's --stats-file
      --net A.B.C | N     the /24 of local addresses: naa-sim .1, endpoint .2, UDP baseline
                          .200/.201 (N: 127.40.N; default 127.40.1)
  -w, --what LIST         comma-separated: latency,stream,sessions,targets,streaming,ratios
                          (default: the first four)
      --streaming         only the streaming sweep (= --what streaming)
  -m, --max SIZE          largest latency-sweep size (default 64M, at most 1G)
      --min SIZE          smallest latency-sweep size (default 1)
      --factor F          latency-sweep factor (default 1.5)
  -n, --reps N            repetitions per latency point (default 10)
  -f, --fn FN             kernel of the latency sweep: nop, add1, add2 or 1..127 (default nop)
      --stream SIZE       bytes per one-way streaming point (default 64M)
      --write-max SIZE    largest RDMA WRITE of the streaming sweep (default 4M)
      --stream-depth N    WRITEs a stream keeps outstanding (1..512, default 64; ib_write_bw's
                          --tx-depth, which defaults to 128)
  -s, --sessions N        most concurrent sessions (1..8, default 8)
      --call-size SIZE    inout region per session for the throughput sweep (default 1M)
      --calls N           calls per session per throughput point (default 8)
      --target-reps N     repetitions of the 64 B target latencies (default 300)
      --ratios N          also: every wall-clock target as a ratio to raw UDP of the same
                          datagrams in N pairs (call, then UDP), median and spread
                          (ratios.csv, ratio_summary.csv; docs/performance.md); with
                          --what ratios only these
      --idle-seconds S    naa-sim idle CPU measured over S seconds (default 5; 0 = skip)
      --mtu N             path MTU 256..4096 (default 4096)
  -o, --out DIR           write the CSV files, summary and plots into DIR (default: none)
      --plot FMT          png, svg, both or none (default png; needs gnuplot)
      --cosim             instead: the NAAICE sweep (fn 1, one in/out region, 1 B .. --max) in
                          the calibrated in-process co-simulation (naa-cosim next to naa-bench,
                          docs/sim/calibration.md): DIR/latency_naaice.csv in simulated time, a
                          gnuplot script and plot beside it
      --reference FILE    with --cosim: NAAICE-form CSV (the FPGA's published measurements,
                          testbench/vectors/naaice/fpga_reference.csv) to plot beside ours and
                          to report the mean relative deviation from, per size range
  -q, --quiet             no progress bar and no tables, only the summary
  -h, --help              this help
SIZE takes K, M, G suffixes (powers of 1024).

Files in DIR: latency.csv, latency_naaice.csv (byte_length,setup_time,transfer_time in
seconds, one line per call, as the NAAICE measurements), stream.csv, sessions.csv, targets.csv,
summary.txt, env.txt and latency/stream/sessions.{png,svg}.
Exit status: 0 done, 2 usage error, 3 connection, MRSP or naa-sim failure.
)USAGE";

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "naa-bench: " << msg << "\n\n" << kUsage;
  std::exit(2);
}

std::uint64_t parse_size(const std::string& s) {
  const auto v = naa::tools::parse_size_arg(s);
  if (!v) usage_error("bad size '" + s + "' (a number with an optional K, M or G suffix)");
  return *v;
}

long parse_int(const std::string& s, const char* what, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 0);
  if (errno != 0 || end == s.c_str() || *end != '\0' || v < lo || v > hi) {
    usage_error(std::string("bad value for ") + what + ": '" + s + "'");
  }
  return v;
}

}  // namespace

namespace naa::bench {

Options parse_options(int argc, char** argv) {
  Options o;
  Config& c = o.c;
  std::string& sim_path = o.sim_path;
  std::string& sim_args = o.sim_args;
  std::string& sim_stats = o.sim_stats;
  long& sim_pid = o.sim_pid;
  bool& external = o.external;

  enum {
    kSim = 1000,
    kSimArgs,
    kSimPid,
    kSimStats,
    kNet,
    kMin,
    kFactor,
    kStream,
    kWriteMax,
    kStreamDepth,
    kCallSize,
    kCalls,
    kTargetReps,
    kRatios,
    kIdle,
    kMtu,
    kPlot,
    kStreaming,
    kCosim,
    kReference,
    kModes,
    kLossSweep,
    kLossTimers,
    kTimerFloor
  };
  static const option long_opts[] = {{"naa", required_argument, nullptr, 'a'},
                                     {"sim", required_argument, nullptr, kSim},
                                     {"sim-args", required_argument, nullptr, kSimArgs},
                                     {"modes", required_argument, nullptr, kModes},
                                     {"sim-pid", required_argument, nullptr, kSimPid},
                                     {"sim-stats", required_argument, nullptr, kSimStats},
                                     {"net", required_argument, nullptr, kNet},
                                     {"what", required_argument, nullptr, 'w'},
                                     {"max", required_argument, nullptr, 'm'},
                                     {"min", required_argument, nullptr, kMin},
                                     {"factor", required_argument, nullptr, kFactor},
                                     {"reps", required_argument, nullptr, 'n'},
                                     {"fn", required_argument, nullptr, 'f'},
                                     {"stream", required_argument, nullptr, kStream},
                                     {"write-max", required_argument, nullptr, kWriteMax},
                                     {"stream-depth", required_argument, nullptr, kStreamDepth},
                                     {"sessions", required_argument, nullptr, 's'},
                                     {"call-size", required_argument, nullptr, kCallSize},
                                     {"calls", required_argument, nullptr, kCalls},
                                     {"target-reps", required_argument, nullptr, kTargetReps},
                                     {"ratios", required_argument, nullptr, kRatios},
                                     {"idle-seconds", required_argument, nullptr, kIdle},
                                     {"mtu", required_argument, nullptr, kMtu},
                                     {"out", required_argument, nullptr, 'o'},
                                     {"plot", required_argument, nullptr, kPlot},
                                     {"streaming", no_argument, nullptr, kStreaming},
                                     {"cosim", no_argument, nullptr, kCosim},
                                     {"reference", required_argument, nullptr, kReference},
                                     {"loss-sweep", no_argument, nullptr, kLossSweep},
                                     {"loss-timers", required_argument, nullptr, kLossTimers},
                                     {"timer-floor-us", required_argument, nullptr, kTimerFloor},
                                     {"quiet", no_argument, nullptr, 'q'},
                                     {"help", no_argument, nullptr, 'h'},
                                     {nullptr, 0, nullptr, 0}};
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, ":a:w:m:n:f:s:o:qh", long_opts, nullptr)) != -1) {
    const std::string arg = optarg != nullptr ? optarg : "";
    switch (opt) {
      case 'a': {
        const auto naa = naa::tools::parse_naa_address(arg);
        if (!naa) usage_error("bad --naa address " + arg + " (IP[:PORT])");
        c.naa_address = naa->ip;
        if (naa->cm_port) c.cm_port = *naa->cm_port;
        external = true;
        break;
      }
      case kSim:
        sim_path = arg;
        break;
      case kCosim:
        o.cosim = true;
        break;
      case kReference:
        o.reference = arg;
        break;
      case kSimArgs:
        sim_args = arg;
        break;
      case kModes: {
        std::istringstream in(arg);
        for (std::string m; std::getline(in, m, ',');) {
          if (m != "model" && m != "rtl" && m != "lockstep") {
            usage_error("--modes takes model, rtl and lockstep, not '" + m + "'");
          }
          o.modes.push_back(m);
        }
        if (o.modes.empty()) usage_error("--modes needs at least one mode");
        break;
      }
      case kSimPid:
        sim_pid = parse_int(arg, "--sim-pid", 1, 1L << 30);
        break;
      case kSimStats:
        sim_stats = arg;
        break;
      case kNet:
        if (arg.find('.') == std::string::npos) {
          c.net = "127.40." + std::to_string(parse_int(arg, "--net", 1, 254));
        } else if (!naa::host::parse_ipv4(arg + ".1") ||
                   std::count(arg.begin(), arg.end(), '.') != 2) {
          usage_error("bad --net '" + arg + "' (three octets A.B.C, or N for 127.40.N)");
        } else {
          c.net = arg;
        }
        break;
      case 'w': {
        c.do_latency = c.do_stream = c.do_sessions = c.do_targets = c.do_streaming = false;
        std::istringstream in(arg);
        for (std::string w; std::getline(in, w, ',');) {
          if (w == "latency") {
            c.do_latency = true;
          } else if (w == "stream") {
            c.do_stream = true;
          } else if (w == "sessions") {
            c.do_sessions = true;
          } else if (w == "targets") {
            c.do_targets = true;
          } else if (w == "streaming") {
            c.do_streaming = true;
          } else if (w == "ratios") {
            if (c.ratio_pairs == 0) c.ratio_pairs = 5;
          } else if (w == "all") {
            c.do_latency = c.do_stream = c.do_sessions = c.do_targets = true;
          } else {
            usage_error("unknown --what item '" + w + "'");
          }
        }
        break;
      }
      case 'm':
        c.max_size = parse_size(arg);
        break;
      case kMin:
        c.min_size = parse_size(arg);
        break;
      case kFactor:
        c.factor = std::strtod(arg.c_str(), nullptr);
        if (!(c.factor > 1.01 && c.factor <= 100)) usage_error("--factor must be in (1.01, 100]");
        break;
      case 'n':
        c.reps = static_cast<int>(parse_int(arg, "--reps", 1, 1000000));
        break;
      case 'f':
        if (arg == "nop") {
          c.fn = 3;
        } else if (arg == "add1") {
          c.fn = 1;
        } else if (arg == "add2") {
          c.fn = 2;
        } else {
          c.fn = static_cast<int>(parse_int(arg, "--fn", 1, 127));
        }
        break;
      case kStream:
        c.stream_bytes = parse_size(arg);
        break;
      case kWriteMax:
        c.write_max = parse_size(arg);
        break;
      case kStreamDepth:
        c.stream_depth = static_cast<int>(parse_int(arg, "--stream-depth", 1, 512));
        break;
      case 's':
        c.sessions = static_cast<int>(parse_int(arg, "--sessions", 1, 8));
        break;
      case kCallSize:
        c.call_size = parse_size(arg);
        break;
      case kCalls:
        c.calls = static_cast<int>(parse_int(arg, "--calls", 1, 1000000));
        break;
      case kTargetReps:
        c.target_reps = static_cast<int>(parse_int(arg, "--target-reps", 1, 10000000));
        break;
      case kRatios:
        c.ratio_pairs = static_cast<int>(parse_int(arg, "--ratios", 1, 1000));
        break;
      case kIdle:
        c.idle_seconds = std::strtod(arg.c_str(), nullptr);
        if (!(c.idle_seconds >= 0 && c.idle_seconds <= 3600)) usage_error("bad --idle-seconds");
        break;
      case kMtu: {
        const long m = parse_int(arg, "--mtu", 256, 4096);
        if (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096) {
          usage_error("--mtu must be 256, 512, 1024, 2048 or 4096");
        }
        c.mtu = static_cast<std::uint32_t>(m);
        break;
      }
      case 'o':
        c.out_dir = arg;
        break;
      case kStreaming:
        c.do_latency = c.do_stream = c.do_sessions = c.do_targets = false;
        c.do_streaming = true;
        break;
      case kPlot:
        if (arg != "png" && arg != "svg" && arg != "both" && arg != "none") {
          usage_error("--plot takes png, svg, both or none");
        }
        c.plot = arg;
        break;
      case 'q':
        c.quiet = true;
        break;
      case kLossSweep:
        o.loss_sweep = true;
        break;
      case kLossTimers:
        if (arg != "measured" && arg != "constants") {
          usage_error("--loss-timers takes measured or constants");
        }
        o.loss_constant_timers = arg == "constants";
        break;
      case kTimerFloor: {
        char* end = nullptr;
        const unsigned long v = std::strtoul(arg.c_str(), &end, 10);
        if (arg.empty() || *end != '\0' || v == 0 || v > 1000000) {
          usage_error("--timer-floor-us takes 1..1000000");
        }
        o.loss_timer_floor_us = static_cast<std::uint32_t>(v);
        break;
      }
      case 'h':
        std::cout << kUsage;
        std::exit(0);
      case ':':
        usage_error(std::string("option ") + argv[optind - 1] + " needs a value");
      default:
        usage_error(std::string("unknown option ") + argv[optind - 1]);
    }
  }
  if (optind < argc) usage_error(std::string("unexpected argument ") + argv[optind]);
  if (c.min_size < 1 || c.max_size < c.min_size || c.max_size > (1ULL << 30)) {
    usage_error("need 1 <= --min <= --max <= 1G");
  }
  if (c.stream_bytes < 4096 || c.stream_bytes > (1ULL << 30)) {
    usage_error("--stream must be 4K..1G");
  }
  if (c.write_max < 4096) usage_error("--write-max must be >= 4K");
  if (c.call_size < 1 || c.call_size > (1ULL << 30)) usage_error("--call-size must be 1..1G");
  if (!external && (sim_pid != 0 || !sim_stats.empty())) {
    usage_error("--sim-pid/--sim-stats go with --naa");
  }
  if (sim_args.find("rtl") != std::string::npos || sim_args.find("lockstep") != std::string::npos ||
      sim_args.find("model") != std::string::npos) {
    c.sim_mode = sim_args;
  }
  if (!o.modes.empty()) {
    if (external) usage_error("--modes starts its own naa-sims: not with --naa");
    c.do_latency = c.do_sessions = c.do_targets = false;
    c.do_stream = true;
  }
  return o;
}

}  // namespace naa::bench
