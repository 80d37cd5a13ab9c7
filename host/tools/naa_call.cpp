// naa-call: one NAA call (or a few) from the shell, through naa::host::Session. The command line
// is read by naa_call_options.cpp.
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
#include "naa_call_options.hpp"

namespace {

using naa_call::CallOptions;
using naa_call::parse_size;
using naa_call::RegionArg;
using naa_call::usage_error;

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
    if (o.irn_given && o.irn)
      usage_error("--irn on needs --transport udp (the Verbs backend never offers IRN)");
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
  opts.irn = o.irn;  // the Session's own endpoint offers IRN unless --irn off
  if (!transport && (faulty(fault_rx) || faulty(fault_tx))) {
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
  return run(naa_call::parse_options(argc, argv));
}
