// naa-fabric: runs a workload on a fabric of hosts (and NAAs) behind switches, with PFC, ECN and
// DCQCN, in simulated time (docs/fabric.md). Deterministic per --seed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include <systemc>

#include "naa/fabric/network.hpp"
#include "naa/fabric/topology.hpp"
#include "naa/fabric/workload.hpp"

namespace {

using namespace naa::fabric;

constexpr const char* kUsage = R"USAGE(usage: naa-fabric [options]
topology (one of):
  --topology FILE          JSON topology (docs/fabric.md "Topology file")
  --fat-tree K             k-ary fat tree, k^3/4 hosts (6: 54 hosts, three tiers)
  --leaf-spine L,S,H       L leaves of H hosts, S spines (two tiers)
  --star N                 N hosts on one switch (incast)
  --gbps G                 generated links' rate (default 40)
  --latency-ns NS          generated links' one-way latency (default 1000)
  --write-topology FILE    write the topology as JSON and exit
switches:
  --port-buffer-bytes B    buffer per ingress port, drop-tail beyond (default 240000)
  --buffer-bytes B         shared buffer per switch (default: ports x port buffer)
  --dynamic-alpha A        lossy egress limit alpha x free buffer instead (default 0: off)
  --lossy-ingress 0|1      drop lossy traffic by its ingress port's buffer (the budget PFC
                           counts against) instead of its egress queue (default 0)
  --xoff-bytes B, --xon-bytes B   PFC thresholds per ingress port and priority (default: the
                           port buffer less 2 x rate x latency + 3 frames; xoff - 2 frames)
run:
  --workload W             websearch | datamining | incast (default websearch)
  --load L                 Poisson load per host link, 0..1 (default 0.7)
  --flows N                Poisson flows (default 200)
  --max-flow-bytes B       clip sampled flow sizes (default: none)
  --incast-senders M       incast: M senders to one receiver (default 8)
  --incast-bytes B         incast: bytes per sender (default 262144)
  --incast-rounds R        incast: rounds (default 1)
  --background-load L      incast: Poisson web-search background (--flows of them) at load L
  --naa-calls N            vadd_i32 calls from the hosts to the topology's NAAs, mixed in,
                           each result verified (naa_calls.csv)
  --naa-call-bytes B       bytes per input of each call (default 16384)
  --naas N                 with a generator: N NAAs on the first host's switch
  --transport T            gbn | irn (default gbn)
  --retry-count N          retries per QP before a flow fails, 0..7 (default 7)
  --gbn-ack-interval N     go-back-N: an ACK requested every N packets, 1..64 (default 64;
                           1 = per packet, as the IRN paper's RoCE)
  --gbn-window N           go-back-N: most unacknowledged PSNs, 128..4194304 (default 128,
                           PROTOCOL.md 3; the IRN paper's RoCE has no cap: a large N)
  --irn-rto-us HIGH,LOW    IRN's RTO_high and RTO_low in us (default: 262,131, the CM's
                           exponents; the IRN paper's are 320,100)
  --wire-timers 0|1        IRN's retransmit timer starts when the NIC sends the packet, not
                           when the endpoint hands it over (default 0)
  --pfc 0|1                PFC on the switches (default 0)
  --dcqcn 0|1              ECN marking, CNPs and DCQCN rate limiting (default 0)
  --ecn-acks 0|1           with DCQCN, ACKs leave ECN-capable too (default 1)
  --seed N                 every random choice (default 1)
  --out DIR                fct.csv, summary.csv, queues.csv (default: none)
  --pcap-dir DIR           one pcap per port
  --sample-us US           queue sampling period (default 10)
)USAGE";

struct Options {
  std::string topology_file, write_topology, out, pcap_dir;
  int fat_tree = 0, star = 0;
  int leaves = 0, spines = 0, hosts_per_leaf = 0;
  double gbps = 40, latency_ns = 1000;
  SwitchConfig sw;
  bool xoff_set = false, xon_set = false;
  WorkloadConfig wl;
  std::string workload = "websearch", transport = "gbn";
  bool pfc = false, dcqcn = false, ecn_acks = true;
  double sample_us = 10;
  int naas = 0;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "naa-fabric: " << msg << "\n\n" << kUsage;
  std::exit(2);
}

double number(const std::string& opt, const std::string& v) {
  try {
    std::size_t pos = 0;
    const double d = std::stod(v, &pos);
    if (pos != v.size()) throw std::invalid_argument(v);
    return d;
  } catch (const std::exception&) {
    usage_error(opt + " needs a number, not '" + v + "'");
  }
}

bool flag(const std::string& opt, const std::string& v) {
  if (v == "0") return false;
  if (v == "1") return true;
  usage_error(opt + " takes 0 or 1, not '" + v + "'");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error("unknown option or missing value: " + a);
    const std::string v = argv[++i];
    if (a == "--topology") {
      o.topology_file = v;
    } else if (a == "--fat-tree") {
      o.fat_tree = static_cast<int>(number(a, v));
    } else if (a == "--leaf-spine") {
      if (std::sscanf(v.c_str(), "%d,%d,%d", &o.leaves, &o.spines, &o.hosts_per_leaf) != 3)
        usage_error("--leaf-spine takes L,S,H");
    } else if (a == "--star") {
      o.star = static_cast<int>(number(a, v));
    } else if (a == "--gbps") {
      o.gbps = number(a, v);
    } else if (a == "--latency-ns") {
      o.latency_ns = number(a, v);
    } else if (a == "--write-topology") {
      o.write_topology = v;
    } else if (a == "--dynamic-alpha") {
      o.sw.dynamic_alpha = number(a, v);
    } else if (a == "--lossy-ingress") {
      o.sw.lossy_ingress = flag(a, v);
    } else if (a == "--buffer-bytes") {
      o.sw.buffer_bytes = static_cast<std::uint64_t>(number(a, v));
    } else if (a == "--port-buffer-bytes") {
      o.sw.port_buffer_bytes = static_cast<std::uint64_t>(number(a, v));
    } else if (a == "--xoff-bytes") {
      o.sw.pfc.xoff_bytes = static_cast<std::uint64_t>(number(a, v));
      o.xoff_set = true;
    } else if (a == "--xon-bytes") {
      o.sw.pfc.xon_bytes = static_cast<std::uint64_t>(number(a, v));
      o.xon_set = true;
    } else if (a == "--workload") {
      o.workload = v;
    } else if (a == "--load") {
      o.wl.load = number(a, v);
    } else if (a == "--flows") {
      o.wl.flows = static_cast<int>(number(a, v));
    } else if (a == "--max-flow-bytes") {
      o.wl.max_flow_bytes = number(a, v);
    } else if (a == "--incast-senders") {
      o.wl.incast_senders = static_cast<int>(number(a, v));
    } else if (a == "--incast-rounds") {
      o.wl.incast_rounds = static_cast<int>(number(a, v));
    } else if (a == "--background-load") {
      o.wl.background_load = number(a, v);
    } else if (a == "--naa-calls") {
      o.wl.naa_calls = static_cast<int>(number(a, v));
    } else if (a == "--naa-call-bytes") {
      o.wl.naa_call_bytes = static_cast<std::uint32_t>(number(a, v));
    } else if (a == "--naas") {
      o.naas = static_cast<int>(number(a, v));
    } else if (a == "--incast-bytes") {
      o.wl.incast_bytes = static_cast<std::uint64_t>(number(a, v));
    } else if (a == "--transport") {
      o.transport = v;
    } else if (a == "--retry-count") {
      const double n = number(a, v);
      if (!(n >= 0 && n <= 7) || n != static_cast<double>(static_cast<int>(n)))
        usage_error("--retry-count takes 0..7, not '" + v + "'");
      o.wl.retry_count = static_cast<std::uint8_t>(n);
    } else if (a == "--gbn-ack-interval") {
      const double n = number(a, v);
      if (!(n >= 1 && n <= 64) || n != static_cast<double>(static_cast<int>(n)))
        usage_error("--gbn-ack-interval takes 1..64, not '" + v + "'");
      o.wl.gbn_ack_request_interval = static_cast<std::uint32_t>(n);
    } else if (a == "--gbn-window") {
      const double n = number(a, v);
      if (!(n >= 128 && n <= 4194304) || n != static_cast<double>(static_cast<int>(n)))
        usage_error("--gbn-window takes 128..4194304, not '" + v + "'");
      o.wl.gbn_window = static_cast<std::uint32_t>(n);
    } else if (a == "--irn-rto-us") {
      double high = 0, low = 0;
      char end = 0;
      if (std::sscanf(v.c_str(), "%lf,%lf%c", &high, &low, &end) != 2 || !(low > 0) ||
          !(high >= low) || high > 4e6)
        usage_error("--irn-rto-us takes HIGH,LOW in us, 0 < LOW <= HIGH, not '" + v + "'");
      o.wl.irn_rto_high_ns = static_cast<std::uint32_t>(high * 1000 + 0.5);
      o.wl.irn_rto_low_ns = static_cast<std::uint32_t>(low * 1000 + 0.5);
    } else if (a == "--wire-timers") {
      o.wl.wire_timers = flag(a, v);
    } else if (a == "--ecn-acks") {
      o.ecn_acks = flag(a, v);
    } else if (a == "--pfc") {
      o.pfc = flag(a, v);
    } else if (a == "--dcqcn") {
      o.dcqcn = flag(a, v);
    } else if (a == "--seed") {
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19)
        usage_error("--seed takes a decimal number, not '" + v + "'");
      o.wl.seed = std::stoull(v);
    } else if (a == "--out") {
      o.out = v;
    } else if (a == "--pcap-dir") {
      o.pcap_dir = v;
    } else if (a == "--sample-us") {
      o.sample_us = number(a, v);
    } else {
      usage_error("unknown option " + a);
    }
  }
  const int sources = (o.topology_file.empty() ? 0 : 1) + (o.fat_tree ? 1 : 0) + (o.star ? 1 : 0) +
                      (o.leaves ? 1 : 0);
  if (sources != 1) usage_error("give exactly one of --topology, --fat-tree, --leaf-spine, --star");
  if (o.workload == "websearch") {
    o.wl.kind = WorkloadKind::websearch;
  } else if (o.workload == "datamining") {
    o.wl.kind = WorkloadKind::datamining;
  } else if (o.workload == "incast") {
    o.wl.kind = WorkloadKind::incast;
  } else {
    usage_error("--workload is websearch, datamining or incast, not '" + o.workload + "'");
  }
  if (o.transport != "gbn" && o.transport != "irn")
    usage_error("--transport is gbn or irn, not '" + o.transport + "'");
  o.wl.irn = o.transport == "irn";
  if (!(o.wl.load > 0 && o.wl.load <= 1)) usage_error("--load must be in (0, 1]");
  if (o.wl.flows < 1) usage_error("--flows must be >= 1");
  if (o.wl.incast_rounds < 1) usage_error("--incast-rounds must be >= 1");
  if (o.wl.background_load < 0 || o.wl.background_load > 1)
    usage_error("--background-load must be in [0, 1]");
  if (o.xoff_set && !o.xon_set) o.sw.pfc.xon_bytes = o.sw.pfc.xoff_bytes - 2200;
  if (o.xon_set && o.sw.pfc.xon_bytes > o.sw.pfc.xoff_bytes)
    usage_error("--xon-bytes must be <= --xoff-bytes");
  return o;
}

int run(const Options& o) {
  Topology topo;
  if (!o.topology_file.empty()) {
    topo = load_topology(o.topology_file);
  } else {
    if (o.fat_tree) topo = fat_tree(o.fat_tree, o.gbps, o.latency_ns);
    if (o.star) topo = star(o.star, o.gbps, o.latency_ns);
    if (o.leaves) topo = leaf_spine(o.leaves, o.spines, o.hosts_per_leaf, o.gbps, o.latency_ns);
    topo.switches = o.sw;
    add_naas(topo, o.naas, o.gbps, o.latency_ns);
  }
  if (!o.write_topology.empty()) {
    std::ofstream(o.write_topology) << topology_to_json(topo) << '\n';
    return 0;
  }
  NetworkConfig nc;
  nc.seed = o.wl.seed;
  nc.pfc = o.pfc;
  nc.dcqcn = o.dcqcn;
  nc.ecn_acks = o.ecn_acks;
  nc.pcap_dir = o.pcap_dir;
  nc.queue_sample_ps = static_cast<Ps>(o.sample_us * kPsPerUs);
  if (!o.pcap_dir.empty()) std::filesystem::create_directories(o.pcap_dir);
  if (!o.out.empty()) std::filesystem::create_directories(o.out);
  Network net(topo, nc);
  // Wall time only for the speed line on stdout; nothing simulated depends on it.
  const auto wall0 = std::chrono::steady_clock::now();
  const std::clock_t cpu0 = std::clock();
  const WorkloadResult r = run_workload(net, o.wl);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  // CPU time too: on a shared machine the wall figure says as much about the neighbours.
  const double cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  net.close_pcaps();
  const RunLabels labels{o.workload, o.transport, o.pfc, o.dcqcn};
  if (!o.out.empty()) write_results(o.out, net, r, labels);
  std::size_t verified = 0;
  for (const NaaCallRecord& c : r.naa_calls)
    verified += c.verified ? 1 : 0;
  if (!r.naa_calls.empty())
    std::printf("fabric.naa: %zu of %zu NAA calls verified\n", verified, r.naa_calls.size());
  // A flow that failed says why (the first error completion), so that "N/M flows finished"
  // can be followed up; flows that merely did not finish have no completion to show.
  for (const FlowRecord& f : r.flows) {
    if (!f.failed) continue;
    std::printf("fabric.failed: flow %d %s -> %s, %llu bytes, started %.3f us: %s at %.3f us\n",
                f.id, net.topology().nodes[static_cast<std::size_t>(f.src)].name.c_str(),
                net.topology().nodes[static_cast<std::size_t>(f.dst)].name.c_str(),
                static_cast<unsigned long long>(f.bytes), static_cast<double>(f.start) / 1e6,
                f.error.c_str(), static_cast<double>(f.failed_at) / 1e6);
  }
  const Summary s = summarize(r);
  const NetworkStats& ns = net.stats();
  std::printf(
      "fabric: %s %s pfc=%d dcqcn=%d: %zu/%zu flows finished, avg FCT %.1f us, p99 FCT "
      "%.1f us, avg slowdown %.2f; drops %llu, pauses %llu, marks %llu, CNPs %llu, "
      "retransmitted %llu, timeouts %llu; XOFF %.0f us, %llu pauses to hosts\n",
      o.workload.c_str(), o.transport.c_str(), o.pfc ? 1 : 0, o.dcqcn ? 1 : 0, s.finished, s.flows,
      s.avg_fct_ns / 1000, s.p99_fct_ns / 1000, s.avg_slowdown,
      static_cast<unsigned long long>(ns.drops), static_cast<unsigned long long>(ns.pause_frames),
      static_cast<unsigned long long>(ns.ecn_marks), static_cast<unsigned long long>(ns.cnps_sent),
      static_cast<unsigned long long>(r.retransmitted), static_cast<unsigned long long>(r.timeouts),
      static_cast<double>(ns.xoff_ns) / 1000, static_cast<unsigned long long>(ns.pauses_to_hosts));
  std::printf(
      "fabric.speed: %llu packet-hops in %.2f s wall (%.0f packet-hops/s), %.2f s CPU "
      "(%.0f packet-hops/s), %.3f ms simulated\n",
      static_cast<unsigned long long>(ns.frames_sent), wall_s,
      static_cast<double>(ns.frames_sent) / std::max(wall_s, 1e-9), cpu_s,
      static_cast<double>(ns.frames_sent) / std::max(cpu_s, 1e-9),
      static_cast<double>(r.end) / 1e9);
  return r.all_finished ? 0 : 3;
}

}  // namespace

// sc_main: the NAA models are SystemC modules (libsystemc provides main()).
int sc_main(int argc, char* argv[]) {
  const Options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "naa-fabric: " << e.what() << '\n';
    return 1;
  }
}
