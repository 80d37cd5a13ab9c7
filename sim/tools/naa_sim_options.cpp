// naa-sim's command line (docs/sim/naa-sim.md): the usage text and parse_options().
#include "naa_sim_options.hpp"

#include <arpa/inet.h>
#include <getopt.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "naa/sim/builtin_handler_images.hpp"
#include "naa/sim/hpu_handler.hpp"
#include "naa/sim/net_port.hpp"

namespace naa::sim::tools {

namespace {

constexpr const char* kUsage = R"USAGE(usage: naa-sim [options]

The simulated network-attached accelerator: a cycle-level SystemC model that serves RoCEv2 peers
(IB CM, MRSP, RDMA WRITE calls) on UDP port 4791 of one IPv4 address.

Options:
  --listen IP        IPv4 address to serve on, port 4791 (default 127.0.0.2; must be a
                     specific address, not 0.0.0.0)
  --cm-port N        rdma_cm port the NAA listens on: service ID 0x0000000001060000 | N
                     (default 12345)
  --pcap FILE        capture every datagram in and out to FILE (classic pcap, Ethernet,
                     nanosecond timestamps in simulated time; flushed on exit)
  --qps N            number of RC queue pairs, 1..256 (default 16)
  --mem SIZE         on-board memory in bytes; suffixes K, M, G (default 4G; sparse)
  --clock-mhz F      NAA core clock in MHz (default 250)
  --width N          datapath width in bytes per cycle (default 64)
  --mtu-max N        largest path MTU accepted in a CM REQ: 256, 512, 1024, 2048 or 4096
                     (default 4096); a REQ asking for more is rejected (REJ 26)
  --kernel-timeout-cycles N
                     watchdog: a kernel costing more than N cycles is stopped, its results are
                     discarded and the call answers return code 0x02 (default 0 = no limit)
  --hpus N           streaming handlers: handler processing units, 1..256 (default 8)
  --hpu-mem SIZE     HPU memory: handler state + packets waiting for an HPU; suffixes K, M
                     (default 256K); a packet that finds neither is RNR-NAKed
  --hpu-width N      bytes per cycle of the handlers' cost models (default 8)
  --hpu-max-cycles N a handler invocation over N cycles is stopped (0x02; default 0 = only
                     the --kernel-timeout-cycles watchdog) (docs/sim/handler_engine.md)
  --builtin-handlers=c|cpp
                     the built-in streaming handlers (add1, add2, sum_u64, crc32,
                     unpack_strided): c runs spin/builtins' C images on the HPU cores (--hpu;
                     the default when this build has them), cpp the C++ oracles of
                     sim/src/handlers.cpp with their cost formulas (docs/spin.md)
  --idle-timeout-ms N
                     idle liveness: a connection that heard nothing from its host for N ms
                     gets a zero-length RDMA WRITE probe; if the retries run out its QP,
                     regions and MR entries are released (default 60000; 0 = never)
  --seed N           reproducible run: rkey tags, comm IDs, starting PSNs and fault decisions
                     from a generator seeded with N. Default: secrets from the OS random
                     source (unpredictable rkeys), fault decisions from a seed drawn from it
                     and printed on stderr when faults are injected
  --fault-rx SPEC    inject faults into received datagrams at the port; SPEC is
                     loss=P,dup=P,reorder=P,reorder-delay=N,corrupt=P (any subset, P in [0,1];
                     a reordered datagram is overtaken by the next N, default 3); counted as
                     net_port.fault_rx.* (docs/reliability.md)
  --fault-tx SPEC    the same for datagrams the NAA sends (net_port.fault_tx.*)
  --irn on|off       accept IRN (selective repeat) when a host offers it in its CM REQ
                     (default on); a REQ without the capability block always gets go-back-N
  --irn-bdp-cap N    largest IRN BDP cap (bitmap size) granted, 1..4096 packets (default 128)
  --fault-key K      what both directions' fault decisions are drawn for: sequence (the
                     datagram order, default) or packet (QPN, PSN, attempt: the same losses
                     whatever the transport sends; docs/adr/0003); also key=K in a SPEC
  --link-gbps F      line rate of the link in front of the port, each way, in Gb/s
                     (default 100; 0 = no link model: datagrams enter when read). Arrivals
                     are spaced at this rate counting Ethernet wire bytes (headers, FCS,
                     preamble, inter-frame gap), transmissions leave at it (docs/sim/net_port.md)
  --link-latency-ns N
                     one-way propagation delay of the link (default 0)
  --link-hold-us N   wall time to wait for the next datagram of a stream before simulated
                     time passes its earliest arrival (default 20000; docs/sim/timing.md)
  --poll-us N        within N us of wall time after the last datagram sent or read, look at
                     the socket without blocking before sleeping (the peer's next datagram
                     often comes that soon; default 50, 0 = block at once; docs/sim/timing.md)
  --stats            print statistics on exit (they are always printed on SIGUSR1)
  --stats-file FILE  write statistics to FILE (replaced atomically) instead of stdout; implies
                     --stats
  --log-level L      error, warn, info or debug (default warn); logs go to stderr
@BLOCK_OPTIONS@
  --kernel PATH.so   load a kernel plug-in (naa_add_kernel, docs/rtl/kernel-shell.md
                     "Plug-ins"); repeatable. Its kernel answers its function code in the mode
                     --kernels gives (model and lockstep need a plug-in with a C++ model); a
                     plug-in of another naa version, a function code already taken, a width
                     other than --width or a file that is not a plug-in: exit status 2
  --handler IMG.elf  install a sPIN handler image (naa/spin.h, built by naa_add_handler;
                     docs/spin.md) for its function code: calls on a STREAM connection run it
                     on the HPU cores (--hpu); repeatable. An image that is not an RV32IM
                     executable, is larger than 64 KiB, has no naa_spin_info, or takes a
                     function code already served by a handler: exit status 2
  --trace FILE.fst   FST waveform (GTKWave) of the Verilated blocks, on the simulated time axis;
                     with lockstep it ends at the first divergence (docs/sim/rtl.md); complete
                     after SIGINT/SIGTERM too
  --trace-window N   keep only the last N Verilated cycles of the waveform (a ring buffer),
                     written at the first lockstep divergence or at exit; needs --trace
  --trace-start T    record the waveform from simulated time T on (suffix ps, ns, us, ms or s;
                     default unit ns); needs --trace
  --help             print this help and exit

Output: one line "naa-sim: listening on IP:4791 (cm port N)" on stdout once it serves; then
statistics as key=value lines between "naa-sim.stats_seq=N" and "naa-sim.end=1".
Signals: SIGINT/SIGTERM stop cleanly (pcap flushed), SIGUSR1 prints statistics.
Lockstep: the first divergence between a block's model and its RTL prints a report on stderr
(block, port, expected and actual values, simulated time, the command to reproduce) and stops.
Exit status: 0 stopped by a signal, 1 cannot listen or write the pcap, 2 bad command line,
3 lockstep divergence.
)USAGE";

}  // namespace

std::string usage() {
  std::string u = kUsage;
  const std::string mark = "@BLOCK_OPTIONS@\n";
  u.replace(u.find(mark), mark.size(), naa::sim::BlockModes::help(kHasRtl));
  return u;
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "naa-sim: " << msg << "\n\n" << usage();
  std::exit(2);
}

namespace {

std::uint64_t parse_u64(const char* s, const char* what, std::uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 0);
  if (errno != 0 || end == s || *end != '\0' || *s == '-' || v > max) {
    usage_error(std::string("bad value for ") + what + ": " + s);
  }
  return v;
}

// The command line, quoted for a POSIX shell: what a divergence report says to run again.
constexpr const char* kShellSafe =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+-@%";
std::string command_line(int argc, char* argv[]) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of(kShellSafe) == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (const char ch : a)
      out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    out += '\'';
  }
  return out;
}

std::uint64_t parse_size(const char* s) {
  std::string str(s);
  std::uint64_t mult = 1;
  if (!str.empty()) {
    switch (str.back()) {
      case 'K':
      case 'k':
        mult = 1ULL << 10;
        break;
      case 'M':
      case 'm':
        mult = 1ULL << 20;
        break;
      case 'G':
      case 'g':
        mult = 1ULL << 30;
        break;
      default:
        break;
    }
    if (mult != 1) str.pop_back();
  }
  const std::uint64_t v = parse_u64(str.c_str(), "--mem", (1ULL << 56) / mult);
  if (v == 0) usage_error("--mem must be > 0");
  return v * mult;
}

// --trace-start: a simulated time with a unit suffix (ps, ns, us, ms, s; none = ns), in ps.
std::uint64_t parse_time_ps(const char* s) {
  std::string str(s);
  std::uint64_t scale = 1000;  // ns
  for (const auto& [suffix, ps] : {std::pair<const char*, std::uint64_t>{"ps", 1},
                                   {"ns", 1000},
                                   {"us", 1000000},
                                   {"ms", 1000000000},
                                   {"s", 1000000000000}}) {
    const std::string sfx = suffix;
    if (str.size() > sfx.size() && str.compare(str.size() - sfx.size(), sfx.size(), sfx) == 0) {
      scale = ps;
      str.resize(str.size() - sfx.size());
      break;
    }
  }
  return parse_u64(str.c_str(), "--trace-start", UINT64_MAX / scale) * scale;
}

// --handler: the image is read and checked now, so that one that cannot run is a bad command
// line (exit 2 with the reason) rather than a failure once a call arrives.
void add_handler_image(naa::sim::SimConfig& cfg, const std::string& path) {
  std::string why;
  if (!naa::sim::add_handler_image_file(cfg, path, why)) {
    std::cerr << "naa-sim: --handler " << path << ": " << why << '\n';
    std::exit(2);
  }
}

}  // namespace

// Reads the command line; a bad option prints usage and exits 2 (usage_error).
Options parse_options(int argc, char* argv[]) {
  Options o;
  naa::sim::SimConfig& cfg = o.cfg;
  naa::sim::RunOptions& opts = o.run;
  o.command_line = command_line(argc, argv);
  enum : int {
    kListen = 256,
    kCmPort,
    kPcap,
    kQps,
    kMem,
    kClock,
    kWidth,
    kMtu,
    kKernelTimeout,
    kIdleTimeout,
    kSeed,
    kFaultRx,
    kFaultTx,
    kFaultKey,
    kLinkGbps,
    kLinkLatency,
    kLinkHold,
    kPollUs,
    kStats,
    kStatsFile,
    kLogLevel,
    kMrTable,
    kKernels,
    kRxPipe,
    kBlocks,
    kTrace,
    kTraceWindow,
    kTraceStart,
    kMrTableVariant,
    kHpus,
    kHpuMem,
    kHpuWidth,
    kHpuMaxCycles,
    kIrn,
    kIrnBdpCap,
    kKernelPlugin,
    kHandler,
    kBuiltinHandlers,
    kHpu,
    kHelp
  };
  static const option kOptions[] = {
      {"listen", required_argument, nullptr, kListen},
      {"cm-port", required_argument, nullptr, kCmPort},
      {"pcap", required_argument, nullptr, kPcap},
      {"qps", required_argument, nullptr, kQps},
      {"mem", required_argument, nullptr, kMem},
      {"clock-mhz", required_argument, nullptr, kClock},
      {"width", required_argument, nullptr, kWidth},
      {"mtu-max", required_argument, nullptr, kMtu},
      {"kernel-timeout-cycles", required_argument, nullptr, kKernelTimeout},
      {"idle-timeout-ms", required_argument, nullptr, kIdleTimeout},
      {"seed", required_argument, nullptr, kSeed},
      {"fault-rx", required_argument, nullptr, kFaultRx},
      {"fault-tx", required_argument, nullptr, kFaultTx},
      {"fault-key", required_argument, nullptr, kFaultKey},
      {"link-gbps", required_argument, nullptr, kLinkGbps},
      {"link-latency-ns", required_argument, nullptr, kLinkLatency},
      {"link-hold-us", required_argument, nullptr, kLinkHold},
      {"poll-us", required_argument, nullptr, kPollUs},
      {"stats", no_argument, nullptr, kStats},
      {"stats-file", required_argument, nullptr, kStatsFile},
      {"log-level", required_argument, nullptr, kLogLevel},
      {"mr-table", required_argument, nullptr, kMrTable},
      {"kernels", required_argument, nullptr, kKernels},
      {"kernel", required_argument, nullptr, kKernelPlugin},
      {"handler", required_argument, nullptr, kHandler},
      {"hpu", required_argument, nullptr, kHpu},
      {"rx-pipe", required_argument, nullptr, kRxPipe},
      {"blocks", required_argument, nullptr, kBlocks},
      {"trace", required_argument, nullptr, kTrace},
      {"trace-window", required_argument, nullptr, kTraceWindow},
      {"trace-start", required_argument, nullptr, kTraceStart},
      // Hidden: the deliberately broken MR table RTL (rtl/mr_table/README.md "Broken variant"),
      // only to show lockstep catching a bug (testbench/sim/test_rtl_lockstep.cpp).
      {"mr-table-variant", required_argument, nullptr, kMrTableVariant},
      {"irn", required_argument, nullptr, kIrn},
      {"irn-bdp-cap", required_argument, nullptr, kIrnBdpCap},
      {"help", no_argument, nullptr, kHelp},
      {"hpus", required_argument, nullptr, kHpus},
      {"hpu-mem", required_argument, nullptr, kHpuMem},
      {"hpu-width", required_argument, nullptr, kHpuWidth},
      {"hpu-max-cycles", required_argument, nullptr, kHpuMaxCycles},
      {"builtin-handlers", required_argument, nullptr, kBuiltinHandlers},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;
  for (;;) {
    const int c = getopt_long(argc, argv, "", kOptions, nullptr);
    if (c == -1) break;
    switch (c) {
      case kListen: {
        in_addr a{};
        if (inet_pton(AF_INET, optarg, &a) != 1)
          usage_error(std::string("bad --listen: ") + optarg);
        opts.listen_ip = ntohl(a.s_addr);
        if (opts.listen_ip == 0) usage_error("--listen needs a specific address, not 0.0.0.0");
        break;
      }
      case kCmPort:
        cfg.cm_port = static_cast<std::uint16_t>(parse_u64(optarg, "--cm-port", 65535));
        break;
      case kPcap:
        opts.pcap_path = optarg;
        break;
      case kQps:
        cfg.qps = static_cast<std::uint32_t>(parse_u64(optarg, "--qps", 256));
        if (cfg.qps == 0) usage_error("--qps must be 1..256");
        break;
      case kMem:
        cfg.mem_size = parse_size(optarg);
        break;
      case kClock: {
        char* end = nullptr;
        cfg.clock_mhz = std::strtod(optarg, &end);
        if (end == optarg || *end != '\0' || !(cfg.clock_mhz >= 1.0 && cfg.clock_mhz <= 10000.0)) {
          usage_error(std::string("bad --clock-mhz: ") + optarg);
        }
        break;
      }
      case kWidth:
        cfg.width = static_cast<std::uint32_t>(parse_u64(optarg, "--width", 4096));
        if (cfg.width == 0) usage_error("--width must be > 0");
        break;
      case kMtu: {
        const auto v = parse_u64(optarg, "--mtu-max", 4096);
        if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096) {
          usage_error("--mtu-max must be 256, 512, 1024, 2048 or 4096");
        }
        cfg.mtu_max = static_cast<std::uint32_t>(v);
        break;
      }
      case kKernelTimeout:
        cfg.kernel_timeout_cycles = parse_u64(optarg, "--kernel-timeout-cycles", UINT64_MAX);
        break;
      case kHpus:
        cfg.hpus = static_cast<std::uint32_t>(parse_u64(optarg, "--hpus", 256));
        if (cfg.hpus == 0) usage_error("--hpus must be 1..256");
        break;
      case kBuiltinHandlers: {
        const std::string v = optarg;
        if (v != "c" && v != "cpp") usage_error("--builtin-handlers must be c or cpp, not " + v);
        if (v == "c" && naa::sim::builtin_handler_images().empty()) {
          usage_error(
              "--builtin-handlers=c: this naa-sim was built without clang and lld for "
              "riscv32, so without the C images");
        }
        cfg.builtin_handlers_in_c = v == "c";
        break;
      }
      case kHpuMem:
        cfg.hpu_mem = parse_size(optarg);
        break;
      case kHpuWidth:
        cfg.hpu_width = static_cast<std::uint32_t>(parse_u64(optarg, "--hpu-width", 4096));
        if (cfg.hpu_width == 0) usage_error("--hpu-width must be > 0");
        break;
      case kHpuMaxCycles:
        cfg.hpu_max_cycles = parse_u64(optarg, "--hpu-max-cycles", UINT64_MAX);
        break;
      case kIdleTimeout:
        // At most a year: the value becomes an sc_time in milliseconds.
        cfg.idle_timeout_ms = parse_u64(optarg, "--idle-timeout-ms", 365ULL * 24 * 3600 * 1000);
        break;
      case kSeed:
        cfg.seed = parse_u64(optarg, "--seed", UINT64_MAX);
        break;
      case kFaultRx:
      case kFaultTx: {
        std::string why;
        if (!naa::sim::parse_fault_spec(optarg, c == kFaultRx ? cfg.fault_rx : cfg.fault_tx, why)) {
          usage_error(std::string(c == kFaultRx ? "bad --fault-rx: " : "bad --fault-tx: ") + why);
        }
        break;
      }
      case kIrn: {
        const std::string v = optarg;
        if (v != "on" && v != "off") usage_error("--irn must be on or off");
        cfg.irn = v == "on";
        break;
      }
      case kIrnBdpCap:
        cfg.irn_bdp_cap = static_cast<std::uint16_t>(parse_u64(optarg, "--irn-bdp-cap", 4096));
        if (cfg.irn_bdp_cap == 0) usage_error("--irn-bdp-cap must be 1..4096");
        break;
      case kFaultKey: {
        naa::impair::FaultKey k{};
        if (!naa::impair::parse_fault_key(optarg, k)) {
          usage_error(std::string("--fault-key must be sequence or packet, not ") + optarg);
        }
        o.fault_key = k;
        break;
      }
      case kLinkGbps: {
        char* end = nullptr;
        cfg.link_gbps = std::strtod(optarg, &end);
        if (end == optarg || *end != '\0' || !(cfg.link_gbps >= 0.0 && cfg.link_gbps <= 10000.0)) {
          usage_error(std::string("bad --link-gbps (0..10000): ") + optarg);
        }
        break;
      }
      case kLinkLatency:
        cfg.link_latency_ns = parse_u64(optarg, "--link-latency-ns", 1'000'000'000ULL);
        break;
      case kLinkHold:
        cfg.link_hold_us = parse_u64(optarg, "--link-hold-us", 60'000'000ULL);
        break;
      case kPollUs:
        opts.poll_us = static_cast<std::uint32_t>(parse_u64(optarg, "--poll-us", 1'000'000ULL));
        break;
      case kStats:
        opts.stats_on_exit = true;
        break;
      case kStatsFile:
        opts.stats_file = optarg;
        break;
      case kLogLevel: {
        const std::string l = optarg;
        if (l == "error")
          o.level = naa::sim::LogLevel::error;
        else if (l == "warn")
          o.level = naa::sim::LogLevel::warn;
        else if (l == "info")
          o.level = naa::sim::LogLevel::info;
        else if (l == "debug")
          o.level = naa::sim::LogLevel::debug;
        else
          usage_error("bad --log-level: " + l);
        break;
      }
      case kMrTable:
      case kKernels:
      case kBlocks:
      case kHpu:
      case kRxPipe: {
        std::string why;
        const char* name = c == kMrTable   ? "mr-table"
                           : c == kKernels ? "kernels"
                           : c == kBlocks  ? "blocks"
                           : c == kHpu     ? "hpu"
                                           : "rx-pipe";
        if (!o.blocks.set(name, optarg, &why)) usage_error(why);
        break;
      }
      case kKernelPlugin:
        o.kernel_plugins.emplace_back(optarg);
        break;
      case kHandler:
        add_handler_image(cfg, optarg);
        break;
      case kTraceWindow:
        o.trace_window = parse_u64(optarg, "--trace-window", UINT64_MAX);
        if (o.trace_window == 0) usage_error("--trace-window must be > 0");
        break;
      case kTraceStart:
        o.trace_start_ps = parse_time_ps(optarg);
        break;
      case kTrace:
        o.trace_path = optarg;
        if (o.trace_path.empty()) usage_error("--trace needs a file name");
        break;
      case kMrTableVariant:
        o.mr_table_variant = optarg;
        if (o.mr_table_variant != "reference" && o.mr_table_variant != "broken") {
          usage_error("--mr-table-variant must be reference or broken");
        }
        break;
      case kHelp:
        o.help = true;
        return o;
      default:
        usage_error(std::string("unknown or incomplete option: ") +
                    (optind > 0 && optind <= argc ? argv[optind - 1] : "?"));
    }
  }
  if (optind < argc) usage_error(std::string("unexpected argument: ") + argv[optind]);
  if (o.fault_key) cfg.fault_rx.key = cfg.fault_tx.key = *o.fault_key;  // whatever the order
  o.blocks.resolve();
  if ((o.trace_window != 0 || o.trace_start_ps != 0) && o.trace_path.empty()) {
    usage_error("--trace-window and --trace-start need --trace FILE.fst");
  }
  return o;
}

}  // namespace naa::sim::tools
