// naa-sim: the simulated NAA (docs/sim/naa-sim.md). Parses the command line, then hands over to
// the Runner, which elaborates the SystemC model and serves until SIGINT/SIGTERM.
#include <arpa/inet.h>
#include <getopt.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <systemc>

#include "naa/sim/runner.hpp"

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
  --seed N           seed for rkeys, comm IDs and starting PSNs (default 1)
  --stats            print statistics on exit (they are always printed on SIGUSR1)
  --stats-file FILE  write statistics to FILE (replaced atomically) instead of stdout; implies
                     --stats
  --log-level L      error, warn, info or debug (default warn); logs go to stderr
  --help             print this help and exit

Output: one line "naa-sim: listening on IP:4791 (cm port N)" on stdout once it serves; then
statistics as key=value lines between "naa-sim.stats_seq=N" and "naa-sim.end=1".
Signals: SIGINT/SIGTERM stop cleanly (pcap flushed), SIGUSR1 prints statistics.
)USAGE";

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "naa-sim: " << msg << "\n\n" << kUsage;
  std::exit(2);
}

std::uint64_t parse_u64(const char* s, const char* what, std::uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 0);
  if (errno != 0 || end == s || *end != '\0' || *s == '-' || v > max) {
    usage_error(std::string("bad value for ") + what + ": " + s);
  }
  return v;
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

}  // namespace

int sc_main(int argc, char* argv[]) {
  naa::sim::SimConfig cfg;
  naa::sim::RunOptions opts;
  naa::sim::LogLevel level = naa::sim::LogLevel::warn;
  enum : int {
    kListen = 256,
    kCmPort,
    kPcap,
    kQps,
    kMem,
    kClock,
    kWidth,
    kMtu,
    kSeed,
    kStats,
    kStatsFile,
    kLogLevel,
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
      {"seed", required_argument, nullptr, kSeed},
      {"stats", no_argument, nullptr, kStats},
      {"stats-file", required_argument, nullptr, kStatsFile},
      {"log-level", required_argument, nullptr, kLogLevel},
      {"help", no_argument, nullptr, kHelp},
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
      case kSeed:
        cfg.seed = parse_u64(optarg, "--seed", UINT64_MAX);
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
          level = naa::sim::LogLevel::error;
        else if (l == "warn")
          level = naa::sim::LogLevel::warn;
        else if (l == "info")
          level = naa::sim::LogLevel::info;
        else if (l == "debug")
          level = naa::sim::LogLevel::debug;
        else
          usage_error("bad --log-level: " + l);
        break;
      }
      case kHelp:
        std::cout << kUsage;
        return 0;
      default:
        usage_error(std::string("unknown or incomplete option: ") +
                    (optind > 0 && optind <= argc ? argv[optind - 1] : "?"));
    }
  }
  if (optind < argc) usage_error(std::string("unexpected argument: ") + argv[optind]);
  // SystemC's own reports would otherwise end the process on a warning-turned-error; keep them
  // as messages (nothing a peer sends reaches SystemC).
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY);
  naa::sim::Runner runner(cfg, opts, level);
  return runner.run();
}

// Our own main (libsystemc's would print its banner on stdout, which scripts parse, before
// sc_main runs): SystemC reads SYSTEMC_DISABLE_COPYRIGHT_MESSAGE from the environment.
int main(int argc, char* argv[]) {
  ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout must not end the NAA
  return sc_core::sc_elab_and_sim(argc, argv);
}
