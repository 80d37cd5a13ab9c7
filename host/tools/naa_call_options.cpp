// naa-call's command line (host/tools/naa_call.cpp runs it): usage, regions' sources, options.
#include "naa_call_options.hpp"

#include <getopt.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "naa/host/verbs.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/tools/naa_address.hpp"
#include "naa/tools/size_arg.hpp"

namespace naa_call {

namespace {

constexpr const char* kUsage = R"USAGE(usage: naa-call [options] --fn FN REGION...

Connects to an NAA (IB CM over RoCEv2 in UDP), declares the regions, runs MRSP, makes the call
(repeated with -n), prints the return code and timings, and disconnects.

Options:
  -a, --naa ADDR[:PORT]   NAA IPv4 address and CM port (default 127.0.0.2:12345)
  -l, --local ADDR        local IPv4 of the endpoint (default: first free 127.0.0.x, x >= 3)
  -f, --fn FN             function code 1..127, or add1, add2, nop, vadd_i32, sum_u64, crc32
  -u, --user N            24 user bits passed to the kernel (default 0)
  -n, --repeat N          calls on the same connection (default 1)
      --mtu N             path MTU: 256, 512, 1024, 2048, 4096 (default 4096)
      --naa-base ADDR     NAA address the regions are placed from (default 0); clients that
                          use one NAA at the same time need disjoint ranges (MRSP error 0x02)
      --timeout MS        connect/MRSP timeout and per-call timeout (default 5000 / 60000)
      --disconnect-timeout MS  how long to wait for the NAA's DREP (default 1000); without one
                          the disconnect completes anyway (the NAAICE reference NAA sends none)
      --pcap FILE         capture the session's traffic
      --manual            manual progress (no background thread)
      --transport KIND    udp (default: the user-space RoCEv2 endpoint) or verbs (rdma-core: a
                          RoCE NIC or Soft-RoCE; the device is the one owning --local, or the
                          one routing to the NAA; --pcap and --manual do not apply)
      --solicited-only    verbs: arm the CQ for solicited events only, as the NAAICE library
      --verify            check the results of the built-in kernels on the host
      --stream            the inputs stream: the NAA's handlers for --fn process them packet by
                          packet as they arrive (docs/protocol.md "Streaming regions")
      --stream-arg N      the handlers' 64-bit argument (unpack_strided: stride << 32 | block)
      --handler FILE      install this sPIN handler image (naa_add_handler's ELF) with the
                          connection as --fn's handlers (docs/protocol.md "Handler images");
                          implies --stream
      --handler-state SRC the handlers' initial state (FILE, seq:N or gen:N[:SEED]; at most
                          4096 bytes): each call's handler state starts as these bytes
      --fault-rx SPEC     udp: inject faults into received datagrams; SPEC is
                          loss=P,dup=P,reorder=P,reorder-delay=N,corrupt=P,key=K
                          (docs/reliability.md)
      --fault-tx SPEC     udp: the same for sent datagrams
      --fault-seed N      seed of the fault decisions (default 1)
      --irn on|off        udp: offer IRN (selective repeat, docs/protocol.md "IRN") in the CM
                          REQ (default on); an NAA that does not answer it gives go-back-N, as
                          off does
      --fault-key K       what both directions' decisions are drawn for: sequence (the datagram
                          order, default) or packet (QPN, PSN, attempt: the same losses for any
                          transport; docs/adr/0003)
  -q, --quiet             print only the summary line
  -h, --help              this help

Regions (in the order given; they become parameters 0, 1, ...):
  -i, --in SRC            input region
  -s, --single-send SRC   input written by the first call only
  -b, --inout SRC[@FILE]  input written back as output (saved to FILE after the last call)
  -o, --out SIZE[@FILE]   output region
  -x, --internal SIZE     NAA scratch region
SRC is a file name, or gen:SIZE[:SEED] (pseudo-random bytes), seq:SIZE (0,1,2,...) or
zero:SIZE. SIZE takes K, M, G suffixes (powers of 1024).

Exit status: 0 every call returned 0 (and --verify passed), 1 a call returned a non-zero code
or verification failed, 2 usage error, 3 connection, MRSP or transport failure.
Example: naa-call --fn vadd_i32 --in gen:4K:1 --in gen:4K:2 --out 4K@sum.bin --verify
)USAGE";

}  // namespace

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "naa-call: " << msg << "\n\n" << kUsage;
  std::exit(2);
}

// A region is one RDMA message, at most 2 GiB (PROTOCOL.md 7): refused here, before a buffer of
// that size is allocated (the session would refuse it too).
std::uint64_t parse_size(const std::string& s) {
  const auto v = naa::tools::parse_size_arg(s);
  if (!v) usage_error("bad size '" + s + "' (a number with an optional K, M or G suffix)");
  if (*v > (std::uint64_t{1} << 31)) {
    usage_error("size '" + s + "' exceeds 2 GiB, the largest RDMA message (PROTOCOL.md 7)");
  }
  return *v;
}

namespace {

std::vector<std::uint8_t> load_source(const std::string& src) {
  auto field = [&](std::size_t i) {
    std::size_t start = 0;
    for (std::size_t k = 0; k < i; ++k) {
      start = src.find(':', start);
      if (start == std::string::npos) return std::string();
      ++start;
    }
    const std::size_t end = src.find(':', start);
    return src.substr(start, end == std::string::npos ? std::string::npos : end - start);
  };
  const std::string kind = field(0);
  if (kind == "gen" || kind == "seq" || kind == "zero") {
    const std::uint64_t n = parse_size(field(1));
    std::vector<std::uint8_t> v(n);
    if (kind == "seq") {
      for (std::uint64_t i = 0; i < n; ++i)
        v[i] = static_cast<std::uint8_t>(i);
    } else if (kind == "gen") {
      const std::string seed = field(2);
      std::mt19937_64 rng(seed.empty() ? 1 : std::strtoull(seed.c_str(), nullptr, 0));
      for (auto& b : v)
        b = static_cast<std::uint8_t>(rng());
    }
    return v;
  }
  std::ifstream f(src, std::ios::binary);
  if (!f) usage_error("cannot read '" + src + "'");
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::pair<std::string, std::string> split_at(const std::string& s) {
  const std::size_t at = s.rfind('@');
  if (at == std::string::npos) return {s, ""};
  return {s.substr(0, at), s.substr(at + 1)};
}

int parse_fn(const std::string& s) {
  for (int f = 1; f <= 6; ++f) {
    if (s == naa::protocol::to_string(static_cast<naa::protocol::BuiltinFunction>(f))) return f;
  }
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 0);
  if (end == s.c_str() || *end != '\0' || v < 1 || v > 127) {
    usage_error("--fn must be 1..127 or a built-in name, not '" + s + "'");
  }
  return static_cast<int>(v);
}

}  // namespace

// Reads the command line; a bad option prints usage and exits 2, --help prints it and exits 0.
CallOptions parse_options(int argc, char** argv) {
  CallOptions o;
  naa::host::SessionOptions& opts = o.session;
  std::vector<RegionArg>& regs = o.regions;
  int& fn = o.fn;
  std::uint32_t& user = o.user;
  int& repeat = o.repeat;
  bool& quiet = o.quiet;
  bool& do_verify = o.verify;
  long timeout_ms = 0;

  enum {
    kMtu = 1000,
    kTimeout,
    kDisconnectTimeout,
    kPcap,
    kManual,
    kVerify,
    kTransport,
    kSolicitedOnly,
    kNaaBase,
    kFaultRx,
    kFaultTx,
    kFaultSeed,
    kStream,
    kStreamArg,
    kIrn,
    kFaultKey,
    kHandler,
    kHandlerState
  };
  std::optional<naa::impair::FaultKey> fault_key;
  naa::host::FaultOptions& fault_rx = o.fault_rx;
  naa::host::FaultOptions& fault_tx = o.fault_tx;
  std::uint64_t& fault_seed = o.fault_seed;
  naa::host::TransportKind& transport_kind = o.transport_kind;
  bool& solicited_only = o.solicited_only;
  static const option long_opts[] = {
      {"naa", required_argument, nullptr, 'a'},
      {"local", required_argument, nullptr, 'l'},
      {"fn", required_argument, nullptr, 'f'},
      {"user", required_argument, nullptr, 'u'},
      {"repeat", required_argument, nullptr, 'n'},
      {"in", required_argument, nullptr, 'i'},
      {"single-send", required_argument, nullptr, 's'},
      {"inout", required_argument, nullptr, 'b'},
      {"out", required_argument, nullptr, 'o'},
      {"internal", required_argument, nullptr, 'x'},
      {"mtu", required_argument, nullptr, kMtu},
      {"timeout", required_argument, nullptr, kTimeout},
      {"disconnect-timeout", required_argument, nullptr, kDisconnectTimeout},
      {"pcap", required_argument, nullptr, kPcap},
      {"manual", no_argument, nullptr, kManual},
      {"verify", no_argument, nullptr, kVerify},
      {"transport", required_argument, nullptr, kTransport},
      {"solicited-only", no_argument, nullptr, kSolicitedOnly},
      {"naa-base", required_argument, nullptr, kNaaBase},
      {"fault-rx", required_argument, nullptr, kFaultRx},
      {"fault-tx", required_argument, nullptr, kFaultTx},
      {"fault-seed", required_argument, nullptr, kFaultSeed},
      {"stream", no_argument, nullptr, kStream},
      {"stream-arg", required_argument, nullptr, kStreamArg},
      {"handler", required_argument, nullptr, kHandler},
      {"handler-state", required_argument, nullptr, kHandlerState},
      {"irn", required_argument, nullptr, kIrn},
      {"fault-key", required_argument, nullptr, kFaultKey},
      {"quiet", no_argument, nullptr, 'q'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0}};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":a:l:f:u:n:i:s:b:o:x:qh", long_opts, nullptr)) != -1) {
    const std::string arg = optarg != nullptr ? optarg : "";
    switch (c) {
      case 'a': {
        const auto naa = naa::tools::parse_naa_address(arg);
        if (!naa) usage_error("bad --naa address " + arg + " (IP[:PORT])");
        opts.naa_address = naa->ip;
        if (naa->cm_port) opts.cm_port = *naa->cm_port;
        break;
      }
      case 'l':
        if (!naa::host::parse_ipv4(arg)) usage_error("bad --local address " + arg);
        opts.local_address = arg;
        break;
      case 'f':
        fn = parse_fn(arg);
        break;
      case 'u': {
        const unsigned long v = std::strtoul(arg.c_str(), nullptr, 0);
        if (v > 0xFFFFFF) usage_error("--user takes 24 bits");
        user = static_cast<std::uint32_t>(v);
        break;
      }
      case 'n':
        repeat = std::atoi(arg.c_str());
        if (repeat < 1) usage_error("--repeat must be >= 1");
        break;
      case 'i':
        regs.push_back({naa::host::Region::kInput, load_source(arg), ""});
        break;
      case 's':
        regs.push_back(
            {naa::host::Region::kInput | naa::host::Region::kSingleSend, load_source(arg), ""});
        break;
      case 'b': {
        auto [src, file] = split_at(arg);
        regs.push_back(
            {naa::host::Region::kInput | naa::host::Region::kOutput, load_source(src), file});
        break;
      }
      case 'o': {
        auto [size, file] = split_at(arg);
        regs.push_back(
            {naa::host::Region::kOutput, std::vector<std::uint8_t>(parse_size(size)), file});
        break;
      }
      case 'x':
        regs.push_back({naa::host::Region::kInternal, {}, arg});
        break;
      case kMtu:
        opts.path_mtu = static_cast<std::uint32_t>(std::strtoul(arg.c_str(), nullptr, 10));
        break;
      case kTimeout:
        timeout_ms = std::atol(arg.c_str());
        if (timeout_ms <= 0) usage_error("--timeout must be > 0");
        break;
      case kDisconnectTimeout: {
        char* end = nullptr;
        const long ms = std::strtol(arg.c_str(), &end, 10);
        if (arg.empty() || *end != '\0' || ms < 0 || ms > 600000) {
          usage_error("--disconnect-timeout must be 0..600000 ms, not '" + arg + "'");
        }
        opts.disconnect_timeout = std::chrono::milliseconds(ms);
        break;
      }
      case kPcap:
        opts.pcap_path = arg;
        break;
      case kManual:
        opts.progress = naa::host::Progress::manual;
        break;
      case kVerify:
        do_verify = true;
        break;
      case kTransport: {
        const auto k = naa::host::parse_transport_kind(arg);
        if (!k) usage_error("--transport must be udp or verbs, not '" + arg + "'");
        transport_kind = *k;
        break;
      }
      case kSolicitedOnly:
        solicited_only = true;
        break;
      case kIrn:
        if (arg != "on" && arg != "off") usage_error("--irn must be on or off, not '" + arg + "'");
        o.irn = arg == "on";
        o.irn_given = true;
        break;
      case kNaaBase:
        opts.naa_base_address = parse_size(arg);
        break;
      case kFaultRx:
      case kFaultTx: {
        std::string why;
        if (!naa::host::parse_fault_options(arg, c == kFaultRx ? fault_rx : fault_tx, &why)) {
          usage_error(std::string(c == kFaultRx ? "bad --fault-rx: " : "bad --fault-tx: ") + why);
        }
        break;
      }
      case kStream:
        o.stream = true;
        break;
      case kStreamArg: {
        char* end = nullptr;
        opts.stream_argument = std::strtoull(arg.c_str(), &end, 0);
        if (arg.empty() || *end != '\0') usage_error("bad --stream-arg " + arg);
        break;
      }
      case kHandler:
        opts.handler_image = load_source(arg);
        if (opts.handler_image.empty()) usage_error("--handler: '" + arg + "' is empty");
        o.stream = true;
        break;
      case kHandlerState:
        opts.handler_state = load_source(arg);
        if (opts.handler_state.size() > opts.stream_state_bytes) {
          usage_error("--handler-state: more than " + std::to_string(opts.stream_state_bytes) +
                      " bytes");
        }
        break;
      case kFaultSeed:
        fault_seed = std::strtoull(arg.c_str(), nullptr, 0);
        break;
      case kFaultKey: {
        naa::impair::FaultKey k{};
        if (!naa::impair::parse_fault_key(arg, k)) {
          usage_error("--fault-key must be sequence or packet, not " + arg);
        }
        fault_key = k;
        break;
      }
      case 'q':
        quiet = true;
        break;
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
  if (fn == 0) usage_error("--fn is required");
  if (!opts.handler_state.empty() && opts.handler_image.empty()) {
    usage_error("--handler-state needs --handler");
  }
  if (o.stream) {
    opts.stream_function = static_cast<std::uint8_t>(fn);
    for (RegionArg& r : regs) {
      if ((r.flags & naa::host::Region::kInput) != 0) r.flags |= naa::host::Region::kStream;
    }
  }
  if (fault_key) fault_rx.key = fault_tx.key = *fault_key;  // whatever order the options came in
  if (timeout_ms > 0) {
    opts.connect_timeout = std::chrono::milliseconds(timeout_ms);
    opts.mrsp_timeout = opts.connect_timeout;
    opts.call_timeout = opts.connect_timeout;
  }
  return o;
}

}  // namespace naa_call
