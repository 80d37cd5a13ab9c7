// naa-cosim's command line (docs/adr/0004): the usage text and parse_options().
#include "naa_cosim_options.hpp"

#include <getopt.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "naa/impair/fault_spec.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/sim/hpu_handler.hpp"
#include "naa/tools/size_arg.hpp"

namespace naa::cosim::tools {

namespace {

constexpr const char* kUsage = R"USAGE(usage: naa-cosim [options] --fn FN REGION...

Runs one session of the host library (UdpRoce endpoint) against the NAA model in this process,
both on one simulated clock (docs/adr/0004): connect + MRSP, --repeat calls, disconnect. Prints
the simulated time of each phase; nothing depends on wall time.

With --topology FILE, runs naa-fabric instead (many hosts and NAAs behind switches; every
argument goes to it: naa-fabric --help, docs/fabric.md).

Options:
  -f, --fn FN             function code 1..127, or add1, add2, nop, vadd_i32, sum_u64, crc32
  -n, --repeat N          calls (default 1)
      --mtu N             path MTU 256..4096 (default 4096)
      --seed N            seed of both sides' secrets, PSNs and fault decisions (default 1)
      --pcap FILE         NetPort's capture, simulated timestamps
      --fault-rx SPEC     faults on datagrams the NAA receives (docs/reliability.md)
      --fault-tx SPEC     faults on datagrams the NAA sends
      --fault-key K       sequence or packet (docs/adr/0003)
      --link-gbps F       link rate each way (default 100)
      --link-latency-ns N one-way link latency (default 0)
      --host-sw-ns F      host software per datagram sent (default 0; docs/sim/calibration.md)
      --host-pcie-ns F    host PCIe latency one way (default 0)
      --host-nic-ns F     host NIC latency each way (default 0)
      --host-rx-ns F      host software latency of a received datagram (default 0)
      --clock-mhz F       NAA clock (default 250)
      --width N           NAA datapath bytes per cycle (default 64)
      --mem-width N       NAA memory bytes per cycle (default 64)
      --naaice-sweep CSV  instead of one session: NAAICE's sweep (fn --fn, default 1, one
                          in/out region per size up to --max) into CSV, NAAICE's form, with a
                          gnuplot script beside it; --reference FILE: deviation per size range
      --max SIZE          largest size of the sweep (default 64M)
      --loss-sweep DIR    instead of one session: go-back-N vs IRN at 0, 1, 5, 10 % loss on
                          both directions (keyed on QPN/PSN/attempt), a WRITE stream plus add1
                          calls each; DIR/loss.csv and DIR/loss.svg (docs/performance.md)
      --stream SIZE       the loss sweep's stream (default 64M)
      --calls N           the loss sweep's add1 calls (default 50) ...
      --call-size SIZE    ... on one inout region of this size (default 1M)
      --rto-high E        go-back-N's timeout and IRN's RTO_high: 4.096 us x 2^E (default 7;
                          one session: the host's local ACK timeout, default 15)
      --rto-low E         IRN's RTO_low, with <= 3 packets in flight (default 5; one session:
                          default RTO_high - 2)
      --losses LIST       the loss sweep's loss rates in percent (default 0,1,5,10)
      --reference FILE    NAAICE-form CSV to compare with (the FPGA's published means)
      --calibrated        the NAAICE-calibrated parameters (docs/sim/calibration.md); options
                          after it override them
      --stream-arg N      the streaming handlers' 64-bit argument (unpack_strided: stride << 32 |
                          block)
      --handler IMG.elf   a sPIN handler image in C (naa/spin.h; docs/spin.md) for its function
                          code, run on the HPU cores (--hpu); repeatable
      --irn               the session's host offers IRN (selective repeat, docs/protocol.md
                          8), streamed regions included; default go-back-N, as the published
                          simulated figures
      --stats             print the NAA model's statistics at the end
      --save-regions DIR  write each region's bytes before the first call and after the last
                          to DIR/region<i>.before and DIR/region<i>.after (i: parameter index),
                          for an outside check of the results
  -q, --quiet             only the phase lines
  -h, --help              this help
The blocks that also exist as RTL, as in naa-sim (docs/sim/rtl.md; lockstep: the first
divergence prints a report, the run goes on with the models' outputs, exit status 4):
@BLOCK_OPTIONS@
Regions (parameters 0, 1, ... in order): --in SRC, --inout SRC, --out SIZE, and the streamed
ones --stream-in SRC, --stream-inout SRC (the NAA's handlers for --fn process them packet by
packet; docs/protocol.md "Streaming regions"); SRC is
gen:SIZE[:SEED] (pseudo-random bytes) or seq:SIZE (0,1,2,...). SIZE takes K, M, G.
Exit status: 0 done, 1 a call failed, 2 usage error, 3 session failure, 4 lockstep divergence.
)USAGE";

}  // namespace

std::string usage() {
  std::string u = kUsage;
  const std::string mark = "@BLOCK_OPTIONS@\n";
  u.replace(u.find(mark), mark.size(), naa::sim::BlockModes::help(kHasRtl));
  return u;
}

void usage_error(const std::string& msg) {
  std::cerr << "naa-cosim: " << msg << "\n\n" << usage();
  std::exit(2);
}

namespace {

std::uint64_t parse_u64(const char* s, const char* what, std::uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 0);
  if (end == s || *end != '\0' || errno != 0 || v > max) {
    usage_error(std::string("bad ") + what + ": " + s);
  }
  return v;
}

double parse_double(const char* s, const char* what, double max) {
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || !(v >= 0 && v <= max)) {
    usage_error(std::string("bad ") + what + ": " + s);
  }
  return v;
}

std::uint64_t source_size(const std::string& src) {
  const std::size_t colon = src.find(':');
  if (colon == std::string::npos || (src.rfind("gen:", 0) != 0 && src.rfind("seq:", 0) != 0)) {
    usage_error("a region source is gen:SIZE[:SEED] or seq:SIZE, not '" + src + "'");
  }
  std::string size = src.substr(colon + 1);
  if (const std::size_t c2 = size.find(':'); c2 != std::string::npos) size.resize(c2);
  const auto v = naa::tools::parse_size_arg(size);
  if (!v || *v == 0) usage_error("bad region size in '" + src + "'");
  return *v;
}

int parse_fn(const std::string& s) {
  for (int f = 1; f <= 6; ++f) {
    if (s == naa::protocol::to_string(static_cast<naa::protocol::BuiltinFunction>(f))) return f;
  }
  return static_cast<int>(parse_u64(s.c_str(), "--fn", 127));
}

}  // namespace

Options parse_options(int argc, char* argv[]) {
  Options o;
  std::optional<naa::impair::FaultKey> key;
  enum : int {
    kMtu = 256,
    kSeed,
    kPcap,
    kFaultRx,
    kFaultTx,
    kFaultKey,
    kLinkGbps,
    kLinkLatency,
    kSw,
    kPcie,
    kNic,
    kStats,
    kSaveRegions,
    kIrn,
    kIn,
    kOut,
    kInout,
    kStreamIn,
    kStreamInout,
    kStreamArg,
    kHandler,
    kRx,
    kClock,
    kWidth,
    kMemWidth,
    kCalibrated,
    kSweep,
    kMax,
    kReference,
    kLossSweep,
    kStream,
    kCalls,
    kCallSize,
    kRtoHigh,
    kRtoLow,
    kLosses,
    kMrTable,
    kKernels,
    kRxPipe,
    kHpu,
    kBlocks
  };
  static const option kOptions[] = {{"fn", required_argument, nullptr, 'f'},
                                    {"repeat", required_argument, nullptr, 'n'},
                                    {"mtu", required_argument, nullptr, kMtu},
                                    {"seed", required_argument, nullptr, kSeed},
                                    {"pcap", required_argument, nullptr, kPcap},
                                    {"fault-rx", required_argument, nullptr, kFaultRx},
                                    {"fault-tx", required_argument, nullptr, kFaultTx},
                                    {"fault-key", required_argument, nullptr, kFaultKey},
                                    {"link-gbps", required_argument, nullptr, kLinkGbps},
                                    {"link-latency-ns", required_argument, nullptr, kLinkLatency},
                                    {"host-sw-ns", required_argument, nullptr, kSw},
                                    {"host-pcie-ns", required_argument, nullptr, kPcie},
                                    {"host-nic-ns", required_argument, nullptr, kNic},
                                    {"stats", no_argument, nullptr, kStats},
                                    {"save-regions", required_argument, nullptr, kSaveRegions},
                                    {"irn", no_argument, nullptr, kIrn},
                                    {"host-rx-ns", required_argument, nullptr, kRx},
                                    {"clock-mhz", required_argument, nullptr, kClock},
                                    {"width", required_argument, nullptr, kWidth},
                                    {"mem-width", required_argument, nullptr, kMemWidth},
                                    {"calibrated", no_argument, nullptr, kCalibrated},
                                    {"naaice-sweep", required_argument, nullptr, kSweep},
                                    {"max", required_argument, nullptr, kMax},
                                    {"reference", required_argument, nullptr, kReference},
                                    {"loss-sweep", required_argument, nullptr, kLossSweep},
                                    {"stream", required_argument, nullptr, kStream},
                                    {"calls", required_argument, nullptr, kCalls},
                                    {"call-size", required_argument, nullptr, kCallSize},
                                    {"rto-high", required_argument, nullptr, kRtoHigh},
                                    {"rto-low", required_argument, nullptr, kRtoLow},
                                    {"losses", required_argument, nullptr, kLosses},
                                    {"mr-table", required_argument, nullptr, kMrTable},
                                    {"kernels", required_argument, nullptr, kKernels},
                                    {"rx-pipe", required_argument, nullptr, kRxPipe},
                                    {"hpu", required_argument, nullptr, kHpu},
                                    {"blocks", required_argument, nullptr, kBlocks},
                                    {"in", required_argument, nullptr, kIn},
                                    {"out", required_argument, nullptr, kOut},
                                    {"inout", required_argument, nullptr, kInout},
                                    {"stream-in", required_argument, nullptr, kStreamIn},
                                    {"stream-inout", required_argument, nullptr, kStreamInout},
                                    {"stream-arg", required_argument, nullptr, kStreamArg},
                                    {"handler", required_argument, nullptr, kHandler},
                                    {"quiet", no_argument, nullptr, 'q'},
                                    {"help", no_argument, nullptr, 'h'},
                                    {nullptr, 0, nullptr, 0}};
  opterr = 0;
  for (;;) {
    int option_index = 0;
    const int c = getopt_long(argc, argv, "f:n:qh", kOptions, &option_index);
    if (c == -1) break;
    std::string why;
    switch (c) {
      case 'f':
        o.fn = parse_fn(optarg);
        break;
      case 'n':
        o.repeat = static_cast<int>(parse_u64(optarg, "--repeat", 1000000));
        break;
      case kMtu: {
        const auto v = parse_u64(optarg, "--mtu", 4096);
        if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096)
          usage_error("--mtu must be 256, 512, 1024, 2048 or 4096");
        o.mtu = static_cast<std::uint32_t>(v);
        break;
      }
      case kSeed:
        o.seed = parse_u64(optarg, "--seed", UINT64_MAX);
        break;
      case kPcap:
        o.cfg.pcap_path = optarg;
        break;
      case kFaultRx:
      case kFaultTx:
        if (!naa::impair::parse_fault_spec(
                optarg, c == kFaultRx ? o.cfg.sim.fault_rx : o.cfg.sim.fault_tx, &why))
          usage_error(std::string(c == kFaultRx ? "bad --fault-rx: " : "bad --fault-tx: ") + why);
        break;
      case kFaultKey: {
        naa::impair::FaultKey k{};
        if (!naa::impair::parse_fault_key(optarg, k))
          usage_error(std::string("--fault-key must be sequence or packet, not ") + optarg);
        key = k;
        break;
      }
      case kLinkGbps:
        o.cfg.sim.link_gbps = parse_double(optarg, "--link-gbps", 10000);
        break;
      case kLinkLatency:
        o.cfg.sim.link_latency_ns = parse_u64(optarg, "--link-latency-ns", 1000000000);
        break;
      case kSw:
        o.cfg.host.sw_per_packet_ns = parse_double(optarg, "--host-sw-ns", 1e9);
        break;
      case kPcie:
        o.cfg.host.pcie_ns = parse_double(optarg, "--host-pcie-ns", 1e9);
        break;
      case kNic:
        o.cfg.host.nic_ns = parse_double(optarg, "--host-nic-ns", 1e9);
        break;
      case kIrn:
        o.irn = true;
        break;
      case kStats:
        o.stats = true;
        break;
      case kSaveRegions:
        o.save_regions = optarg;
        break;
      case kRx:
        o.cfg.host.sw_rx_ns = parse_double(optarg, "--host-rx-ns", 1e9);
        break;
      case kClock:
        o.cfg.sim.clock_mhz = parse_double(optarg, "--clock-mhz", 10000);
        break;
      case kWidth:
        o.cfg.sim.width = static_cast<std::uint32_t>(parse_u64(optarg, "--width", 4096));
        if (o.cfg.sim.width == 0) usage_error("--width must be > 0");
        break;
      case kMemWidth:
        o.cfg.sim.mem_width = static_cast<std::uint32_t>(parse_u64(optarg, "--mem-width", 65536));
        if (o.cfg.sim.mem_width == 0) usage_error("--mem-width must be > 0");
        break;
      case kCalibrated:
        naa::cosim::apply_naaice_calibration(o.cfg);
        break;
      case kSweep:
        o.sweep.csv_path = optarg;
        break;
      case kReference:
        o.sweep.reference_path = optarg;
        break;
      case kMax: {
        const auto v = naa::tools::parse_size_arg(optarg);
        if (!v || *v == 0 || *v > (1ULL << 30)) usage_error("--max must be 1 .. 1G");
        o.sweep.max_size = *v;
        break;
      }
      case kLossSweep:
        o.loss_sweep = true;
        o.loss.out_dir = optarg;
        break;
      case kStream:
      case kCallSize: {
        const auto v = naa::tools::parse_size_arg(optarg);
        if (!v || *v == 0 || *v > (1ULL << 30)) usage_error("--stream / --call-size: 1 .. 1G");
        (c == kStream ? o.loss.stream_bytes : o.loss.call_bytes) = *v;
        break;
      }
      case kCalls:
        o.loss.calls = static_cast<int>(parse_u64(optarg, "--calls", 1000000));
        break;
      case kRtoHigh:
      case kRtoLow: {
        const auto v = parse_u64(optarg, c == kRtoHigh ? "--rto-high" : "--rto-low", 31);
        if (v == 0) usage_error("an RTO exponent is 1..31");
        (c == kRtoHigh ? o.loss.rto_high : o.loss.rto_low) = static_cast<std::uint8_t>(v);
        o.rto_given = true;
        break;
      }
      case kLosses: {
        o.loss.loss_pct.clear();
        std::istringstream in(optarg);
        std::string item;
        while (std::getline(in, item, ','))
          o.loss.loss_pct.push_back(parse_double(item.c_str(), "--losses", 100));
        if (o.loss.loss_pct.empty()) usage_error("--losses needs at least one rate");
        break;
      }
      case kIn:
      case kInout:
        o.regions.push_back({c == kIn ? 1U : 3U, source_size(optarg), optarg});
        break;
      case kStreamIn:
      case kStreamInout:
        o.regions.push_back({c == kStreamIn ? RegionArg::stream_in : RegionArg::stream_inout,
                             source_size(optarg), optarg});
        break;
      case kStreamArg:
        o.stream_arg = parse_u64(optarg, "--stream-arg", UINT64_MAX);
        break;
      case kHandler:
        if (!naa::sim::add_handler_image_file(o.cfg.sim, optarg, why)) {
          usage_error(std::string("--handler ") + optarg + ": " + why);
        }
        break;
      case kOut: {
        const auto v = naa::tools::parse_size_arg(optarg);
        if (!v || *v == 0) usage_error(std::string("bad --out size: ") + optarg);
        o.regions.push_back({2U, *v, ""});
        break;
      }
      case kMrTable:
      case kKernels:
      case kRxPipe:
      case kHpu:
      case kBlocks:
        if (!o.blocks.set(kOptions[option_index].name, optarg, &why)) usage_error(why);
        break;
      case 'q':
        o.quiet = true;
        break;
      case 'h':
        std::cout << usage();
        std::exit(0);
      default:
        usage_error(std::string("unknown or incomplete option: ") +
                    (optind > 0 && optind <= argc ? argv[optind - 1] : "?"));
    }
  }
  if (optind < argc) usage_error(std::string("unexpected argument: ") + argv[optind]);
  o.blocks.resolve();
  if (!kHasRtl && o.blocks.any_rtl()) usage_error(naa::sim::BlockModes::without_rtl("naa-cosim"));
  for (int i = 0; i < argc; ++i)
    o.command_line += (i ? " " : "") + std::string(argv[i]);
  if (!o.sweep.csv_path.empty() && o.fn == 0) o.fn = 1;
  if (o.loss_sweep && o.fn == 0) o.fn = 1;  // the loss sweep's calls are add1
  if (o.loss.rto_low > o.loss.rto_high) usage_error("--rto-low must not exceed --rto-high");
  if (o.fn == 0) usage_error("--fn is required");
  if (o.irn && (o.loss_sweep || !o.sweep.csv_path.empty()))
    usage_error(
        "--irn is for one session (the loss sweep runs both transports, the NAAICE sweep "
        "go-back-N)");
  if (o.regions.empty() && o.sweep.csv_path.empty() && !o.loss_sweep)
    usage_error("at least one region (--in, --out, --inout, --stream-in, --stream-inout)");
  if (key) o.cfg.sim.fault_rx.key = o.cfg.sim.fault_tx.key = *key;
  o.cfg.sim.seed = o.seed;
  o.cfg.sim.idle_timeout_ms = 0;  // the session ends; nothing to keep alive
  return o;
}

}  // namespace naa::cosim::tools
