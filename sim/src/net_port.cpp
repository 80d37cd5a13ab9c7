#include "naa/sim/net_port.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <stdexcept>
#include <system_error>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"

#include "net_port_sockets.hpp"

namespace naa::sim {
namespace asio = boost::asio;

namespace {

// The receiver's check a corrupted datagram must fail (PROTOCOL.md 2): too short, or no IPv4 ID
// makes its ICRC verify.
bool icrc_rejects(const protocol::Ipv4UdpHeaders& h, std::span<const std::uint8_t> bytes) {
  return bytes.size() < protocol::kBthSize + protocol::kIcrcSize ||
         !protocol::recover_ipv4_id(h, bytes);
}

}  // namespace

NetPort::NetPort(sc_core::sc_module_name name, ModelContext& ctx, asio::io_context& io)
    : sc_module(name),
      ctx_(ctx),
      sockets_(std::make_unique<Sockets>(io)),
      rx_in_(kRxFifo, this, &NetPort::rx_service),
      tx_in_(64, this, &NetPort::tx_service),
      tx_wire_(kTxWireFrames),
      rx_meter_(ctx.cfg),
      tx_meter_(ctx.cfg),
      rx_fault_(ctx.cfg.fault_rx, impair::direction_seed(ctx.fault_seed, impair::Direction::rx)),
      tx_fault_(ctx.cfg.fault_tx, impair::direction_seed(ctx.fault_seed, impair::Direction::tx)),
      rx_link_(ctx.cfg.link_gbps,
               sc_core::sc_time(static_cast<double>(ctx.cfg.link_latency_ns), sc_core::SC_NS)),
      tx_link_(rx_link_) {
  SC_THREAD(rx_thread);
  SC_THREAD(tx_thread);
  SC_THREAD(tx_wire_thread);
}

NetPort::~NetPort() = default;
std::error_code NetPort::open_pcap(const std::string& path) {
  return pcap_.open(path);
}

void NetPort::close_pcap() {
  pcap_.flush();
  pcap_.close();
}
bool NetPort::inject(protocol::ByteView datagram, std::uint32_t peer_ip, std::uint16_t peer_port,
                     std::uint32_t local_ip) {
  if (rx_in_.full() || datagram.size() > kMaxDatagram) return false;
  Packet* p = ctx_.pool.try_get();
  if (p == nullptr) return false;
  if (!datagram.empty()) std::memcpy(p->data.data(), datagram.data(), datagram.size());
  p->size = datagram.size();
  p->peer_ip = peer_ip;
  p->peer_port = peer_port;
  p->local_ip = local_ip;
  p->ip_id = 0;
  stamp_arrival(*p);
  ++rx_datagrams_;
  rx_bytes_ += p->size;
  rx_admit(p);
  return true;
}

bool NetPort::inject_at(protocol::ByteView datagram, std::uint32_t peer_ip, std::uint16_t peer_port,
                        std::uint32_t local_ip, sc_core::sc_time handed_over) {
  if (rx_in_.full() || datagram.size() > kMaxDatagram) return false;
  Packet* p = ctx_.pool.try_get();
  if (p == nullptr) return false;
  if (!datagram.empty()) std::memcpy(p->data.data(), datagram.data(), datagram.size());
  p->size = datagram.size();
  p->peer_ip = peer_ip;
  p->peer_port = peer_port;
  p->local_ip = local_ip;
  p->ip_id = 0;
  stamp_arrival_at(*p, handed_over);
  ++rx_datagrams_;
  rx_bytes_ += p->size;
  rx_admit(p);
  return true;
}

void NetPort::stamp_arrival_at(Packet& p, sc_core::sc_time handed_over) {
  const sc_core::sc_time now = std::max(sim_now(), stamp_floor_);
  if (!rx_link_.enabled()) {
    p.arrival = handed_over > now ? handed_over : now;
    return;
  }
  p.arrival = rx_link_.send(std::max(now, handed_over), p.size).arrival;
}

void NetPort::stamp_arrival(Packet& p) {
  // Not before the runner's stamp floor: it may read datagrams before the simulation step that
  // first lets simulated time follow the wall time it waited (Runner::run).
  const sc_core::sc_time now = std::max(sim_now(), stamp_floor_);
  if (!rx_link_.enabled()) {
    p.arrival = now;
    return;
  }
  // In a stream the datagram follows the previous one on the wire even if the model has run a
  // little past the moment the wire freed (never past stream_horizon()): the time it was read in
  // wall time plays no part.
  p.arrival = rx_link_.send(now, p.size, rx_hold_ != StreamHold::none).arrival;
  if (p.arrival < now) ++rx_late_;  // the model ran past the horizon (a hold that timed out)
  rx_hold_ = stream_hold_after(p.bytes());
}

std::optional<sc_core::sc_time> NetPort::stream_horizon() const {
  if (rx_hold_ == StreamHold::none || !rx_link_.enabled()) return std::nullopt;
  return rx_link_.next_arrival_bound();
}

std::uint64_t NetPort::stream_hold_us() const {
  return rx_hold_ == StreamHold::between_messages
             ? std::min(ctx_.cfg.link_hold_us, kBetweenMessagesHoldUs)
             : ctx_.cfg.link_hold_us;
}

void NetPort::end_stream_hold() {
  if (rx_hold_ == StreamHold::none) return;
  if (rx_hold_ == StreamHold::in_message) ++stream_hold_timeouts_;
  rx_hold_ = StreamHold::none;
}

Packet* NetPort::copy_of(const Packet& p) {
  Packet* q = ctx_.pool.try_get();
  if (q == nullptr) return nullptr;
  std::memcpy(q->data.data(), p.data.data(), p.size);
  q->size = p.size;
  q->peer_ip = p.peer_ip;
  q->peer_port = p.peer_port;
  q->local_ip = p.local_ip;
  q->ip_id = p.ip_id;
  q->src_qpn = p.src_qpn;
  q->arrival = p.arrival;
  return q;
}

template <class Release>
void NetPort::wait_with_held(Channel<Packet*>& in, HeldQueue& held, Release release) {
  while (in.empty()) {
    if (held.empty()) {
      sc_core::wait(in.data_event());
      continue;
    }
    const sc_core::sc_time now = sim_now();
    // Fewer than reorder_delay datagrams came within the hold time: release it anyway.
    if (!held.release_first_due(now, release))
      sc_core::wait(held.next_deadline() - now, in.data_event());
  }
}

// The receive stage's time for a datagram, from when it takes it: the rest of its way over the
// link (it is there once its last bit has arrived), then the port stage (counted busy).
sc_core::sc_time NetPort::rx_service(void* self, const Packet& p, sc_core::sc_time start) {
  auto* port = static_cast<NetPort*>(self);
  const std::uint64_t stage = port->port_cycles(p);
  port->rx_meter_.account(stage);
  if (start == sc_core::SC_ZERO_TIME) start = sim_now();
  return (p.arrival > start ? p.arrival - start : sc_core::SC_ZERO_TIME) +
         port->rx_meter_.times(stage);
}

void NetPort::rx_admit(Packet* p) {
  // The port stage's work on a datagram without faults is to hand it to RxPipe (impair::pass
  // with an inactive injector and nothing held), so while the stage and RxPipe are idle the
  // datagram crosses it here, handed on at the time the stage would have (issue 31). Not behind
  // bulk datagrams: rx_thread reads the socket again after those (kRefillMinBytes).
  const sc_core::sc_time now = sim_now();
  if (!rx_fault_.active() && rx_held_.empty() && p->size < kRefillMinBytes && rx_in_.can_book()) {
    const sc_core::sc_time start = rx_in_.start_for(now);
    // The stage's time computed once: for the hand-over and for the booking (issue 31).
    const std::uint64_t stage = port_cycles(*p);
    // rx_service's time: the rest of the link, then the port stage.
    const sc_core::sc_time done = std::max(start, p->arrival) + rx_meter_.times(stage);
    if (to_rx->try_put_at(p, done)) {
      rx_meter_.account(stage);  // counted busy, as rx_service() would
      (void)rx_in_.book(now, start, done);
      return;
    }
  }
  (void)rx_in_.try_put(p);
}

bool NetPort::try_put_at(Packet* p, sc_core::sc_time ready) {
  if (tx_fault_.active() || !tx_held_.empty()) return false;
  // Without faults the port stage's work is tx_emit: with the wire idle too (nothing queued for
  // it), the datagram crosses the stage here and goes onto the wire at the time the stage would
  // have put it there; otherwise the stage's process takes it at `ready` (issue 31).
  if (tx_wire_.idle_now() && tx_in_.can_book_at(ready)) {
    // tx_service's time computed here, without the call through the stage's function pointer.
    const std::uint64_t stage = port_cycles(*p);
    tx_meter_.account(stage);  // counted busy, as tx_service() would
    const sc_core::sc_time start = tx_in_.start_for(ready);
    tx_emit(p, tx_in_.book(ready, start, start + tx_meter_.times(stage)));
    return true;
  }
  return tx_in_.try_put_at(p, ready);
}

sc_core::sc_time NetPort::tx_service(void* self, const Packet& p, sc_core::sc_time /*start*/) {
  auto* port = static_cast<NetPort*>(self);
  const std::uint64_t stage = port->port_cycles(p);
  port->tx_meter_.account(stage);
  return port->tx_meter_.times(stage);
}

void NetPort::rx_thread() {
  const sc_core::sc_time hold(kReorderHoldNs, sc_core::SC_NS);
  std::size_t last_size = 0;
  auto to_rx_pipe = [this](Packet* q) { to_rx->put(q); };
  // What naa::impair's pass() does with a received datagram's fate (docs/adr/0003).
  auto steps = impair::make_steps(
      /*discard=*/[this](Packet* q) { ctx_.pool.put(q); },
      /*deliver_copy=*/
      [this](Packet* q) {
        if (Packet* dup = copy_of(*q)) to_rx->put(dup);
      },
      /*corrupt=*/
      [this](Packet* q, std::uint64_t bit) {
        const auto h = protocol::make_roce_headers(q->peer_ip, q->peer_port, q->local_ip, q->size);
        rx_fault_.corrupt(q->data.data(), q->size, bit,
                          [&](std::span<const std::uint8_t> b) { return icrc_rejects(h, b); });
      },
      /*keep=*/[](Packet* q) { return q; },
      /*deliver=*/to_rx_pipe,
      /*release=*/to_rx_pipe);
  for (;;) {
    // While a stream comes in, refill from the socket whenever this FIFO runs dry, not only when
    // the whole model has starved: the next datagrams then enter a pipeline that is still busy,
    // as back-to-back frames on a wire would (docs/performance.md, simulated goodput).
    if (rx_in_.empty() && last_size >= kRefillMinBytes) (void)poll_receive(kRefillBudget);
    Packet* p = nullptr;
    if (rx_held_.empty()) {
      p = rx_in_.next();  // through the link and the port stage (rx_service)
    } else {
      // Datagrams held back by --fault-rx reorder: wake for their release time too.
      wait_with_held(rx_in_.fifo(), rx_held_, to_rx_pipe);
      p = rx_in_.serve(rx_in_.fifo().get());
    }
    last_size = p->size;
    impair::pass(rx_fault_, rx_held_, p, p->bytes(), sim_now() + hold, steps);
  }
}

void NetPort::tap_rx(const Packet& p) {
  if (!pcap_.is_open()) return;
  const auto h = protocol::make_roce_headers(p.peer_ip, p.peer_port, p.local_ip, p.size, p.ip_id);
  pcap_.write_roce(to_ns(p.arrival), h, p.bytes());
}

// One datagram onto the wire: socket, capture, tap. Returns true if the socket path kept the
// buffer (it goes back to the pool when flush_tx() has sent it).
bool NetPort::tx_send_once(Packet* p) {
  // TxPipe computed the ICRC for this source port; look it up again (it is cached).
  const std::uint16_t port = source_port(p->src_qpn);
  ++tx_datagrams_;
  tx_bytes_ += p->size;
  if (pcap_.is_open()) {
    const auto h = protocol::make_roce_headers(local_ip_, port, p->peer_ip, p->size);
    pcap_.write_roce(to_ns(sim_now()), h, p->bytes());
  }
  if (tx_tap_) tx_tap_(*p, port);
  if (sockets_->listen.is_open()) return queue_datagram(p, port);
  return false;
}

void NetPort::tx_emit(Packet* p, sc_core::sc_time at) {
  // Onto the wire behind the frames already queued (link model): the MAC holds a few frames
  // (kTxWireFrames); tx_wire_thread hands each on when its last bit has left.
  WireFrame f{p, at, at};
  if (tx_link_.enabled()) {
    const auto slot = tx_link_.send(at, p->size);
    f.end = slot.end;
    f.arrival = slot.arrival;
  }
  // Issue 31: with only the socket reading a frame at its end (no tap, no capture), a frame that
  // finds the wire idle goes to the socket side now, held there until simulated time reaches its
  // end (flush_tx), and the wire counts as busy until then: the wire's process is not woken. An
  // event without a process marks the end, so the runner's steps reach it as they did.
  if (wire_direct() && tx_wire_.try_book(f.end)) {
    ++tx_wire_direct_;
    if (const sc_core::sc_time now = sim_now(); f.end > now) {
      wire_hold_ = p;
      wire_hold_end_ = f.end;
      wire_end_.notify(f.end - now);
    }
    if (!tx_send_once(p)) ctx_.pool.put(p);
    return;
  }
  tx_wire_.put(f, f.end);
}

void NetPort::tx_wire_thread() {
  for (;;) {
    const WireFrame f = tx_wire_.next();  // once its last bit has left (f.end)
    tx_arrival_ = f.arrival;
    if (!tx_send_once(f.packet)) ctx_.pool.put(f.packet);
  }
}

void NetPort::tx_thread() {
  const sc_core::sc_time hold(kReorderHoldNs, sc_core::SC_NS);
  auto emit = [this](Packet* q) { tx_emit(q, sim_now()); };
  // What naa::impair's pass() does with a transmitted datagram's fate (docs/adr/0003).
  auto steps = impair::make_steps(
      /*discard=*/[this](Packet* q) { ctx_.pool.put(q); },
      /*deliver_copy=*/
      [this](Packet* q) {
        if (Packet* dup = copy_of(*q)) tx_emit(dup, sim_now());
      },
      /*corrupt=*/
      [this](Packet* q, std::uint64_t bit) {
        const auto h =
            protocol::make_roce_headers(local_ip_, source_port(q->src_qpn), q->peer_ip, q->size);
        tx_fault_.corrupt(q->data.data(), q->size, bit,
                          [&](std::span<const std::uint8_t> b) { return icrc_rejects(h, b); });
      },
      /*keep=*/[](Packet* q) { return q; },
      /*deliver=*/emit,
      /*release=*/emit);
  for (;;) {
    Packet* p = nullptr;
    if (tx_held_.empty()) {
      p = tx_in_.next();  // through the port stage (tx_service)
    } else {
      wait_with_held(tx_in_.fifo(), tx_held_, emit);  // --fault-tx reorder holds datagrams
      p = tx_in_.serve(tx_in_.fifo().get());
    }
    impair::pass(tx_fault_, tx_held_, p, p->bytes(), sim_now() + hold, steps);
  }
}

void NetPort::report(std::ostream& os) const {
  os << "net_port.rx_cycles=" << rx_meter_.busy_cycles() << '\n'
     << "net_port.tx_cycles=" << tx_meter_.busy_cycles() << '\n'
     << "net_port.rx_datagrams=" << rx_datagrams_ << '\n'
     << "net_port.rx_bytes=" << rx_bytes_ << '\n'
     << "net_port.tx_datagrams=" << tx_datagrams_ << '\n'
     << "net_port.tx_bytes=" << tx_bytes_ << '\n'
     << "net_port.rx_truncated=" << rx_truncated_ << '\n'
     << "net_port.rx_waited_for_buffer=" << rx_no_buffer_ << '\n'
     << "net_port.rx_socket_drops=" << rx_socket_drops_ << '\n'
     << "net_port.tx_errors=" << tx_errors_ << '\n'
     << "net_port.source_port_fallbacks=" << port_fallbacks_ << '\n'
     << "net_port.pcap_frames=" << pcap_.frames_written() << '\n'
     << "net_port.pcap_write_errors=" << pcap_.write_errors() << '\n'
     << "net_port.link_gbps=" << ctx_.cfg.link_gbps << '\n'
     << "net_port.link_latency_ns=" << ctx_.cfg.link_latency_ns << '\n'
     << "net_port.rx_wire_bytes=" << rx_link_.wire_bytes() << '\n'
     << "net_port.rx_link_busy_ns=" << to_ns(rx_link_.busy()) << '\n'
     << "net_port.tx_wire_bytes=" << tx_link_.wire_bytes() << '\n'
     << "net_port.tx_link_busy_ns=" << to_ns(tx_link_.busy()) << '\n'
     << "net_port.stream_hold_timeouts=" << stream_hold_timeouts_ << '\n'
     << "net_port.rx_late=" << rx_late_ << '\n'
     << "net_port.rx_recv_calls=" << rx_recv_calls_ << '\n'
     << "net_port.rx_recv_empty=" << rx_recv_empty_ << '\n'
     << "net_port.tx_send_calls=" << tx_send_calls_ << '\n';
  // Only once non-zero (naa::tools::sim_stat_sparse): the in-memory co-simulation has no socket,
  // and its statistics (the simulated-time digest) stay as they were.
  if (tx_gso_datagrams_ != 0) os << "net_port.tx_gso_datagrams=" << tx_gso_datagrams_ << '\n';
  if (tx_gso_refused_ != 0) os << "net_port.tx_gso_refused=" << tx_gso_refused_ << '\n';
  if (rx_gro_datagrams_ != 0) os << "net_port.rx_gro_datagrams=" << rx_gro_datagrams_ << '\n';
  if (tx_wire_direct_ != 0) os << "net_port.tx_wire_direct=" << tx_wire_direct_ << '\n';
  rx_fault_.report(os, "net_port.fault_rx.");
  tx_fault_.report(os, "net_port.fault_tx.");
}

}  // namespace naa::sim