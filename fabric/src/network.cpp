// The event loop, links and switches of the fabric (network.hpp, docs/fabric.md).
#include <algorithm>
#include <deque>
#include <stdexcept>

#include "naa/sim/link_model.hpp"
#include "network_impl.hpp"

namespace naa::fabric {

namespace {
// The heap's order as a function object, so that std::push_heap/pop_heap inline it.
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.t != b.t ? a.t > b.t : a.seq > b.seq;
  }
};
constexpr Later later{};
}  // namespace

std::uint32_t Frame::compute_wire_bytes() const {
  // PFC: a minimum frame (64 bytes with FCS) + preamble/SFD and gap; RoCE: sim/link_model.hpp.
  if (type == Type::pfc) return sim::kEthernetMinFrameBytes + 20;
  return static_cast<std::uint32_t>(sim::ethernet_wire_bytes(datagram.size()));
}

Network::Impl::Impl(const Topology& t, const NetworkConfig& c) : topo(t), cfg(c), rng(c.seed) {
  topo.switches.pfc.enabled = cfg.pfc;
  std::map<std::string, int> index;
  nodes.resize(topo.nodes.size());
  for (std::size_t i = 0; i < topo.nodes.size(); ++i) {
    index[topo.nodes[i].name] = static_cast<int>(i);
    nodes[i].index = static_cast<int>(i);
    nodes[i].salt = cfg.seed * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL;
    if (topo.nodes[i].kind != NodeKind::switch_) {
      endpoint_of[topo.nodes[i].ip] = static_cast<int>(endpoints.size());
      endpoints.push_back(static_cast<int>(i));
      nodes[i].nic = std::make_unique<Nic>();
    }
  }
  for (const LinkSpec& l : topo.links) {
    const int a = index.at(l.a), b = index.at(l.b);
    const int pa = static_cast<int>(ports.size());
    for (int end = 0; end < 2; ++end) {
      Port p;
      p.node = end == 0 ? a : b;
      p.peer = end == 0 ? pa + 1 : pa;
      p.gbps = l.gbps;
      p.latency = static_cast<Ps>(l.latency_ns * kPsPerNs + 0.5);
      nodes[static_cast<std::size_t>(p.node)].ports.push_back(static_cast<int>(ports.size()));
      ports.push_back(std::move(p));
    }
  }
  // Routing: hop distances from every endpoint (BFS), then per switch and destination the
  // neighbours one hop closer (equal-cost multipath).
  dist.assign(endpoints.size(), std::vector<int>(nodes.size(), -1));
  for (std::size_t e = 0; e < endpoints.size(); ++e) {
    std::deque<int> q{endpoints[e]};
    dist[e][static_cast<std::size_t>(endpoints[e])] = 0;
    while (!q.empty()) {
      const int n = q.front();
      q.pop_front();
      // Paths go through switches only: an endpoint forwards nothing.
      if (n != endpoints[e] && topo.nodes[static_cast<std::size_t>(n)].kind != NodeKind::switch_)
        continue;
      for (int p : nodes[static_cast<std::size_t>(n)].ports) {
        const int m = ports[static_cast<std::size_t>(ports[static_cast<std::size_t>(p)].peer)].node;
        if (dist[e][static_cast<std::size_t>(m)] < 0) {
          dist[e][static_cast<std::size_t>(m)] = dist[e][static_cast<std::size_t>(n)] + 1;
          q.push_back(m);
        }
      }
    }
  }
  for (NodeState& n : nodes) {
    if (topo.nodes[static_cast<std::size_t>(n.index)].kind != NodeKind::switch_) continue;
    n.routes.resize(endpoints.size());
    for (std::size_t e = 0; e < endpoints.size(); ++e) {
      const int d = dist[e][static_cast<std::size_t>(n.index)];
      if (d < 0) continue;
      for (int p : n.ports) {
        const int m = ports[static_cast<std::size_t>(ports[static_cast<std::size_t>(p)].peer)].node;
        if (dist[e][static_cast<std::size_t>(m)] == d - 1) n.routes[e].push_back(p);
      }
    }
  }
  // Buffers and PFC thresholds (topology.hpp SwitchConfig, PfcConfig).
  const SwitchConfig& sc = topo.switches;
  constexpr std::uint64_t kMaxFrame = 1100;  // a 1 KB-MTU RoCE frame on the wire, about
  for (NodeState& n : nodes) {
    n.buffer_limit = sc.buffer_bytes != 0 ? sc.buffer_bytes : sc.port_buffer_bytes * n.ports.size();
    for (int pi : n.ports) {
      Port& p = ports[static_cast<std::size_t>(pi)];
      const auto in_flight = static_cast<std::uint64_t>(
          2 * p.gbps / 8 * static_cast<double>(p.latency) / kPsPerNs + 3 * kMaxFrame);
      p.xoff_bytes = sc.pfc.xoff_bytes != 0
                         ? sc.pfc.xoff_bytes
                         : (sc.port_buffer_bytes > in_flight ? sc.port_buffer_bytes - in_flight
                                                             : sc.port_buffer_bytes / 2);
      p.xon_bytes = sc.pfc.xon_bytes != 0
                        ? sc.pfc.xon_bytes
                        : (p.xoff_bytes > 2 * kMaxFrame ? p.xoff_bytes - 2 * kMaxFrame : 0);
    }
  }
  if (!cfg.pcap_dir.empty()) {
    for (std::size_t i = 0; i < ports.size(); ++i) {
      const NodeState& n = nodes[static_cast<std::size_t>(ports[i].node)];
      const auto k =
          std::find(n.ports.begin(), n.ports.end(), static_cast<int>(i)) - n.ports.begin();
      const std::string path = cfg.pcap_dir + "/" +
                               topo.nodes[static_cast<std::size_t>(n.index)].name + "-p" +
                               std::to_string(k) + ".pcap";
      ports[i].pcap = std::make_unique<protocol::PcapWriter>();
      if (const auto ec = ports[i].pcap->open(path))
        throw std::runtime_error("cannot open " + path + ": " + ec.message());
    }
  }
  if (cfg.queue_sample_ps > 0) schedule(cfg.queue_sample_ps, [this] { sample_queues(); });
  create_naas();
}

EventBody& Network::Impl::schedule_body(Ps at) {
  std::uint32_t b = 0;
  if (free_bodies.empty()) {
    b = static_cast<std::uint32_t>(bodies.size());
    bodies.emplace_back();
  } else {
    b = free_bodies.back();
    free_bodies.pop_back();
  }
  heap.push_back(Event{std::max(at, now), seq++, b});
  std::push_heap(heap.begin(), heap.end(), later);
  return bodies[b];
}

void Network::Impl::schedule(Ps at, std::function<void()> fn) {
  EventBody& e = schedule_body(at);
  e.kind = EventBody::Kind::call;
  e.fn = std::move(fn);
}

void Network::Impl::dispatch(EventBody& body) {
  switch (body.kind) {
    case EventBody::Kind::call:
      body.fn();
      break;
    case EventBody::Kind::transmit_attempt: {
      Port& p = ports[static_cast<std::size_t>(body.port)];
      if (p.tx_at != body.at) return;  // superseded by an earlier attempt (arm_tx)
      p.tx_at = -1;
      try_send(body.port);
      break;
    }
    case EventBody::Kind::arrival:
      arrive(body.port, std::move(body.frame));
      break;
  }
}

bool Network::Impl::run(Ps until, const std::function<bool()>& done) {
  ++depth;
  bool stopped = false;
  for (;;) {
    if (!naa_nodes.empty()) {
      // The models run up to the next event (or `until`); one that sends (or arms a timer)
      // stops them there, and what it did may make an earlier event than the one waited for.
      // Events run only once the models have reached their time.
      const Ps next = heap.empty() ? until : std::min(heap.front().t, until);
      advance_naas(next);
      if (done && done()) {
        stopped = true;
        break;
      }
      if (now < next) continue;
    }
    if (heap.empty() || heap.front().t > until) break;
    std::pop_heap(heap.begin(), heap.end(), later);
    const Event ev = heap.back();
    heap.pop_back();
    now = ev.t;
    // Out of the slab before it runs: what it schedules may reuse the slot.
    EventBody body = std::move(bodies[ev.body]);
    free_bodies.push_back(ev.body);
    dispatch(body);
    if (done && done()) {
      stopped = true;
      break;
    }
  }
  if (!stopped && until > now) now = until;
  --depth;
  return stopped;
}

// ---- Links -----------------------------------------------------------------------------------

void Network::Impl::kick(int port) {
  const Port& p = ports[static_cast<std::size_t>(port)];
  arm_tx(port, std::max(now, p.busy_until));
}

void Network::Impl::arm_tx(int port, Ps at) {
  // One transmit attempt pending per port, the earliest wanted; a later-superseded one finds
  // tx_at changed and does nothing.
  Port& p = ports[static_cast<std::size_t>(port)];
  if (p.tx_at >= 0 && p.tx_at <= at) return;
  p.tx_at = at;
  EventBody& e = schedule_body(at);
  e.kind = EventBody::Kind::transmit_attempt;
  e.port = port;
  e.at = at;
}

void Network::Impl::try_send(int port) {
  Port& p = ports[static_cast<std::size_t>(port)];
  if (p.busy_until > now) {
    kick(port);
    return;
  }
  FramePtr f;
  Ps retry_at = -1;
  if (!p.control.empty()) {
    f = std::move(p.control.front());
    p.control.pop_front();
  } else if (nodes[static_cast<std::size_t>(p.node)].nic) {
    f = nic_next(port, retry_at);
  } else {
    for (int prio = kPriorities - 1; prio >= 0 && !f; --prio) {
      auto& q = p.queue[static_cast<std::size_t>(prio)];
      if (q.empty()) continue;
      if (p.paused_until[static_cast<std::size_t>(prio)] > now) {
        const Ps r = p.paused_until[static_cast<std::size_t>(prio)];
        retry_at = retry_at < 0 ? r : std::min(retry_at, r);
        continue;
      }
      f = std::move(q.front());
      q.pop_front();
      p.queue_bytes[static_cast<std::size_t>(prio)] -= f->wire_bytes();
      switch_dequeued(p.node, *f);
    }
  }
  if (!f) {
    // Paused or rate limited: try again when that ends (a resume or new frame kicks earlier).
    if (retry_at >= 0) arm_tx(port, retry_at);
    return;
  }
  transmit(port, std::move(f));
  kick(port);
}

void Network::Impl::transmit(int port, FramePtr f) {
  Port& p = ports[static_cast<std::size_t>(port)];
  const std::uint32_t wb = f->wire_bytes();
  const Ps end = now + p.serialisation(wb);
  p.busy_until = end;
  ++stats.frames_sent;
  stats.bytes_sent += wb;
  capture(port, *f);
  if (nodes[static_cast<std::size_t>(p.node)].nic && f->type == Frame::Type::roce)
    nic_sent(p.node, *f);
  // The frame arrives (last bit) one latency after it left.
  EventBody& e = schedule_body(end + p.latency);
  e.kind = EventBody::Kind::arrival;
  e.port = p.peer;
  e.frame = std::move(f);
}

void Network::Impl::arrive(int port, FramePtr f) {
  capture(port, *f);
  if (f->type == Frame::Type::pfc) {
    pfc_received(port, *f);
    return;
  }
  const int node = ports[static_cast<std::size_t>(port)].node;
  if (nodes[static_cast<std::size_t>(node)].nic) {
    nic_receive(node, std::move(f));
  } else {
    switch_receive(port, std::move(f));
  }
}

// ---- Switches --------------------------------------------------------------------------------

void Network::Impl::switch_receive(int in_port, FramePtr f) {
  const Port& in = ports[static_cast<std::size_t>(in_port)];
  NodeState& sw = nodes[static_cast<std::size_t>(in.node)];
  const SwitchConfig& sc = topo.switches;
  auto ep = endpoint_of.find(f->dst_ip);
  if (ep == endpoint_of.end() || sw.routes[static_cast<std::size_t>(ep->second)].empty()) {
    ++stats.unroutable;
    return;
  }
  const std::vector<int>& choices = sw.routes[static_cast<std::size_t>(ep->second)];
  // ECMP: the 5-tuple (the UDP source port carries the QP's entropy) hashed with a per-switch
  // salt, so that the tiers do not all pick the same index.
  const int out = choices[flow_hash(*f, sw.salt) % choices.size()];
  Port& eg = ports[static_cast<std::size_t>(out)];
  const std::uint32_t wb = f->wire_bytes();
  const std::size_t prio = f->priority;
  const std::uint64_t q = eg.queue_bytes[prio];
  // Admission as shared-buffer switches do it: lossy traffic by its egress queue (drop-tail at
  // port_buffer_bytes, so losses stay with the congested port), lossless traffic by its ingress
  // port (PFC's XOFF stops the sender; the headroom above it absorbs what is in flight when the
  // pause goes out); the shared buffer bounds both.
  Port& ing = ports[static_cast<std::size_t>(in_port)];
  const bool lossless = sc.pfc.enabled && prio == kDataPriority;
  const std::uint64_t free = sw.buffer_limit - sw.buffer_used;
  const std::uint64_t egress_limit =
      sc.dynamic_alpha > 0
          ? static_cast<std::uint64_t>(sc.dynamic_alpha * static_cast<double>(free))
          : sc.port_buffer_bytes;
  const bool lossy_full =
      !lossless && (sc.lossy_ingress ? ing.ingress_bytes[prio] + wb > sc.port_buffer_bytes
                                     : q + wb > egress_limit);
  if (sw.buffer_used + wb > sw.buffer_limit || lossy_full) {
    ++stats.drops;
    return;
  }
  // RED-style ECN on the egress queue, at enqueue (DCQCN's marking, topology.hpp EcnConfig).
  if (cfg.dcqcn && sc.ecn.enabled && f->ecn != kEcnNotEct && f->ecn != kEcnCe) {
    double pmark = 0;
    if (q >= sc.ecn.kmax_bytes) {
      pmark = 1;
    } else if (q > sc.ecn.kmin_bytes) {
      pmark = sc.ecn.pmax * static_cast<double>(q - sc.ecn.kmin_bytes) /
              static_cast<double>(sc.ecn.kmax_bytes - sc.ecn.kmin_bytes);
    }
    if (pmark > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < pmark) {
      f->ecn = kEcnCe;
      ++stats.ecn_marks;
    }
  }
  sw.buffer_used += wb;
  stats.max_buffer_bytes = std::max(stats.max_buffer_bytes, sw.buffer_used);
  f->ingress_port = in_port;
  ing.ingress_bytes[prio] += wb;
  if (lossless && !ing.xoff[prio] && ing.ingress_bytes[prio] >= ing.xoff_bytes) {
    ing.xoff[prio] = true;
    ing.xoff_since[prio] = now;
    if (nodes[static_cast<std::size_t>(ports[static_cast<std::size_t>(ing.peer)].node)].nic)
      ++stats.pauses_to_hosts;
    send_pfc(in_port, static_cast<std::uint8_t>(prio), true);
  }
  eg.queue_bytes[prio] += wb;
  eg.queue[prio].push_back(std::move(f));
  kick(out);
}

void Network::Impl::switch_dequeued(int node, const Frame& f) {
  NodeState& sw = nodes[static_cast<std::size_t>(node)];
  const std::uint32_t wb = f.wire_bytes();
  sw.buffer_used -= wb;
  Port& ing = ports[static_cast<std::size_t>(f.ingress_port)];
  const std::size_t prio = f.priority;
  ing.ingress_bytes[prio] -= wb;
  if (ing.xoff[prio] && ing.ingress_bytes[prio] <= ing.xon_bytes) {
    ing.xoff[prio] = false;
    stats.xoff_ns += static_cast<std::uint64_t>((now - ing.xoff_since[prio]) / kPsPerNs);
    send_pfc(f.ingress_port, static_cast<std::uint8_t>(prio), false);
  }
}

void Network::Impl::send_pfc(int port, std::uint8_t prio, bool pause) {
  Port& p = ports[static_cast<std::size_t>(port)];
  p.control.push_back(make_pfc_frame(prio, pause ? kPauseQuanta : 0));
  if (pause) {
    ++stats.pause_frames;
    // A pause lasts 65535 quanta; while XOFF holds, refresh it at half that time.
    const std::uint32_t epoch = ++p.xoff_epoch[prio];
    const Ps quantum = static_cast<Ps>(512.0 * 1000.0 / p.gbps + 0.5);
    schedule(now + quantum * kPauseQuanta / 2, [this, port, prio, epoch] {
      Port& pp = ports[static_cast<std::size_t>(port)];
      if (pp.xoff[prio] && pp.xoff_epoch[prio] == epoch) send_pfc(port, prio, true);
    });
  } else {
    ++stats.resume_frames;
  }
  kick(port);
}

void Network::Impl::pfc_received(int port, const Frame& f) {
  Port& p = ports[static_cast<std::size_t>(port)];
  const Ps quantum = static_cast<Ps>(512.0 * 1000.0 / p.gbps + 0.5);
  for (std::size_t prio = 0; prio < kPriorities; ++prio) {
    if ((f.pfc_classes & (1U << prio)) == 0) continue;
    p.paused_until[prio] = now + quantum * f.pfc_quanta[prio];
  }
  kick(port);  // a resume (quanta 0) may release waiting frames at once
}

void Network::Impl::sample_queues() {
  for (const NodeState& n : nodes) {
    if (n.nic) continue;
    QueueSample s;
    s.t = now;
    s.node = n.index;
    s.buffer_bytes = n.buffer_used;
    for (int p : n.ports)
      for (std::uint64_t b : ports[static_cast<std::size_t>(p)].queue_bytes)
        s.max_queue_bytes = std::max(s.max_queue_bytes, b);
    samples.push_back(s);
  }
  schedule(now + cfg.queue_sample_ps, [this] { sample_queues(); });
}

// ---- Network ---------------------------------------------------------------------------------

Network::Network(const Topology& topo, const NetworkConfig& cfg)
    : impl_(std::make_unique<Impl>(topo, cfg)) {}

Network::~Network() = default;

const Topology& Network::topology() const {
  return impl_->topo;
}

int Network::node_index(const std::string& name) const {
  for (std::size_t i = 0; i < impl_->topo.nodes.size(); ++i)
    if (impl_->topo.nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<int> Network::nodes_of(NodeKind kind) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < impl_->topo.nodes.size(); ++i)
    if (impl_->topo.nodes[i].kind == kind) out.push_back(static_cast<int>(i));
  return out;
}

double Network::endpoint_gbps(int node) const {
  const NodeState& n = impl_->nodes.at(static_cast<std::size_t>(node));
  return impl_->ports[static_cast<std::size_t>(n.ports.at(0))].gbps;
}

int Network::hops(int from, int to) const {
  const int e = impl_->endpoint_of.at(impl_->topo.nodes.at(static_cast<std::size_t>(to)).ip);
  return impl_->dist[static_cast<std::size_t>(e)][static_cast<std::size_t>(from)];
}

double Network::path_latency_ns(int from, int to) const {
  // Every link of the fabric has its own latency; follow one shortest path.
  const int e = impl_->endpoint_of.at(impl_->topo.nodes.at(static_cast<std::size_t>(to)).ip);
  const auto& d = impl_->dist[static_cast<std::size_t>(e)];
  double ns = 0;
  int n = from;
  while (n != to) {
    int next = -1;
    for (int p : impl_->nodes[static_cast<std::size_t>(n)].ports) {
      const Port& port = impl_->ports[static_cast<std::size_t>(p)];
      const int m = impl_->ports[static_cast<std::size_t>(port.peer)].node;
      if (d[static_cast<std::size_t>(m)] == d[static_cast<std::size_t>(n)] - 1) {
        next = m;
        ns += static_cast<double>(port.latency) / kPsPerNs;
        break;
      }
    }
    if (next < 0) return -1;
    n = next;
  }
  return ns;
}

Ps Network::now() const {
  return impl_->now;
}

bool Network::run_until(Ps until, const std::function<bool()>& done) {
  return impl_->run(until, done);
}

void Network::schedule(Ps at, std::function<void()> fn) {
  impl_->schedule(at, std::move(fn));
}

void Network::set_delivery_hook(std::function<void(int)> hook) {
  impl_->delivery_hook = std::move(hook);
}

const NetworkStats& Network::stats() const {
  return impl_->stats;
}

const std::vector<QueueSample>& Network::queue_samples() const {
  return impl_->samples;
}

void Network::clear_events() {
  impl_->heap.clear();
  impl_->bodies.clear();
  impl_->free_bodies.clear();
  for (Port& p : impl_->ports)
    p.tx_at = -1;
  for (NodeState& n : impl_->nodes)
    if (n.nic) n.nic->wake_at = -1;
}

void Network::report_naas(std::ostream& os) const {
  impl_->report_naas(os);
}

const sim::Naa* Network::naa_model(int node) const {
  return impl_->naa_model(node);
}

void Network::close_pcaps() {
  for (Port& p : impl_->ports)
    if (p.pcap) p.pcap->close();
}

}  // namespace naa::fabric
