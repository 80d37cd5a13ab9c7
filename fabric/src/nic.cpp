// The NICs of the fabric's hosts and NAAs (network.hpp; docs/adr/0005-fabric.md "NIC
// behaviour"): what a RoCE NIC does below its transport and above the wire, so that it works the
// same for a host library endpoint and an NAA model without changing either:
// - a QP scheduler: round robin between the QPs (UDP source ports) with frames waiting;
// - PFC reaction: the data priority stops while the switch's pause holds;
// - DCQCN (Zhu et al. 2015): data leaves ECN-capable (ECT(0)); the notification point answers an
//   arrival marked CE with a CNP (at most one per QP per cnp_interval); the reaction point cuts
//   the QP's rate on a CNP and recovers it by fast recovery, additive and hyper increase on its
//   timer and byte counter (paper section 3.1, Fig. 6 state machine).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "endpoint_node.hpp"
#include "naa/protocol/headers.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/opcode.hpp"
#include "network_impl.hpp"

namespace naa::fabric {

namespace {

// BTH destination QPN: bytes 5..7 of the datagram (IBTA 9.2).
std::uint32_t bth_dest_qpn(const std::vector<std::uint8_t>& d) {
  if (d.size() < 12) return 0;
  return (std::uint32_t{d[5]} << 16) | (std::uint32_t{d[6]} << 8) | d[7];
}

// BTH PSN: bytes 9..11.
std::uint32_t bth_psn(const std::vector<std::uint8_t>& d) {
  if (d.size() < 12) return 0;
  return (std::uint32_t{d[9]} << 16) | (std::uint32_t{d[10]} << 8) | d[11];
}

}  // namespace

void Network::Impl::nic_send(int node, std::span<const std::uint8_t> datagram, std::uint32_t src_ip,
                             std::uint16_t src_port, std::uint32_t dst_ip) {
  NodeState& n = nodes[static_cast<std::size_t>(node)];
  Nic& nic = *n.nic;
  auto f = std::make_unique<Frame>();
  f->datagram.assign(datagram.begin(), datagram.end());
  f->src_ip = src_ip;
  f->dst_ip = dst_ip;
  f->src_port = src_port;
  f->priority = kDataPriority;
  f->ecn = cfg.dcqcn ? kEcnEct0 : kEcnNotEct;
  nic.peer_qpn[{dst_ip, src_port}] = bth_dest_qpn(f->datagram);
  if (!f->datagram.empty() && (f->datagram[0] == protocol::opcode::kAcknowledge ||
                               f->datagram[0] == protocol::opcode::kIrnAcknowledge)) {
    // An ACK is not ECN-capable unless asked (NetworkConfig::ecn_acks): a CE mark on it would
    // make the requester's NIC send a CNP to a QP whose ACKs no rate limiter paces.
    if (!cfg.ecn_acks) f->ecn = kEcnNotEct;
    // Acknowledgements (ACK, NAK, IRN SACK) leave ahead of the QPs' requests, as a NIC's
    // responder path does not queue behind its send queues; they keep their own order.
    nic.short_frames.push_back(std::move(f));
    kick(n.ports[0]);
    return;
  }
  NicFlow& fl = nic.flows[src_port];
  // A retransmission (a PSN not newer than one handed over before) leaves ahead of the QP's
  // first transmissions still waiting here, as a NIC's send engine resends the PSNs its
  // transport rewound to before it goes on with new ones. Queued behind the whole window at a
  // rate DCQCN has cut (0.1-0.3 Gb/s: 100 packets take 3-9 ms), it would wait longer than the
  // transport's retry budget (8 x RTO), because the endpoint's timer started when the packet
  // was handed over, not when it leaves (ADR 0005 "Consequences"); a web-search flow at paper
  // scale ran out of retries that way (docs/fabric.md "Nothing is lost").
  const std::uint32_t psn = bth_psn(f->datagram);
  const std::uint8_t op = f->datagram.empty() ? 0 : f->datagram[0];
  const bool retransmission = fl.sent_any && !protocol::psn_after(psn, fl.highest_psn);
  if (!retransmission) {
    fl.sent_any = true;
    fl.highest_psn = psn;
  }
  // Its copy still waiting here is sent once: a NIC that re-reads the WQE sends the packet once.
  // A waiting retransmission is replaced where it stands; a waiting first transmission leaves
  // its place for the retransmission's.
  // Only a retransmission can have one (a first transmission's PSN is new). The waiting
  // retransmissions are searched one by one (a few), the first transmissions, which wait in
  // PSN order, by bisection: a window without a cap (--gbn-window) queues thousands.
  bool replaced = false;
  const auto same = [&](const Frame& q) {
    return bth_psn(q.datagram) == psn && q.datagram[0] == op && q.dst_ip == dst_ip;
  };
  std::size_t found = fl.frames.size();
  if (retransmission) {
    for (std::size_t i = 0; i < fl.retransmits && found == fl.frames.size(); ++i)
      if (same(*fl.frames[i])) found = i;
    if (found == fl.frames.size() && fl.retransmits < fl.frames.size()) {
      const std::uint32_t base = bth_psn(fl.frames[fl.retransmits]->datagram);
      const auto first = fl.frames.begin() + static_cast<std::ptrdiff_t>(fl.retransmits);
      const auto it = std::lower_bound(first, fl.frames.end(), protocol::psn_diff(psn, base),
                                       [&](const FramePtr& q, std::uint32_t d) {
                                         return protocol::psn_diff(bth_psn(q->datagram), base) < d;
                                       });
      if (it != fl.frames.end() && same(**it))
        found = static_cast<std::size_t>(it - fl.frames.begin());
    }
  }
  if (found < fl.frames.size()) {
    ++stats.nic_superseded;
    if (found < fl.retransmits) {
      fl.frames[found] = std::move(f);
      replaced = true;
    } else {
      fl.frames.erase(fl.frames.begin() + static_cast<std::ptrdiff_t>(found));
    }
  }
  if (!replaced) {
    if (retransmission) {
      // Oldest PSN first among the waiting retransmissions, as the send engine resends from
      // the oldest loss: a packet lost again goes ahead of the window resent after it.
      std::size_t at = 0;
      while (at < fl.retransmits && !protocol::psn_after(bth_psn(fl.frames[at]->datagram), psn))
        ++at;
      fl.frames.insert(fl.frames.begin() + static_cast<std::ptrdiff_t>(at), std::move(f));
      ++fl.retransmits;
    } else {
      fl.frames.push_back(std::move(f));
    }
  }
  if (!fl.in_rr) {
    fl.in_rr = true;
    nic.rr.push_back(src_port);
  }
  kick(n.ports[0]);
}

FramePtr Network::Impl::nic_next(int port, Ps& retry_at) {
  Port& p = ports[static_cast<std::size_t>(port)];
  Nic& nic = *nodes[static_cast<std::size_t>(p.node)].nic;
  // CNPs first (their own priority, never paused).
  auto& cnps = p.queue[kCnpPriority];
  if (!cnps.empty()) {
    FramePtr f = std::move(cnps.front());
    cnps.pop_front();
    return f;
  }
  if (nic.rr.empty() && nic.short_frames.empty()) return nullptr;
  if (p.paused_until[kDataPriority] > now) {
    retry_at = p.paused_until[kDataPriority];
    return nullptr;
  }
  if (!nic.short_frames.empty()) {
    FramePtr f = std::move(nic.short_frames.front());
    nic.short_frames.pop_front();
    return f;
  }
  // Round robin over the QPs with frames; a rate-limited QP waits for its next slot.
  for (std::size_t tries = nic.rr.size(); tries > 0; --tries) {
    const std::uint16_t key = nic.rr.front();
    nic.rr.pop_front();
    NicFlow& fl = nic.flows[key];
    if (fl.limited) dcqcn_catch_up(fl, p.gbps);
    if (fl.limited && fl.next_allowed > now) {
      nic.rr.push_back(key);
      retry_at = retry_at < 0 ? fl.next_allowed : std::min(retry_at, fl.next_allowed);
      continue;
    }
    FramePtr f = std::move(fl.frames.front());
    fl.frames.pop_front();
    if (fl.retransmits > 0) --fl.retransmits;
    // The packet leaves for the wire now: a transport whose retransmit timer starts here (host
    // endpoints with wire timers) may arm it; its next wake-up is learned right after.
    if (nic.endpoint->on_wire(*f)) {
      const int node = p.node;
      schedule(now, [this, node] { wake(node); });
    }
    if (fl.frames.empty()) {
      fl.in_rr = false;
    } else {
      nic.rr.push_back(key);
    }
    return f;
  }
  return nullptr;
}

void Network::Impl::nic_sent(int node, const Frame& f) {
  if (!cfg.dcqcn || f.priority != kDataPriority) return;
  Nic& nic = *nodes[static_cast<std::size_t>(node)].nic;
  auto it = nic.flows.find(f.src_port);
  if (it == nic.flows.end() || !it->second.limited) return;
  NicFlow& fl = it->second;
  const double line =
      ports[static_cast<std::size_t>(nodes[static_cast<std::size_t>(node)].ports[0])].gbps;
  const std::uint32_t wb = f.wire_bytes();
  fl.next_allowed = now + static_cast<Ps>(static_cast<double>(wb) * 8000.0 / fl.rc + 0.5);
  fl.bytes_since_increase += wb;
  if (fl.bytes_since_increase >= cfg.dcqcn_params.byte_counter) {
    fl.bytes_since_increase = 0;
    ++fl.byte_steps;
    // The byte counter's increase event (same rules as the timer's).
    const DcqcnConfig& d = cfg.dcqcn_params;
    const int lo = std::min(fl.timer_steps, fl.byte_steps),
              hi = std::max(fl.timer_steps, fl.byte_steps);
    if (hi > d.fast_recovery_steps && lo > d.fast_recovery_steps) {
      fl.rt += d.rhai_gbps * (lo - d.fast_recovery_steps);
    } else if (hi > d.fast_recovery_steps) {
      fl.rt += d.rai_gbps;
    }
    fl.rt = std::min(fl.rt, line);
    fl.rc = std::min((fl.rt + fl.rc) / 2, line);
  }
}

// Applies the timer-driven DCQCN events due since the last look (lazily: the same result as a
// timer event every period, without one event per QP per period).
void Network::Impl::dcqcn_catch_up(NicFlow& fl, double line) {
  const DcqcnConfig& d = cfg.dcqcn_params;
  const Ps alpha_period = static_cast<Ps>(d.alpha_timer_us * kPsPerUs);
  const Ps inc_period = static_cast<Ps>(d.increase_timer_us * kPsPerUs);
  while (now - fl.last_alpha >= alpha_period) {
    fl.last_alpha += alpha_period;
    if (!fl.cnp_since_alpha) fl.alpha *= (1 - d.g);
    fl.cnp_since_alpha = false;
    if (fl.alpha < 1e-6) {
      fl.last_alpha = now;
      break;
    }
  }
  int steps = 0;
  while (now - fl.last_increase >= inc_period && fl.limited) {
    fl.last_increase += inc_period;
    ++fl.timer_steps;
    const int lo = std::min(fl.timer_steps, fl.byte_steps),
              hi = std::max(fl.timer_steps, fl.byte_steps);
    if (hi > d.fast_recovery_steps && lo > d.fast_recovery_steps) {
      fl.rt += d.rhai_gbps * (lo - d.fast_recovery_steps);  // hyper increase
    } else if (hi > d.fast_recovery_steps) {
      fl.rt += d.rai_gbps;  // additive increase
    }                       // else fast recovery: towards rt only
    fl.rt = std::min(fl.rt, line);
    fl.rc = std::min((fl.rt + fl.rc) / 2, line);
    if (fl.rc >= line * 0.999 || ++steps > 100000) {
      fl.limited = false;  // recovered: no limiter any more
      fl.rc = line;
      break;
    }
  }
}

void Network::Impl::dcqcn_cnp(Nic& nic, std::uint16_t flow_port, double line) {
  NicFlow& fl = nic.flows[flow_port];
  const DcqcnConfig& d = cfg.dcqcn_params;
  if (!fl.limited) {
    fl.limited = true;
    fl.rc = line;
    fl.rt = line;
    fl.alpha = 1;
    fl.last_alpha = now;
  } else {
    dcqcn_catch_up(fl, line);
  }
  // Rate cut (DCQCN Fig. 6): Rt = Rc, Rc = Rc (1 - alpha / 2), alpha = (1 - g) alpha + g.
  fl.rt = fl.rc;
  fl.rc = std::max(fl.rc * (1 - fl.alpha / 2), d.min_gbps);
  fl.alpha = (1 - d.g) * fl.alpha + d.g;
  fl.cnp_since_alpha = true;
  fl.last_increase = now;
  fl.timer_steps = 0;
  fl.byte_steps = 0;
  fl.bytes_since_increase = 0;
  fl.limited = true;
  ++stats.rate_cuts;
}

void Network::Impl::nic_receive(int node, FramePtr f) {
  NodeState& n = nodes[static_cast<std::size_t>(node)];
  Nic& nic = *n.nic;
  const std::uint32_t qpn = bth_dest_qpn(f->datagram);
  if (!f->datagram.empty() && f->datagram[0] == protocol::opcode::kCnp) {
    // Reaction point: the CNP names our QP; its packets leave from that QP's UDP source port.
    ++stats.cnps_received;
    if (cfg.dcqcn) {
      const double line = ports[static_cast<std::size_t>(n.ports[0])].gbps;
      dcqcn_cnp(nic, protocol::roce_udp_source_port(qpn), line);
    }
    return;  // the NIC consumes CNPs
  }
  const bool marked = f->ecn == kEcnCe;
  const std::uint32_t src_ip = f->src_ip;
  if (waiting_node == node) waiting_delivered = true;
  nic.endpoint->receive(*f);
  if (marked && cfg.dcqcn) {
    // Notification point: one CNP per (sender, QP) per interval, to the sender's QP (learned
    // from what our QP sends it: its acknowledgements).
    const Ps interval = static_cast<Ps>(cfg.dcqcn_params.cnp_interval_us * kPsPerUs);
    auto [it, fresh] = nic.last_cnp.try_emplace({src_ip, qpn}, now);
    const std::uint16_t our_port = protocol::roce_udp_source_port(qpn);
    auto peer = nic.peer_qpn.find({src_ip, our_port});
    if ((fresh || now - it->second >= interval) && peer != nic.peer_qpn.end()) {
      it->second = now;
      Port& p = ports[static_cast<std::size_t>(n.ports[0])];
      p.queue[kCnpPriority].push_back(
          make_cnp(topo.nodes[static_cast<std::size_t>(node)].ip, our_port, src_ip, peer->second));
      ++stats.cnps_sent;
      kick(n.ports[0]);
    }
  }
  if (delivery_hook) delivery_hook(node);
}

void Network::Impl::request_wake(int node, Ps at) {
  Nic& nic = *nodes[static_cast<std::size_t>(node)].nic;
  if (at <= now) return;                                // due now: the caller's progress runs it
  if (nic.wake_at >= now && nic.wake_at <= at) return;  // an earlier wake-up looks again
  nic.wake_at = at;
  schedule(at, [this, node, at] {
    Nic& n = *nodes[static_cast<std::size_t>(node)].nic;
    if (n.wake_at == at) n.wake_at = -1;
    wake(node);
  });
}

void Network::Impl::wake(int node) {
  nodes[static_cast<std::size_t>(node)].nic->endpoint->wake();
  if (delivery_hook) delivery_hook(node);
}

// ---- Host endpoints --------------------------------------------------------------------------

namespace {

using SteadyClock = std::chrono::steady_clock;

class HostEndpoint final : public EndpointNode,
                           public host::DatagramLink,
                           public host::EndpointClock {
 public:
  HostEndpoint(Network::Impl& net, int node) : net_(net), node_(node) {}
  void send(std::span<const std::uint8_t> datagram, std::uint32_t src_ip, std::uint16_t src_port,
            std::uint32_t dst_ip) override {
    net_.nic_send(node_, datagram, src_ip, src_port, dst_ip);
  }
  SteadyClock::time_point now() override {
    return SteadyClock::time_point(std::chrono::nanoseconds(net_.now / kPsPerNs));
  }
  void wait_until(SteadyClock::time_point until) override {
    const Ps at =
        std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count() *
        kPsPerNs;
    if (net_.depth > 0) {
      // Called from inside the event loop (a delivery or wake-up): time cannot pass here;
      // remember when the endpoint wants to run again.
      if (at <= net_.now) timers_due_ = true;
      net_.request_wake(node_, at);
      return;
    }
    // A blocking call at top level (connect, a call): the loop runs until its time or until a
    // datagram for it arrived.
    if (at <= net_.now) return;
    const int outer_waiting = net_.waiting_node;
    net_.waiting_node = node_;
    net_.waiting_delivered = false;
    net_.run(at, [this] { return net_.waiting_delivered; });
    net_.waiting_node = outer_waiting;
  }
  void receive(const Frame& f) override {
    if (auto t = transport_.lock())
      (void)host::deliver_udp_roce_datagram(*t, f.datagram, f.src_ip, f.src_port);
    learn_next_deadline();
  }
  void wake() override { learn_next_deadline(); }
  bool on_wire(const Frame& f) override {
    auto t = transport_.lock();
    return t && host::udp_roce_packet_on_wire(*t, f.datagram, f.dst_ip);
  }
  void attach(const std::shared_ptr<host::Transport>& t) { transport_ = t; }

 private:
  // progress() with a long timeout waits until the endpoint's next timer: inside the loop that
  // records the wake-up (wait_until above) and runs what is due now. progress() asks for its
  // wake-up before it runs the timers that are due, so a timer that fired and re-armed itself
  // (a retransmit timeout) is learned by asking again; without that, a QP whose resent packets
  // were all lost slept until the 10 s fallback below (an incast's tail flows took 10 s).
  void learn_next_deadline() {
    auto t = transport_.lock();
    if (!t) return;
    for (int i = 0; i < 16; ++i) {
      timers_due_ = false;
      t->progress(std::chrono::seconds(10));
      if (!timers_due_) break;
    }
  }
  bool timers_due_ = false;  // progress() waited for a time already reached: timers ran
  Network::Impl& net_;
  int node_;
  std::weak_ptr<host::Transport> transport_;
};

}  // namespace

std::shared_ptr<host::Transport> Network::open_host(int node, host::UdpRoceOptions options) {
  NodeState& n = impl_->nodes.at(static_cast<std::size_t>(node));
  if (impl_->topo.nodes[static_cast<std::size_t>(node)].kind != NodeKind::host)
    throw std::runtime_error("node " + impl_->topo.nodes[static_cast<std::size_t>(node)].name +
                             " is not a host");
  if (n.nic->endpoint) throw std::runtime_error("host endpoint opened twice");
  auto ep = std::make_unique<HostEndpoint>(*impl_, node);
  options.local_ip = impl_->topo.nodes[static_cast<std::size_t>(node)].ip;
  options.progress = host::Progress::manual;
  options.link = std::shared_ptr<host::DatagramLink>(std::shared_ptr<void>(), ep.get());
  options.clock = std::shared_ptr<host::EndpointClock>(std::shared_ptr<void>(), ep.get());
  std::error_code ec;
  std::string detail;
  auto t = host::open_udp_roce(options, ec, &detail);
  if (!t) throw std::runtime_error("cannot open the host endpoint: " + detail);
  ep->attach(t);
  n.nic->endpoint = std::move(ep);
  return t;
}

}  // namespace naa::fabric
