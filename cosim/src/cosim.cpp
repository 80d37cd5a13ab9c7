#include "naa/cosim/cosim.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <ostream>
#include <stdexcept>

#include "naa/sim/kernels.hpp"
#include "naa/sim/naa.hpp"
#include "naa/sim/net_port.hpp"

namespace naa::cosim {

using sc_core::sc_time;
using SteadyClock = std::chrono::steady_clock;

// The model and what it needs (a log, an io_context NetPort never uses: no socket is opened).
struct CosimModel {
  CosimModel(const sim::SimConfig& cfg, sim::PeerTimers& timers)
      : log(sim::LogLevel::warn),
        naa("naa", cfg, log, timers, io, sim::KernelRegistry::with_builtins()) {}
  sim::Log log;
  boost::asio::io_context io;
  sim::Naa naa;
};

namespace {

sc_time ns(double v) {
  return sc_time(v, sc_core::SC_NS);
}

}  // namespace

Cosim::Cosim(const CosimConfig& cfg) : cfg_(cfg) {
  model_ = std::make_unique<CosimModel>(cfg_.sim, *this);
  // The host's latencies as SystemC times, once (not per datagram: issue 31).
  host_rx_delay_ = ns(cfg_.host.nic_ns + cfg_.host.pcie_ns + cfg_.host.sw_rx_ns);
  host_sw_per_packet_ = ns(cfg_.host.sw_per_packet_ns);
  host_tx_delay_ = ns(cfg_.host.pcie_ns + cfg_.host.nic_ns);
  sim::NetPort& net = model_->naa.net();
  net.set_local_ip(cfg_.naa_ip);
  if (!cfg_.pcap_path.empty()) {
    if (const auto ec = net.open_pcap(cfg_.pcap_path)) {
      throw std::runtime_error("cannot open " + cfg_.pcap_path + ": " + ec.message());
    }
  }
  // What NetPort sends reaches the host library after the link (tx_arrival), the host NIC and
  // PCIe. sc_pause(): the host must see it at exactly that time, so the kernel stops there.
  net.set_tx_tap([this](const sim::Packet& p, std::uint16_t src_port) {
    InFlight f;
    f.at = model_->naa.net().tx_arrival() + host_rx_delay_;
    if (!spare_.empty()) {  // a buffer of a datagram already delivered: no allocation
      f.bytes = std::move(spare_.back());
      spare_.pop_back();
    }
    f.bytes.assign(p.data.begin(), p.data.begin() + static_cast<std::ptrdiff_t>(p.size));
    f.src_port = src_port;
    to_host_.push_back(std::move(f));
    sc_core::sc_pause();
  });
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate, start the processes
}

Cosim::~Cosim() {
  if (model_) model_->naa.net().close_pcap();
}

std::shared_ptr<host::Transport> Cosim::open_host(host::UdpRoceOptions options) {
  options.local_ip = cfg_.host_ip;
  options.progress = host::Progress::manual;
  // The endpoint keeps these; the co-simulation outlives it (aliasing pointers, no ownership).
  options.link = std::shared_ptr<host::DatagramLink>(std::shared_ptr<void>(), this);
  options.clock = std::shared_ptr<host::EndpointClock>(std::shared_ptr<void>(), this);
  std::error_code ec;
  std::string detail;
  auto t = host::open_udp_roce(options, ec, &detail);
  if (!t) throw std::runtime_error("cannot open the host endpoint: " + detail);
  host_ = t;
  return t;
}

double Cosim::now_ns() const {
  return sc_core::sc_time_stamp().to_seconds() * 1e9;
}

void Cosim::report(std::ostream& os) const {
  const double s = sc_core::sc_time_stamp().to_seconds();
  os << "sim.time_ns=" << static_cast<std::uint64_t>(s * 1e9 + 0.5) << '\n'
     << "sim.cycles=" << static_cast<std::uint64_t>(s * cfg_.sim.clock_mhz * 1e6 + 0.5) << '\n';
  model_->naa.report(os);
  model_->naa.report_activity(os, sc_start_calls_);
}

SteadyClock::time_point Cosim::now() {
  const auto ps = static_cast<std::int64_t>(sc_core::sc_time_stamp().value());
  return SteadyClock::time_point(std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<std::int64_t, std::pico>(ps)));
}

void Cosim::send(std::span<const std::uint8_t> datagram, std::uint32_t src_ip,
                 std::uint16_t src_port, std::uint32_t /*dst_ip*/) {
  // The host's software hands datagrams to its NIC one after another (sw_per_packet_ns each);
  // PCIe and the NIC add their latency before the frame meets the link.
  const sc_time now_t = sc_core::sc_time_stamp();
  host_tx_free_ = std::max(host_tx_free_, now_t) + host_sw_per_packet_;
  const sc_time handed_over = host_tx_free_ + host_tx_delay_;
  // Straight into NetPort when nothing waits before it (the usual case): no copy on the way.
  if (to_naa_.empty() &&
      model_->naa.net().inject_at(datagram, src_ip, src_port, cfg_.naa_ip, handed_over)) {
    return;
  }
  ToNaa d;
  d.handed_over = handed_over;
  d.bytes.assign(datagram.begin(), datagram.end());
  d.src_ip = src_ip;
  d.src_port = src_port;
  to_naa_.push_back(std::move(d));
  push_to_naa();
}

void Cosim::push_to_naa() {
  // NetPort's input FIFO and packet pool are bounded: what does not fit waits here (in order)
  // and goes in as the model frees room, still with its own hand-over time.
  while (!to_naa_.empty()) {
    const ToNaa& d = to_naa_.front();
    if (!model_->naa.net().inject_at(d.bytes, d.src_ip, d.src_port, cfg_.naa_ip, d.handed_over))
      return;
    to_naa_.pop_front();
  }
}

void Cosim::arm(sim::PeerTimerClient& client, std::uint32_t cookie, sc_time after) {
  cancel(client, cookie);
  const sc_time deadline = sc_core::sc_time_stamp() + after;
  timers_.push_back(Timer{&client, cookie, deadline});
  // Armed by the model while sc_start runs towards a later stop: pause, so wait_until() sees the
  // new deadline (otherwise a timer armed with nothing else happening, such as the NAA's
  // retransmit timer after a lost last packet, fires only at the host's next wake-up).
  if (running_ && deadline < run_stop_) sc_core::sc_pause();
}

void Cosim::cancel(sim::PeerTimerClient& client, std::uint32_t cookie) {
  std::erase_if(timers_, [&](const Timer& t) { return t.client == &client && t.cookie == cookie; });
}

bool Cosim::fire_due_timers() {
  const sc_time now_t = sc_core::sc_time_stamp();
  // Usually nothing is due: say so without building the list (this runs on every turn).
  if (std::none_of(timers_.begin(), timers_.end(),
                   [&](const Timer& t) { return t.deadline <= now_t; })) {
    return false;
  }
  std::vector<Timer> due;
  std::erase_if(timers_, [&](const Timer& t) {
    if (t.deadline > now_t) return false;
    due.push_back(t);
    return true;
  });
  for (const Timer& t : due)
    t.client->on_peer_timer(t.cookie);
  return !due.empty();
}

bool Cosim::deliver_due() {
  if (to_host_.empty() || to_host_.front().at > sc_core::sc_time_stamp()) return false;
  auto host = host_.lock();
  bool any = false;
  while (!to_host_.empty() && to_host_.front().at <= sc_core::sc_time_stamp()) {
    InFlight f = std::move(to_host_.front());
    to_host_.pop_front();
    if (host) (void)host::deliver_udp_roce_datagram(*host, f.bytes, cfg_.naa_ip, f.src_port);
    if (spare_.size() < kSpareBuffers) spare_.push_back(std::move(f.bytes));
    any = true;
  }
  return any;
}

void Cosim::wait_until(SteadyClock::time_point until_tp) {
  const auto until_ps = std::chrono::duration_cast<std::chrono::duration<std::int64_t, std::pico>>(
                            until_tp.time_since_epoch())
                            .count();
  // At a 1 ps resolution (the model's) the picoseconds are the time's value: the same sc_time as
  // the double constructor gives for an integer below 2^53, without its arithmetic (issue 31:
  // this runs several times per call).
  static const bool ps_resolution =
      sc_core::sc_get_time_resolution() == sc_time(1.0, sc_core::SC_PS);
  const std::int64_t clamped_ps = std::max<std::int64_t>(until_ps, 0);
  const sc_time until = ps_resolution && clamped_ps < (std::int64_t{1} << 53)
                            ? sc_time::from_value(static_cast<std::uint64_t>(clamped_ps))
                            : sc_time(static_cast<double>(clamped_ps), sc_core::SC_PS);
  for (;;) {
    push_to_naa();
    if (deliver_due()) return;
    (void)fire_due_timers();
    const sc_time now_t = sc_core::sc_time_stamp();
    sc_time stop = until;
    if (!to_host_.empty()) stop = std::min(stop, to_host_.front().at);
    for (const Timer& t : timers_)
      stop = std::min(stop, t.deadline);
    if (stop < now_t) stop = now_t;
    if (stop == now_t && !sc_core::sc_pending_activity_at_current_time()) {
      if (now_t >= until) return;
      if (!to_host_.empty() && to_host_.front().at <= now_t) continue;
      if (!timers_.empty()) continue;
    }
    // Runs the model to `stop` (or until NetPort sends something: sc_pause in the tap).
    running_ = true;
    run_stop_ = stop;
    ++sc_start_calls_;
    sc_core::sc_start(stop - now_t, sc_core::SC_RUN_TO_TIME);
    running_ = false;
  }
}

}  // namespace naa::cosim

namespace naa::cosim {

void apply_naaice_calibration(CosimConfig& cfg) {
  // docs/sim/calibration.md has the source of each value.
  cfg.sim.link_gbps = 100.0;
  cfg.sim.link_latency_ns = 300;
  cfg.host.pcie_ns = 500;
  cfg.host.nic_ns = 300;
  cfg.host.sw_per_packet_ns = 0;
  cfg.host.sw_rx_ns = 23'000;
  cfg.sim.width = 2048;
  cfg.sim.mem_width = 2048;
}

}  // namespace naa::cosim
