// naa-broadcast: the binomial-tree broadcast across the NAAs of a fabric with sPIN handlers that
// put to their children (seed 004 Fig. 5a; docs/spin.md "Puts to other nodes"), packet by packet
// (broadcast.c) or store-and-forward (broadcast_store.c, the paper's baseline), or the baseline in
// which the host sends the message to every NAA itself. One host and N NAAs on a star; prints one
// CSV row; every NAA's memory is compared with the message (exit 1 if one differs). Deterministic:
// simulated time only. One run per process (SystemC elaborates once).
#include <getopt.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

#include <systemc>

#include "naa/fabric/broadcast.hpp"
#include "naa/tools/size_arg.hpp"

namespace {

constexpr const char* kUsage = R"USAGE(usage: naa-broadcast --handler FILE [options]
  --handler FILE     the handler image every NAA runs (examples/spin/broadcast: broadcast.elf;
                     broadcast_store.elf for --mode store)
  --fn N             its function code (default 33)
  --naas N           NAAs on the star, 2..8 (default 8)
  --bytes B          the message (K/M suffixes; default 64K)
  --mode M           tree (the handlers put each packet to their children as it arrives) |
                     store (the same tree, store-and-forward: --handler forwards the message once
                     it holds all of it) | host (the host sends to every NAA itself; no peers)
                     (default tree). The mode names the row and binds the tree or not; what the
                     handlers do is --handler's.
  --gbps G           every link's rate (default 100)
  --latency-ns NS    every link's one-way latency (default 1000)
  --hpus N           HPUs per NAA (default 8)
  --hpu-width B      bytes per cycle of an HPU's copies (default 8)
  --seed N           the message bytes and the fabric's choices (default 1)
  --stats            every NAA's parent, when it held the message and its statistics after the row
  --header           print the CSV header first
output: mode,naas,bytes,time_ns,verified,return_code
  time_ns: from the host's first byte until the last NAA's streaming call ended (it holds the
  whole message); verified: every NAA's STREAM region equals the message.
)USAGE";

struct Options {
  std::string handler;
  std::string mode = "tree";
  naa::fabric::BroadcastConfig cfg;
  bool stats = false;
  bool header = false;
};

// nullopt after printing why (exit 2).
std::optional<Options> parse(int argc, char* argv[]) {
  Options o;
  o.cfg.naas = 8;
  enum {
    kHandler = 1000,
    kFn,
    kNaas,
    kBytes,
    kMode,
    kGbps,
    kLatency,
    kHpus,
    kHpuWidth,
    kSeed,
    kStats,
    kHdr
  };
  const option longs[] = {{"handler", required_argument, nullptr, kHandler},
                          {"fn", required_argument, nullptr, kFn},
                          {"naas", required_argument, nullptr, kNaas},
                          {"bytes", required_argument, nullptr, kBytes},
                          {"mode", required_argument, nullptr, kMode},
                          {"gbps", required_argument, nullptr, kGbps},
                          {"latency-ns", required_argument, nullptr, kLatency},
                          {"hpus", required_argument, nullptr, kHpus},
                          {"hpu-width", required_argument, nullptr, kHpuWidth},
                          {"seed", required_argument, nullptr, kSeed},
                          {"stats", no_argument, nullptr, kStats},
                          {"header", no_argument, nullptr, kHdr},
                          {"help", no_argument, nullptr, 'h'},
                          {nullptr, 0, nullptr, 0}};
  auto bad = [](const std::string& why) {
    std::cerr << "naa-broadcast: " << why << "\n" << kUsage;
    return std::nullopt;
  };
  for (int c; (c = getopt_long(argc, argv, "h", longs, nullptr)) != -1;) {
    const std::string arg = optarg != nullptr ? optarg : "";
    const auto size = naa::tools::parse_size_arg(arg);
    switch (c) {
      case kHandler:
        o.handler = arg;
        break;
      case kFn:
        if (!size || *size < 1 || *size > 127) return bad("--fn: 1..127");
        o.cfg.fn = static_cast<std::uint8_t>(*size);
        break;
      case kNaas:
        if (!size || *size < 2 || *size > 8) return bad("--naas: 2..8");
        o.cfg.naas = static_cast<int>(*size);
        break;
      case kBytes:
        if (!size || *size == 0 || *size > (1U << 30)) return bad("--bytes: 1 byte .. 1G");
        o.cfg.bytes = *size;
        break;
      case kMode:
        if (arg != "tree" && arg != "store" && arg != "host")
          return bad("--mode: tree, store or host");
        o.mode = arg;
        o.cfg.tree = arg != "host";
        break;
      case kGbps:
      case kLatency: {
        char* end = nullptr;
        const double v = std::strtod(arg.c_str(), &end);
        if (end == arg.c_str() || *end != '\0' || !(v > 0)) return bad("--gbps/--latency-ns: > 0");
        (c == kGbps ? o.cfg.gbps : o.cfg.latency_ns) = v;
        break;
      }
      case kHpus:
        if (!size || *size < 1 || *size > 64) return bad("--hpus: 1..64");
        o.cfg.naa.hpus = static_cast<std::uint32_t>(*size);
        break;
      case kHpuWidth:
        if (!size || *size < 1 || *size > 512) return bad("--hpu-width: 1..512");
        o.cfg.naa.hpu_width = static_cast<std::uint32_t>(*size);
        break;
      case kSeed:
        if (!size) return bad("--seed: a number");
        o.cfg.seed = *size;
        break;
      case kStats:
        o.stats = true;
        break;
      case kHdr:
        o.header = true;
        break;
      case 'h':
        std::cout << kUsage;
        std::exit(0);
      default:
        return bad("unknown option");
    }
  }
  if (optind != argc) return bad(std::string("unexpected argument ") + argv[optind]);
  if (o.handler.empty()) return bad("--handler FILE is required");
  std::ifstream f(o.handler, std::ios::binary);
  if (!f) return bad("--handler: cannot read " + o.handler);
  o.cfg.image.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return o;
}

int run(const Options& o) {
  const naa::fabric::BroadcastResult r = naa::fabric::run_broadcast(o.cfg);
  if (r.bind_error) {
    std::cerr << "naa-broadcast: bind_peer failed: " << r.bind_detail << "\n";
    return 1;
  }
  if (o.header) std::cout << "mode,naas,bytes,time_ns,verified,return_code\n";
  const double ns = static_cast<double>(r.last_holds_ps - r.start_ps) / 1000.0;
  std::printf("%s,%d,%llu,%.0f,%d,0x%x\n", o.mode.c_str(), o.cfg.naas,
              static_cast<unsigned long long>(o.cfg.bytes), r.last_holds_ps != 0 ? ns : -1.0,
              r.all_verified() ? 1 : 0, r.return_code);
  if (o.stats) {
    for (const auto& n : r.naas)
      std::cout << "# " << n.name << " parent " << n.parent << " holds_ns "
                << (static_cast<double>(n.end_ps) - static_cast<double>(r.start_ps)) / 1000.0
                << "\n"
                << n.stats;
  }
  std::fflush(stdout);
  return r.all_verified() && r.return_code == 0 && r.last_holds_ps != 0 ? 0 : 1;
}

}  // namespace

// sc_main: the NAA models are SystemC modules (libsystemc provides main()).
int sc_main(int argc, char* argv[]) {
  const auto o = parse(argc, argv);
  if (!o) return 2;
  try {
    return run(*o);
  } catch (const std::exception& e) {
    std::cerr << "naa-broadcast: " << e.what() << "\n";
    return 1;
  }
}
