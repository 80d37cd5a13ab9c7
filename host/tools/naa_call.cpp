// naa-call: one NAA call (or a few) from the shell, through naa::host::Session.
#include <getopt.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/verbs.hpp"
#include "naa/protocol/crc32.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/tools/naa_address.hpp"
#include "naa/tools/size_arg.hpp"

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
      --fault-rx SPEC     udp: inject faults into received datagrams; SPEC is
                          loss=P,dup=P,reorder=P,reorder-delay=N,corrupt=P,key=K
                          (docs/reliability.md)
      --fault-tx SPEC     udp: the same for sent datagrams
      --fault-seed N      seed of the fault decisions (default 1)
      --irn               udp: offer IRN (selective repeat, docs/protocol.md "IRN") in the CM
                          REQ; an NAA that does not answer it gives go-back-N as without it
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

struct RegionArg {
  std::uint8_t flags = 0;
  std::vector<std::uint8_t> data;
  std::string save_to;
};

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

double ms(std::chrono::nanoseconds d) {
  return static_cast<double>(d.count()) / 1e6;
}

// Host-side reference results of the built-in kernels (PROTOCOL.md 5.3) for --verify.
bool verify(int fn, int calls, const std::vector<RegionArg>& regs,
            const std::vector<std::vector<std::uint8_t>>& before, std::string& why) {
  std::vector<std::size_t> in, out;
  for (std::size_t i = 0; i < regs.size(); ++i) {
    if ((regs[i].flags & naa::host::Region::kInput) != 0) in.push_back(i);
    if ((regs[i].flags & naa::host::Region::kOutput) != 0) out.push_back(i);
  }
  auto fail = [&](const std::string& w) {
    why = w;
    return false;
  };
  switch (fn) {
    case 1:
    case 2:
      for (std::size_t i : out) {
        if ((regs[i].flags & naa::host::Region::kInput) == 0) continue;  // inout regions only
        for (std::size_t k = 0; k < regs[i].data.size(); ++k) {
          if (regs[i].data[k] != static_cast<std::uint8_t>(before[i][k] + fn * calls)) {
            return fail("region " + std::to_string(i) + " byte " + std::to_string(k));
          }
        }
      }
      return true;
    case 3:
      return true;
    case 4: {
      if (in.size() < 2 || out.empty()) return fail("vadd_i32 needs two inputs and an output");
      const auto& a = regs[in[0]].data;
      const auto& b = regs[in[1]].data;
      const auto& c = regs[out[0]].data;
      const std::size_t n = std::min({a.size(), b.size(), c.size()}) / 4;
      for (std::size_t k = 0; k < n; ++k) {
        std::uint32_t x, y, z;
        std::memcpy(&x, &a[4 * k], 4);
        std::memcpy(&y, &b[4 * k], 4);
        std::memcpy(&z, &c[4 * k], 4);
        if (z != x + y) return fail("element " + std::to_string(k));
      }
      return true;
    }
    case 5: {
      if (in.empty() || out.empty() || regs[out[0]].data.size() < 8) return fail("sum_u64 shape");
      std::uint64_t sum = 0;
      const auto& a = regs[in[0]].data;
      for (std::size_t k = 0; k + 4 <= a.size(); k += 4) {
        std::uint32_t x;
        std::memcpy(&x, &a[k], 4);
        sum += x;
      }
      std::uint64_t got;
      std::memcpy(&got, regs[out[0]].data.data(), 8);
      return got == sum ? true : fail("sum");
    }
    case 6: {
      if (in.empty() || out.empty() || regs[out[0]].data.size() < 4) return fail("crc32 shape");
      const std::uint32_t crc = naa::protocol::crc32(regs[in[0]].data);
      std::uint32_t got;
      std::memcpy(&got, regs[out[0]].data.data(), 4);
      return got == crc ? true : fail("crc");
    }
    default:
      return fail("no host reference for function " + std::to_string(fn));
  }
}

// The command line.
struct CallOptions {
  naa::host::SessionOptions session;
  std::vector<RegionArg> regions;  // loaded inputs, in order
  int fn = 0;
  std::uint32_t user = 0;
  int repeat = 1;
  bool quiet = false;
  bool verify = false;
  naa::host::FaultOptions fault_rx, fault_tx;
  std::uint64_t fault_seed = 1;
  naa::host::TransportKind transport_kind = naa::host::TransportKind::udp;
  bool solicited_only = false;
  bool stream = false;
  bool irn = false;  // offer IRN (UdpRoce only; the Verbs backend never does)
};

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
    kFaultKey
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
      {"irn", no_argument, nullptr, kIrn},
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
        o.irn = true;
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

// One session, --repeat calls, outputs saved and verified: 0 done, 1 a call failed or
// verification failed, 3 connection, MRSP or transport failure.
int run(CallOptions o) {
  naa::host::SessionOptions& opts = o.session;
  std::vector<RegionArg>& regs = o.regions;
  const int fn = o.fn;
  const std::uint32_t user = o.user;
  const int repeat = o.repeat;
  const bool quiet = o.quiet;
  const bool do_verify = o.verify;
  const naa::host::FaultOptions& fault_rx = o.fault_rx;
  const naa::host::FaultOptions& fault_tx = o.fault_tx;
  const std::uint64_t fault_seed = o.fault_seed;
  const naa::host::TransportKind transport_kind = o.transport_kind;
  const bool solicited_only = o.solicited_only;

  std::vector<naa::host::Region> regions;
  for (RegionArg& r : regs) {
    if (r.flags == naa::host::Region::kInternal) {
      regions.push_back(naa::host::Region::internal(parse_size(r.save_to)));
      r.save_to.clear();
    } else {
      regions.push_back({r.data.data(), r.data.size(), r.flags, {}});
    }
  }
  std::vector<std::vector<std::uint8_t>> before;
  for (const RegionArg& r : regs)
    before.push_back(r.data);

  std::shared_ptr<naa::host::Transport> transport;  // null: the Session opens a UdpRoce endpoint
  if (transport_kind == naa::host::TransportKind::verbs) {
    if (!opts.pcap_path.empty()) usage_error("--pcap needs --transport udp (capture on the wire)");
    if (o.irn) usage_error("--irn needs --transport udp (the Verbs backend never offers IRN)");
    naa::host::VerbsOptions vo;
    if (!opts.local_address.empty()) vo.local_ip = naa::host::parse_ipv4(opts.local_address);
    vo.remote_ip = naa::host::parse_ipv4(opts.naa_address);
    vo.solicited_only = solicited_only;
    std::error_code ec;
    std::string detail;
    transport = naa::host::open_verbs(vo, ec, &detail);
    if (!transport) {
      std::cerr << "naa-call: " << detail << " ["
                << naa::host::errc_name(static_cast<naa::host::Errc>(ec.value())) << "]\n";
      return 3;
    }
  }

  const auto faulty = [](const naa::host::FaultOptions& f) {
    return f.loss > 0 || f.dup > 0 || f.reorder > 0 || f.corrupt > 0;
  };
  if (!transport && (faulty(fault_rx) || faulty(fault_tx) || o.irn)) {
    // Fault injection lives in the UdpRoce endpoint: open it here instead of in the Session.
    naa::host::UdpRoceOptions uo;
    uo.progress = opts.progress;
    uo.pcap_path = opts.pcap_path;
    if (!opts.local_address.empty()) {
      uo.local_ip = naa::host::parse_ipv4(opts.local_address);
    } else if ((*naa::host::parse_ipv4(opts.naa_address) >> 24) != 127) {
      usage_error("--fault-rx/--fault-tx with a non-loopback NAA need --local");
    }
    uo.fault_rx = fault_rx;
    uo.fault_tx = fault_tx;
    uo.fault_seed = fault_seed;
    uo.irn = o.irn;
    std::error_code ec;
    std::string detail;
    transport = naa::host::open_udp_roce(uo, ec, &detail);
    if (!transport) {
      std::cerr << "naa-call: " << detail << " ["
                << naa::host::errc_name(static_cast<naa::host::Errc>(ec.value())) << "]\n";
      return 3;
    }
  }

  try {
    naa::host::Session session(transport, opts, regions);
    const auto& info = session.info();
    if (!quiet) {
      std::printf("connected %s -> %s:%u  QPN 0x%x -> 0x%x  path MTU %u  (%.3f ms)\n",
                  info.local_address.c_str(), info.naa_address.c_str(), opts.cm_port, info.qpn,
                  info.naa_qpn, info.path_mtu, ms(info.connect_time));
      std::printf("MRSP: %zu regions placed (%.3f ms)\n", regions.size(), ms(info.mrsp_time));
      std::size_t p = 0;
      for (std::size_t i = 0; i < regions.size(); ++i) {
        const std::uint8_t f = regions[i].flags;
        std::string kind =
            (f & naa::host::Region::kInternal) != 0 ? "internal"
            : (f & naa::host::Region::kInput) != 0 && (f & naa::host::Region::kOutput) != 0
                ? "inout"
            : (f & naa::host::Region::kOutput) != 0     ? "out"
            : (f & naa::host::Region::kSingleSend) != 0 ? "single-send"
                                                        : "in";
        if ((f & naa::host::Region::kInternal) != 0) {
          std::printf("  [%zu] %-11s %10zu B\n", i, kind.c_str(), regions[i].size);
        } else {
          const auto& pl = session.placements()[p++];
          std::printf("  [%zu] %-11s %10zu B at NAA 0x%" PRIx64 " rkey 0x%08x\n", i, kind.c_str(),
                      regions[i].size, pl.naa_address, pl.rkey);
        }
      }
    }
    std::vector<double> lat;
    naa::host::CallResult last;
    std::uint32_t worst_rc = 0;
    std::uint64_t moved = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < repeat; ++k) {
      last = session.call(static_cast<std::uint8_t>(fn), user);
      lat.push_back(ms(last.wall));
      moved += last.bytes_sent + last.bytes_received;
      if (last.return_code != 0 && worst_rc == 0) worst_rc = last.return_code;
    }
    const double total_ms = ms(std::chrono::steady_clock::now() - t0);
    const auto stats = session.transport()->stats();
    session.disconnect();
    std::sort(lat.begin(), lat.end());
    const double median = lat[lat.size() / 2];
    if (!quiet) {
      std::printf(
          "call fn %d (%s) user 0x%06x: return code 0x%02x (%s), %" PRIu64 " B sent, %" PRIu64
          " B received\n",
          fn,
          std::string(naa::protocol::to_string(static_cast<naa::protocol::BuiltinFunction>(fn)))
              .c_str(),
          user, last.return_code,
          std::string(naa::protocol::return_code_name(last.return_code)).c_str(), last.bytes_sent,
          last.bytes_received);
      std::printf("transport: %" PRIu64 " packets out, %" PRIu64 " in, %" PRIu64
                  " retransmitted, %" PRIu64 " dropped (bad ICRC %" PRIu64 ")\n",
                  stats.packets_sent, stats.packets_received, stats.retransmitted_packets,
                  stats.dropped_bad_icrc + stats.dropped_malformed + stats.dropped_unknown_qp +
                      stats.dropped_out_of_order + stats.dropped_other,
                  stats.dropped_bad_icrc);
      if (faulty(fault_rx) || faulty(fault_tx)) {
        std::printf("faults injected: rx loss %" PRIu64 " dup %" PRIu64 " reorder %" PRIu64
                    " corrupt %" PRIu64 ", tx loss %" PRIu64 " dup %" PRIu64 " reorder %" PRIu64
                    " corrupt %" PRIu64 "\n",
                    stats.fault_rx_loss, stats.fault_rx_dup, stats.fault_rx_reorder,
                    stats.fault_rx_corrupt, stats.fault_tx_loss, stats.fault_tx_dup,
                    stats.fault_tx_reorder, stats.fault_tx_corrupt);
      }
    }
    std::printf(
        "naa-call: %d call(s), rc 0x%02x, latency min %.3f ms median %.3f ms max %.3f ms, "
        "%.1f MB/s (in+out), wall %.3f ms\n",
        repeat, worst_rc != 0 ? worst_rc : last.return_code, lat.front(), median, lat.back(),
        total_ms > 0 ? static_cast<double>(moved) / 1e3 / total_ms : 0.0, total_ms);
    for (const RegionArg& r : regs) {
      if (r.save_to.empty()) continue;
      std::ofstream f(r.save_to, std::ios::binary);
      f.write(reinterpret_cast<const char*>(r.data.data()),
              static_cast<std::streamsize>(r.data.size()));
      if (!f) {
        std::cerr << "naa-call: cannot write " << r.save_to << "\n";
        return 3;
      }
    }
    if (worst_rc != 0) return 1;
    if (do_verify) {
      std::string why;
      if (!verify(fn, repeat, regs, before, why)) {
        std::printf("verify: FAILED (%s)\n", why.c_str());
        return 1;
      }
      std::printf("verify: ok\n");
    }
    return 0;
  } catch (const naa::host::Error& e) {
    std::cerr << "naa-call: " << e.what() << " ["
              << naa::host::errc_name(static_cast<naa::host::Errc>(e.code().value())) << "]\n";
    return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return run(parse_options(argc, argv));
}
