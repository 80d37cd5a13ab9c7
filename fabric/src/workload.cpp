// Workloads on the fabric (workload.hpp, docs/fabric.md "Workloads").
#include "naa/fabric/workload.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>

#include "naa/host/session.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa/sim/link_model.hpp"

namespace naa::fabric {

const Cdf& websearch_cdf() {
  // Bytes, cumulative probability: the web search distribution as the HPCC simulator ships it
  // (traffic_gen/WebSearch_distribution.txt, percent there), from the DCTCP paper's Fig. 5.
  static const Cdf cdf = {{0, 0},
                          {10'000, 0.15},
                          {20'000, 0.20},
                          {30'000, 0.30},
                          {50'000, 0.40},
                          {80'000, 0.53},
                          {200'000, 0.60},
                          {1'000'000, 0.70},
                          {2'000'000, 0.80},
                          {5'000'000, 0.90},
                          {10'000'000, 0.97},
                          {30'000'000, 1.0}};
  return cdf;
}

const Cdf& datamining_cdf() {
  // Bytes (packets of 1460 B as pFabric's and PIAS's simulation files tabulate it), cumulative
  // probability: the data mining distribution of VL2's Fig. 2.
  static const Cdf cdf = {{1'460, 0},        {1'460, 0.5},       {2'920, 0.6},
                          {4'380, 0.7},      {10'220, 0.8},      {389'820, 0.9},
                          {3'076'220, 0.95}, {97'333'820, 0.99}, {973'333'820, 1.0}};
  return cdf;
}

double cdf_mean(const Cdf& cdf) {
  double m = 0;
  for (std::size_t i = 1; i < cdf.size(); ++i)
    m += (cdf[i].first + cdf[i - 1].first) / 2 * (cdf[i].second - cdf[i - 1].second);
  return m;
}

double cdf_sample(const Cdf& cdf, double u) {
  for (std::size_t i = 1; i < cdf.size(); ++i) {
    if (u < cdf[i].second) {
      const double span = cdf[i].second - cdf[i - 1].second;
      const double frac = span > 0 ? (u - cdf[i - 1].second) / span : 0;
      return cdf[i - 1].first + frac * (cdf[i].first - cdf[i - 1].first);
    }
  }
  return cdf.back().first;
}

namespace {

constexpr std::uint16_t kCmPort = 7000;
constexpr std::size_t kChunk = 1 << 20;  // bytes per WRITE: flows larger are several WRITEs

struct HostState {
  int node = 0;
  std::shared_ptr<host::Transport> t;
  std::vector<std::uint8_t> src, dst;
  host::MemoryRegion src_mr, dst_mr;
};

struct FlowState {
  std::unique_ptr<host::QueuePair> qp;
  std::uint32_t wrs = 0, completed = 0;
};

double ideal_fct_ns(const Network& net, int src, int dst, std::uint64_t bytes, std::uint32_t mtu) {
  // The flow alone on an idle fabric: its wire bytes at the sender's line rate, each further hop
  // storing and forwarding one full packet, the latency there and the ACK's way back.
  const double gbps = net.endpoint_gbps(src);
  // Per packet BTH + ICRC (16 bytes) besides the payload (the first's RETH left out).
  const std::uint64_t full = bytes / mtu, rest = bytes % mtu;
  double wire = static_cast<double>(full) * static_cast<double>(sim::ethernet_wire_bytes(mtu + 16));
  if (rest > 0 || full == 0)
    wire += static_cast<double>(sim::ethernet_wire_bytes(static_cast<std::size_t>(rest + 16)));
  const double per_packet_ns =
      static_cast<double>(sim::ethernet_wire_bytes(std::min<std::uint64_t>(bytes, mtu) + 16)) * 8 /
      gbps;
  const int hops = net.hops(src, dst);
  const double ack_ns = static_cast<double>(sim::ethernet_wire_bytes(20)) * 8 / gbps;
  return wire * 8 / gbps + (hops - 1) * per_packet_ns + hops * ack_ns +
         net.path_latency_ns(src, dst) + net.path_latency_ns(dst, src);
}

// Go-back-N or IRN for a host: its topology entry, else the run's choice.
bool node_irn(const Network& net, const WorkloadConfig& cfg, int node) {
  return net.topology().nodes[static_cast<std::size_t>(node)].irn.value_or(cfg.irn);
}

// The NAA calls (WorkloadConfig::naa_calls): each a blocking Session::call at top level, which
// runs the whole fabric (ADR 0005) until its reply is there.
template <class TransportOf>
void run_naa_calls(Network& net, const WorkloadConfig& cfg, WorkloadResult& r, Ps base,
                   TransportOf transport_of) {
  if (cfg.naa_calls <= 0) return;
  const std::vector<int> naas = net.nodes_of(NodeKind::naa);
  const std::vector<int> hosts = net.nodes_of(NodeKind::host);
  if (naas.empty()) throw std::runtime_error("NAA calls need an NAA in the topology");
  Ps span = 0;
  for (const FlowRecord& f : r.flows)
    span = std::max(span, f.start - base);
  struct Client {
    std::vector<std::int32_t> a, b, sum;
    std::unique_ptr<host::Session> session;
  };
  std::map<std::pair<int, int>, Client> clients;
  std::map<int, std::uint64_t> sessions_at;  // per NAA
  std::mt19937_64 rng(cfg.seed ^ 0xCA11CA11ULL);
  const std::size_t n = cfg.naa_call_bytes / 4;
  for (int i = 0; i < cfg.naa_calls; ++i) {
    NaaCallRecord rec;
    rec.id = i;
    rec.client = hosts[static_cast<std::size_t>(i) % hosts.size()];
    rec.naa = naas[static_cast<std::size_t>(i) % naas.size()];
    rec.bytes = static_cast<std::uint32_t>(n * 4);
    net.run_until(base + span * (2 * i + 1) / (2 * cfg.naa_calls), {});
    Client& c = clients[{rec.client, rec.naa}];
    if (!c.session) {
      c.a.assign(n, 0);
      c.b.assign(n, 0);
      c.sum.assign(n, 0);
      host::SessionOptions so;
      const std::uint32_t ip = net.topology().nodes[static_cast<std::size_t>(rec.naa)].ip;
      so.naa_address = std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
                       std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
      so.path_mtu = cfg.mtu;
      so.local_ack_timeout =
          node_irn(net, cfg, rec.client) ? cfg.rto_exponent : cfg.gbn_rto_exponent;
      // Sessions at one NAA must not overlap in its memory: each gets its own window.
      const std::uint64_t window = 3 * ((std::uint64_t{n} * 4 + 4095) / 4096 * 4096);
      so.naa_base_address = window * sessions_at[rec.naa]++;
      c.session = std::make_unique<host::Session>(
          transport_of(rec.client), so,
          std::vector<host::Region>{host::Region::input(c.a), host::Region::input(c.b),
                                    host::Region::output(c.sum)});
    }
    for (std::size_t k = 0; k < n; ++k) {
      c.a[k] = static_cast<std::int32_t>(rng());
      c.b[k] = static_cast<std::int32_t>(rng());
      c.sum[k] = 0;
    }
    rec.start = net.now();
    const host::CallResult res = c.session->call(4);  // vadd_i32
    rec.end = net.now();
    rec.return_code = res.return_code;
    rec.verified = res.return_code == 0;
    for (std::size_t k = 0; k < n && rec.verified; ++k) {
      const auto want = static_cast<std::int32_t>(static_cast<std::uint32_t>(c.a[k]) +
                                                  static_cast<std::uint32_t>(c.b[k]));
      rec.verified = c.sum[k] == want;
    }
    r.naa_calls.push_back(rec);
  }
  for (auto& [key, c] : clients)
    c.session->disconnect();
}

}  // namespace

WorkloadResult run_workload(Network& net, const WorkloadConfig& cfg) {
  WorkloadResult r;
  const std::vector<int> host_nodes = net.nodes_of(NodeKind::host);
  if (host_nodes.size() < 2) throw std::runtime_error("the workload needs at least 2 hosts");
  std::mt19937_64 rng(cfg.seed);

  // The flows, all drawn before anything runs (a seed gives the same list).
  const bool incast = cfg.kind == WorkloadKind::incast;
  const double poisson_load = incast ? cfg.background_load : cfg.load;
  if (poisson_load > 0 && cfg.flows > 0) {
    const Cdf& cdf = cfg.kind == WorkloadKind::datamining ? datamining_cdf() : websearch_cdf();
    double mean = cdf_mean(cdf);
    if (cfg.max_flow_bytes > 0) {
      // The clipped distribution's mean (numerically), so the load stays the target.
      double m = 0;
      const int n = 20000;
      for (int i = 0; i < n; ++i)
        m += std::min(cdf_sample(cdf, (i + 0.5) / n), cfg.max_flow_bytes);
      mean = m / n;
    }
    // Poisson arrivals: every host offers `load` of its link on average.
    double rate_per_s = 0;
    for (int h : host_nodes)
      rate_per_s += poisson_load * net.endpoint_gbps(h) * 1e9 / (mean * 8);
    std::exponential_distribution<double> gap(rate_per_s);
    std::uniform_real_distribution<double> uni(0, 1);
    std::uniform_int_distribution<std::size_t> pick(0, host_nodes.size() - 1);
    double t_s = 0;
    for (int i = 0; i < cfg.flows; ++i) {
      t_s += gap(rng);
      FlowRecord f;
      f.id = static_cast<int>(r.flows.size());
      f.src = host_nodes[pick(rng)];
      do {
        f.dst = host_nodes[pick(rng)];
      } while (f.dst == f.src);
      double b = cdf_sample(cdf, uni(rng));
      if (cfg.max_flow_bytes > 0) b = std::min(b, cfg.max_flow_bytes);
      f.bytes = std::max<std::uint64_t>(64, static_cast<std::uint64_t>(b));
      f.start = static_cast<Ps>(t_s * 1e12);
      r.flows.push_back(f);
    }
  }
  if (incast) {
    if (cfg.incast_senders < 1 || static_cast<std::size_t>(cfg.incast_senders) >= host_nodes.size())
      throw std::runtime_error("incast: senders must be between 1 and hosts - 1");
    const Ps span = r.flows.empty() ? 0 : r.flows.back().start;
    std::uniform_int_distribution<std::size_t> pick(0, host_nodes.size() - 1);
    for (int round = 0; round < cfg.incast_rounds; ++round) {
      const int receiver = r.flows.empty() && round == 0 ? host_nodes[0] : host_nodes[pick(rng)];
      std::vector<int> others;
      for (int h : host_nodes)
        if (h != receiver) others.push_back(h);
      std::shuffle(others.begin(), others.end(), rng);
      const Ps at = span * (2 * round + 1) / (2 * cfg.incast_rounds);
      for (int i = 0; i < cfg.incast_senders; ++i) {
        FlowRecord f;
        f.id = static_cast<int>(r.flows.size());
        f.src = others[static_cast<std::size_t>(i)];
        f.dst = receiver;
        f.bytes = cfg.incast_bytes;
        f.start = at;
        r.flows.push_back(f);
      }
    }
  }
  if (r.flows.empty()) throw std::runtime_error("the workload has no flows");
  for (FlowRecord& f : r.flows) {
    f.ideal_ns = ideal_fct_ns(net, f.src, f.dst, f.bytes, cfg.mtu);
    f.irn = node_irn(net, cfg, f.src) && node_irn(net, cfg, f.dst);
  }

  // Endpoints: one per host, each listening; a source and a sink buffer per host (flows write
  // from the one into the other; larger flows are several WRITEs of at most kChunk).
  std::uint64_t biggest = 0;
  for (const FlowRecord& f : r.flows)
    biggest = std::max(biggest, f.bytes);
  const std::size_t buf = static_cast<std::size_t>(std::min<std::uint64_t>(biggest, kChunk));
  std::map<int, HostState> hosts;
  for (int h : host_nodes) {
    HostState& hs = hosts[h];
    hs.node = h;
    host::UdpRoceOptions o;
    o.seed = cfg.seed * std::uint64_t{1000003} + static_cast<std::uint64_t>(h + 1);
    o.irn = node_irn(net, cfg, h);
    o.irn_bdp_cap = cfg.irn_bdp_cap;
    o.irn_rto_low = cfg.irn_rto_low_exponent;
    o.ack_request_interval = cfg.gbn_ack_request_interval;
    o.irn_rto_low_ns = cfg.irn_rto_low_ns;
    o.irn_rto_high_ns = cfg.irn_rto_high_ns;
    o.gbn_max_unacked_psns = cfg.gbn_window;
    o.wire_timers = cfg.wire_timers;
    hs.t = net.open_host(h, o);
    hs.src.assign(buf, 0);
    for (std::size_t i = 0; i < buf; ++i)
      hs.src[i] = static_cast<std::uint8_t>(i * 7 + static_cast<std::size_t>(h));
    hs.dst.assign(buf, 0);
    if (hs.t->register_memory(hs.src.data(), buf, host::Access::local_write, hs.src_mr) ||
        hs.t->register_memory(hs.dst.data(), buf,
                              host::Access::local_write | host::Access::remote_write, hs.dst_mr))
      throw std::runtime_error("cannot register host memory");
    if (host::udp_roce_listen(*hs.t, kCmPort)) throw std::runtime_error("cannot listen");
  }

  // Connection setup, one QP per flow, one after the other before the first arrival: the
  // passive side accepts in the delivery hook.
  std::vector<std::unique_ptr<host::QueuePair>> accepted;
  bool setup = true;
  std::vector<FlowState> state(r.flows.size());
  std::vector<int> ready;  // flows whose QP reported completions
  std::size_t finished = 0;
  // However this function ends, nothing the loop may still run refers to its locals.
  struct Detach {
    Network& net;
    ~Detach() {
      net.set_delivery_hook({});
      net.clear_events();
    }
  } detach{net};
  net.set_delivery_hook([&](int node) {
    if (setup) {
      auto it = hosts.find(node);
      if (it == hosts.end()) return;
      while (auto req = host::udp_roce_next_request(*it->second.t, std::chrono::nanoseconds(0))) {
        std::error_code ec;
        std::string detail;
        auto qp = host::udp_roce_accept(*it->second.t, req->id, host::AcceptParams{}, ec, &detail);
        if (!qp) throw std::runtime_error("accept failed: " + detail);
        accepted.push_back(std::move(qp));
      }
      it->second.t->progress(std::chrono::seconds(10));  // its REP timer: learn the wake-up
      return;
    }
    while (!ready.empty()) {
      const int id = ready.back();
      ready.pop_back();
      FlowState& fs = state[static_cast<std::size_t>(id)];
      FlowRecord& fr = r.flows[static_cast<std::size_t>(id)];
      std::array<host::WorkCompletion, 16> wc;
      for (;;) {
        const std::size_t n = fs.qp->poll_cq(wc);
        for (std::size_t i = 0; i < n; ++i) {
          if (wc[i].status && !fr.failed) {
            fr.failed = true;
            fr.error = wc[i].status.message();
            fr.failed_at = net.now();
          }
          ++fs.completed;
        }
        if (n < wc.size()) break;
      }
      if (fr.end < 0 && fs.completed == fs.wrs) {
        fr.end = net.now();
        ++finished;
      }
    }
  });
  for (std::size_t i = 0; i < r.flows.size(); ++i) {
    const FlowRecord& f = r.flows[i];
    host::ConnectParams p;
    p.remote_ip = net.topology().nodes[static_cast<std::size_t>(f.dst)].ip;
    p.cm_port = kCmPort;
    p.path_mtu = cfg.mtu;
    p.local_ack_timeout = node_irn(net, cfg, f.src) ? cfg.rto_exponent : cfg.gbn_rto_exponent;
    p.retry_count = cfg.retry_count;
    std::error_code ec;
    std::string detail;
    state[i].qp = hosts.at(f.src).t->connect(p, ec, &detail);
    if (!state[i].qp)
      throw std::runtime_error("flow " + std::to_string(i) + ": connect: " + detail);
    const int id = static_cast<int>(i);
    state[i].qp->set_completion_callback([&ready, id] { ready.push_back(id); });
  }
  setup = false;
  // Let the last handshakes' RTUs settle, then start the arrivals.
  net.run_until(net.now() + 50 * kPsPerUs, {});
  r.setup_ps = static_cast<std::uint64_t>(net.now());
  const Ps base = net.now() + static_cast<Ps>(cfg.start_us * kPsPerUs);
  for (std::size_t i = 0; i < r.flows.size(); ++i) {
    FlowRecord& f = r.flows[i];
    f.start += base;
    net.schedule(f.start, [&, i] {
      FlowRecord& fr = r.flows[i];
      FlowState& fs = state[i];
      HostState& src = hosts.at(fr.src);
      const HostState& dst = hosts.at(fr.dst);
      std::uint64_t left = fr.bytes;
      std::uint64_t wr_id = 0;
      while (left > 0) {
        const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, buf));
        host::SendWr wr;
        wr.wr_id = wr_id++;
        wr.opcode = host::WrOpcode::rdma_write;
        wr.sge = {reinterpret_cast<std::uint64_t>(src.src.data()), len, src.src_mr.lkey};
        wr.remote_addr = reinterpret_cast<std::uint64_t>(dst.dst.data());
        wr.rkey = dst.dst_mr.rkey;
        if (const std::error_code ec = fs.qp->post_send(wr)) {
          fr.failed = true;
          fr.error = "post_send: " + ec.message();
          fr.failed_at = net.now();
          break;
        }
        ++fs.wrs;
        left -= len;
      }
      // Post_send hands the first window to the NIC; learn the endpoint's timers.
      src.t->progress(std::chrono::seconds(10));
    });
  }
  run_naa_calls(net, cfg, r, base, [&](int node) { return hosts.at(node).t; });
  const std::size_t total = r.flows.size();
  net.run_until(std::numeric_limits<Ps>::max() / 2, [&] { return finished == total; });
  r.end = net.now();
  r.all_finished = finished == total;
  for (const FlowRecord& f : r.flows)
    r.all_finished = r.all_finished && !f.failed;
  for (const NaaCallRecord& c : r.naa_calls)
    r.all_finished = r.all_finished && c.verified;
  for (auto& [node, hs] : hosts) {
    const host::TransportStats s = hs.t->stats();
    r.retransmitted += s.retransmitted_packets;
    r.timeouts += s.timeouts;
  }
  net.set_delivery_hook({});
  // QPs close before the endpoints (destroying a QP disconnects: its DREQ goes nowhere now).
  state.clear();
  accepted.clear();
  return r;
}

Summary summarize(const WorkloadResult& r) {
  Summary s;
  s.flows = r.flows.size();
  std::vector<double> fct, slow;
  for (const FlowRecord& f : r.flows) {
    if (f.end < 0 || f.failed) continue;
    const double ns = static_cast<double>(f.end - f.start) / kPsPerNs;
    fct.push_back(ns);
    slow.push_back(ns / f.ideal_ns);
  }
  s.finished = fct.size();
  if (fct.empty()) return s;
  auto avg = [](const std::vector<double>& v) {
    double a = 0;
    for (double x : v)
      a += x;
    return a / static_cast<double>(v.size());
  };
  auto p99 = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto k = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1;
    return v[std::min(k, v.size() - 1)];
  };
  s.avg_fct_ns = avg(fct);
  s.p99_fct_ns = p99(fct);
  s.avg_slowdown = avg(slow);
  s.p99_slowdown = p99(slow);
  return s;
}

void write_results(const std::string& dir, const Network& net, const WorkloadResult& r,
                   const RunLabels& labels) {
  const auto& nodes = net.topology().nodes;
  auto open = [&](const std::string& name) {
    std::ofstream o(dir + "/" + name);
    if (!o) throw std::runtime_error("cannot write " + dir + "/" + name);
    return o;
  };
  {
    std::ofstream o = open("fct.csv");
    o << "id,src,dst,bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,transport,pfc,dcqcn\n";
    char line[512];
    for (const FlowRecord& f : r.flows) {
      const bool done = f.end >= 0 && !f.failed;
      const double fct = done ? static_cast<double>(f.end - f.start) / kPsPerNs : -1;
      std::snprintf(line, sizeof line, "%d,%s,%s,%llu,%.3f,%.3f,%.3f,%.4f,%s,%d,%d\n", f.id,
                    nodes[static_cast<std::size_t>(f.src)].name.c_str(),
                    nodes[static_cast<std::size_t>(f.dst)].name.c_str(),
                    static_cast<unsigned long long>(f.bytes),
                    static_cast<double>(f.start) / kPsPerNs, fct, f.ideal_ns,
                    done ? fct / f.ideal_ns : -1.0, f.irn ? "irn" : "gbn", labels.pfc ? 1 : 0,
                    labels.dcqcn ? 1 : 0);
      o << line;
    }
  }
  {
    const Summary s = summarize(r);
    const NetworkStats& ns = net.stats();
    std::ofstream o = open("summary.csv");
    o << "workload,transport,pfc,dcqcn,flows,finished,avg_fct_ns,p99_fct_ns,avg_slowdown,"
         "p99_slowdown,drops,pauses,retransmitted,timeouts,ecn_marks,cnps,packet_hops,"
         "sim_end_ns,xoff_us,pauses_to_hosts\n";
    char line[512];
    std::snprintf(
        line, sizeof line,
        "%s,%s,%d,%d,%zu,%zu,%.1f,%.1f,%.4f,%.4f,%llu,%llu,%llu,%llu,"
        "%llu,%llu,%llu,%.1f,%.1f,%llu\n",
        labels.workload.c_str(), labels.transport.c_str(), labels.pfc ? 1 : 0, labels.dcqcn ? 1 : 0,
        s.flows, s.finished, s.avg_fct_ns, s.p99_fct_ns, s.avg_slowdown, s.p99_slowdown,
        static_cast<unsigned long long>(ns.drops), static_cast<unsigned long long>(ns.pause_frames),
        static_cast<unsigned long long>(r.retransmitted),
        static_cast<unsigned long long>(r.timeouts), static_cast<unsigned long long>(ns.ecn_marks),
        static_cast<unsigned long long>(ns.cnps_sent),
        static_cast<unsigned long long>(ns.frames_sent), static_cast<double>(r.end) / kPsPerNs,
        static_cast<double>(ns.xoff_ns) / 1000,
        static_cast<unsigned long long>(ns.pauses_to_hosts));
    o << line;
  }
  if (!r.naa_calls.empty()) {
    std::ofstream o = open("naa_calls.csv");
    o << "id,client,naa,bytes,start_ns,call_ns,return_code,verified\n";
    for (const NaaCallRecord& c : r.naa_calls)
      o << c.id << ',' << nodes[static_cast<std::size_t>(c.client)].name << ','
        << nodes[static_cast<std::size_t>(c.naa)].name << ',' << c.bytes << ','
        << c.start / kPsPerNs << ',' << (c.end - c.start) / kPsPerNs << ',' << c.return_code << ','
        << (c.verified ? 1 : 0) << '\n';
  }
  {
    std::ofstream o = open("queues.csv");
    o << "t_ns,switch,buffer_bytes,max_queue_bytes\n";
    for (const QueueSample& q : net.queue_samples())
      o << q.t / kPsPerNs << ',' << nodes[static_cast<std::size_t>(q.node)].name << ','
        << q.buffer_bytes << ',' << q.max_queue_bytes << '\n';
  }
}

}  // namespace naa::fabric
