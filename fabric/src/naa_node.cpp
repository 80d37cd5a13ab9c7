// NAAs in the fabric (docs/fabric.md "NAAs in the fabric"): one NAA model (sim::Naa) per NAA node,
// each with its own SimConfig, MR table and kernels, all in the one SystemC kernel, whose time the
// event loop keeps equal to its own. The fabric drives a model only through NetPort's in-memory
// API (inject_at, set_tx_tap, set_local_ip) and PeerTimers, as cosim/ does (ADR 0004, 0005). The
// model's own link model is off (link_gbps 0): the fabric's link and NIC carry its frames.
#include <boost/asio/io_context.hpp>
#include <map>
#include <stdexcept>

#include "naa/sim/kernels.hpp"
#include "naa/sim/naa.hpp"
#include "naa/sim/net_port.hpp"
#include "network_impl.hpp"

namespace naa::fabric {

namespace {

sc_core::sc_time ps_time(Ps ps) {
  return sc_core::sc_time(static_cast<double>(ps), sc_core::SC_PS);
}

Ps sc_now_ps() {
  return static_cast<Ps>(sc_core::sc_time_stamp().value());
}

}  // namespace

class NaaEndpoint final : public EndpointNode, public sim::PeerTimers {
 public:
  NaaEndpoint(Network::Impl& net, int node, const sim::SimConfig& cfg)
      : net_(net), node_(node), cfg_(cfg), log_(sim::LogLevel::warn) {
    const NodeSpec& spec = net.topo.nodes[static_cast<std::size_t>(node)];
    naa_ = std::make_unique<sim::Naa>(("naa_" + spec.name).c_str(), cfg_, log_, *this, io_,
                                      sim::KernelRegistry::with_builtins());
    ip_ = spec.ip;
    naa_->net().set_local_ip(ip_);
    naa_->net().set_tx_tap([this](const sim::Packet& p, std::uint16_t src_port) {
      Out o;
      o.bytes.assign(p.data.begin(), p.data.begin() + static_cast<std::ptrdiff_t>(p.size));
      o.dst_ip = p.peer_ip;
      o.src_port = src_port;
      out_.push_back(std::move(o));
      sc_core::sc_pause();  // the fabric takes it at exactly this time
    });
  }
  void receive(const Frame& f) override {
    in_.push_back(In{f.datagram, f.src_ip, f.src_port});
    push();
  }
  void wake() override {}
  // The loop, outside sc_start: what the model sent goes to its NIC, what waits goes in.
  void exchange() {
    while (!out_.empty()) {
      Out o = std::move(out_.front());
      out_.pop_front();
      net_.nic_send(node_, o.bytes, ip_, o.src_port, o.dst_ip);
    }
    push();
  }
  void arm(sim::PeerTimerClient& client, std::uint32_t cookie, sc_core::sc_time after) override {
    const std::uint64_t gen = ++generation_;
    timers_[{&client, cookie}] = gen;
    const Ps at = sc_now_ps() + static_cast<Ps>(after.value());
    net_.schedule(at, [this, &client, cookie, gen] {
      auto it = timers_.find({&client, cookie});
      if (it == timers_.end() || it->second != gen) return;
      timers_.erase(it);
      client.on_peer_timer(cookie);
    });
    // Armed while sc_start runs towards a later stop: pause, so the loop sees the new event.
    if (net_.sc_running && at < net_.sc_stop) sc_core::sc_pause();
  }
  void cancel(sim::PeerTimerClient& client, std::uint32_t cookie) override {
    timers_.erase({&client, cookie});
  }
  void report(std::ostream& os) const { naa_->report(os); }
  [[nodiscard]] int node() const { return node_; }
  [[nodiscard]] const sim::Naa& model() const { return *naa_; }

 private:
  struct Out {
    std::vector<std::uint8_t> bytes;
    std::uint32_t dst_ip = 0;
    std::uint16_t src_port = 0;
  };
  struct In {
    std::vector<std::uint8_t> bytes;
    std::uint32_t src_ip = 0;
    std::uint16_t src_port = 0;
  };
  void push() {
    // NetPort's input is bounded: what does not fit waits, in order, for the model to free room.
    while (!in_.empty()) {
      const In& d = in_.front();
      if (!naa_->net().inject_at(d.bytes, d.src_ip, d.src_port, ip_, ps_time(sc_now_ps()))) return;
      in_.pop_front();
    }
  }
  Network::Impl& net_;
  int node_;
  sim::SimConfig cfg_;
  sim::Log log_;
  boost::asio::io_context io_;
  std::unique_ptr<sim::Naa> naa_;
  std::uint32_t ip_ = 0;
  std::deque<Out> out_;
  std::deque<In> in_;
  std::map<std::pair<sim::PeerTimerClient*, std::uint32_t>, std::uint64_t> timers_;
  std::uint64_t generation_ = 0;
};

void Network::Impl::create_naas() {
  for (NodeState& n : nodes) {
    if (topo.nodes[static_cast<std::size_t>(n.index)].kind != NodeKind::naa) continue;
    sim::SimConfig sc = cfg.naa;
    sc.seed = cfg.seed * 7919 + static_cast<std::uint64_t>(n.index);
    sc.link_gbps = 0;  // the fabric's link and NIC (above)
    sc.link_latency_ns = 0;
    sc.idle_timeout_ms = 0;
    if (const auto& irn = topo.nodes[static_cast<std::size_t>(n.index)].irn) sc.irn = *irn;
    auto ep = std::make_unique<NaaEndpoint>(*this, n.index, sc);
    naa_nodes.push_back(ep.get());
    n.nic->endpoint = std::move(ep);
  }
  if (naa_nodes.empty()) return;
  static bool elaborated = false;
  if (elaborated)
    throw std::runtime_error("one fabric with NAAs per process (SystemC elaborates once)");
  elaborated = true;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate, start the processes
  if (sc_now_ps() != now) throw std::logic_error("SystemC time is not the fabric's");
}

void Network::Impl::advance_naas(Ps target) {
  if (naa_nodes.empty()) return;
  const Ps t0 = sc_now_ps();
  if (target > t0) {
    sc_running = true;
    sc_stop = target;
    sc_core::sc_start(ps_time(target - t0), sc_core::SC_RUN_TO_TIME);
    sc_running = false;
  } else if (sc_core::sc_pending_activity_at_current_time()) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  }
  now = std::max(now, sc_now_ps());
  for (NaaEndpoint* e : naa_nodes)
    e->exchange();
}

void Network::Impl::report_naas(std::ostream& os) const {
  for (const NaaEndpoint* e : naa_nodes)
    e->report(os);
}

const sim::Naa* Network::Impl::naa_model(int node) const {
  for (const NaaEndpoint* e : naa_nodes) {
    if (e->node() == node) return &e->model();
  }
  return nullptr;
}

}  // namespace naa::fabric
