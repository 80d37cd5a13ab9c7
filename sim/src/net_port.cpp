#include "naa/sim/net_port.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <stdexcept>
#include <system_error>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"

namespace naa::sim {
namespace asio = boost::asio;
using udp = asio::ip::udp;

struct NetPort::Sockets {
  explicit Sockets(asio::io_context& io_ctx) : io(io_ctx), listen(io_ctx) {}
  asio::io_context& io;
  udp::socket listen;
  // Per-QP send sockets by UDP source port; nullptr = bind failed, use the listening socket.
  std::map<std::uint16_t, std::unique_ptr<udp::socket>> senders;
};

namespace {

// PROTOCOL.md 1: unconnected + IP_PMTUDISC_DO makes Linux send IPv4 ID 0 with DF.
void set_roce_options(udp::socket& s) {
  const int fd = s.native_handle();
  int v = IP_PMTUDISC_DO;
  if (::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v) != 0) {
    throw std::system_error(errno, std::generic_category(), "setsockopt(IP_MTU_DISCOVER)");
  }
  int buf = 4 << 20;
  // Large buffers: a host streams a whole call before the model reads it. FORCE needs
  // CAP_NET_ADMIN; fall back to the capped variant.
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0) {
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  }
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf) != 0) {
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  }
}

// In-model socket refill (rx_thread): only behind datagrams of a bulk transfer, so that small
// calls never pay for the extra (usually empty) receive.
constexpr std::size_t kRefillMinBytes = 1024;
constexpr std::size_t kRefillBudget = 64;

std::uint64_t to_ns(const sc_core::sc_time& t) {
  return static_cast<std::uint64_t>(t.to_seconds() * 1e9 + 0.5);
}

// splitmix64: decorrelates the per-direction generators derived from one --seed.
std::uint64_t mix_seed(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A uniform draw in [0, 1) from 53 bits.
double unit(std::uint64_t r) {
  return static_cast<double>(r >> 11) * 0x1.0p-53;
}

}  // namespace

bool parse_fault_spec(std::string_view text, FaultSpec& out, std::string& error) {
  FaultSpec spec;
  if (text.empty() || text == "none") {
    out = spec;
    return true;
  }
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      error = "expected key=value, got '" + std::string(item) + "'";
      return false;
    }
    const std::string key(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    if (key == "reorder-delay") {
      unsigned v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc{} || end != value.data() + value.size() || v < 1 || v > 1024) {
        error = "reorder-delay must be 1..1024 datagrams, not '" + value + "'";
        return false;
      }
      spec.reorder_delay = v;
      continue;
    }
    char* end = nullptr;
    const double p = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(p >= 0.0 && p <= 1.0)) {
      error = "probability for " + key + " must be in [0, 1], not '" + value + "'";
      return false;
    }
    if (key == "loss") {
      spec.loss = p;
    } else if (key == "dup") {
      spec.dup = p;
    } else if (key == "reorder") {
      spec.reorder = p;
    } else if (key == "corrupt") {
      spec.corrupt = p;
    } else {
      error = "unknown fault '" + key + "' (loss, dup, reorder, reorder-delay, corrupt)";
      return false;
    }
  }
  out = spec;
  return true;
}

NetFault::NetFault(const FaultSpec& spec, std::uint64_t seed) : spec_(spec), rng_(seed) {}

NetFault::Decision NetFault::decide() {
  ++seen;
  const std::uint64_t r_loss = rng_(), r_dup = rng_(), r_reorder = rng_(), r_corrupt = rng_(),
                      r_bit = rng_();
  Decision d;
  d.drop = unit(r_loss) < spec_.loss;
  if (d.drop) {
    ++dropped;
    return d;
  }
  d.duplicate = unit(r_dup) < spec_.dup;
  d.reorder = unit(r_reorder) < spec_.reorder;
  d.corrupt = unit(r_corrupt) < spec_.corrupt;
  d.bit = r_bit;
  duplicated += d.duplicate ? 1U : 0U;
  reordered += d.reorder ? 1U : 0U;
  corrupted += d.corrupt ? 1U : 0U;
  return d;
}

void NetFault::corrupt(std::uint8_t* data, std::size_t size, const protocol::Ipv4UdpHeaders& h,
                       std::uint64_t bit) {
  if (size == 0) return;
  // A datagram corrupted upstream (by the peer's injector) already fails its ICRC: the receiver
  // drops it once, however many flips it carries, so count it for exact accounting.
  if (size < protocol::kBthSize + protocol::kIcrcSize ||
      !protocol::recover_ipv4_id(h, {data, size})) {
    ++already_bad;
  }
  const std::uint64_t bits = std::uint64_t{size} * 8;
  for (std::uint64_t attempt = 0; attempt < 16; ++attempt) {
    const std::uint64_t b = (bit + attempt * 0x9E3779B1U) % bits;
    data[b / 8] ^= static_cast<std::uint8_t>(1U << (b % 8));
    if (size < protocol::kBthSize + protocol::kIcrcSize ||
        !protocol::recover_ipv4_id(h, {data, size})) {
      return;
    }
    data[b / 8] ^= static_cast<std::uint8_t>(1U << (b % 8));  // undetectable: take another bit
    ++redrawn;
  }
}

void NetFault::report(std::ostream& os, std::string_view prefix) const {
  os << prefix << "datagrams=" << seen << '\n'
     << prefix << "loss=" << dropped << '\n'
     << prefix << "dup=" << duplicated << '\n'
     << prefix << "reorder=" << reordered << '\n'
     << prefix << "corrupt=" << corrupted << '\n'
     << prefix << "corrupt_redrawn=" << redrawn << '\n'
     << prefix << "corrupt_already_bad=" << already_bad << '\n';
}

NetPort::NetPort(sc_core::sc_module_name name, ModelContext& ctx, asio::io_context& io)
    : sc_module(name),
      ctx_(ctx),
      sockets_(std::make_unique<Sockets>(io)),
      rx_in_(4096),
      tx_in_(64),
      rx_meter_(ctx.cfg),
      tx_meter_(ctx.cfg),
      rx_fault_(ctx.cfg.fault_rx, mix_seed(ctx.fault_seed ^ 0x5258ULL)),
      tx_fault_(ctx.cfg.fault_tx, mix_seed(ctx.fault_seed ^ 0x5458ULL)) {
  SC_THREAD(rx_thread);
  SC_THREAD(tx_thread);
}

NetPort::~NetPort() = default;

void NetPort::open(std::uint32_t listen_ip) {
  local_ip_ = listen_ip;
  auto& s = sockets_->listen;
  s.open(udp::v4());
  set_roce_options(s);
  int on = 1;
  if (::setsockopt(s.native_handle(), IPPROTO_IP, IP_PKTINFO, &on, sizeof on) != 0) {
    throw std::system_error(errno, std::generic_category(), "setsockopt(IP_PKTINFO)");
  }
  // The kernel's count of datagrams dropped because the receive buffer was full (a loss the model
  // never sees; reported as net_port.rx_socket_drops).
  (void)::setsockopt(s.native_handle(), SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
  boost::system::error_code ec;
  s.bind(udp::endpoint(asio::ip::address_v4(listen_ip), protocol::kRoceUdpPort), ec);
  if (ec == boost::asio::error::address_in_use) {
    // Issue 12: name the usual culprits. Linux Soft-RoCE (rdma_rxe) binds 0.0.0.0:4791 in the
    // kernel as soon as an rxe device exists, which takes port 4791 on every address.
    char ip[16];
    protocol::format_ipv4(listen_ip, ip, sizeof ip);
    throw std::runtime_error(
        std::string("UDP ") + ip +
        ":4791 is already in use: another naa-sim on this address, or the kernel's Soft-RoCE "
        "module rdma_rxe, which binds 0.0.0.0:4791 (port 4791 on every address). Check with "
        "`ss -ulpn 'sport = :4791'` (a socket with no process is the kernel's) and "
        "`lsmod | grep rdma_rxe`; `rdma link delete rxe0` or `modprobe -r rdma_rxe` frees it, "
        "or run naa-sim in its own network namespace");
  }
  if (ec) throw boost::system::system_error(ec, "bind");
  s.non_blocking(true);
}

std::error_code NetPort::open_pcap(const std::string& path) {
  return pcap_.open(path);
}

void NetPort::close_pcap() {
  pcap_.flush();
  pcap_.close();
}

void NetPort::async_wait_readable(std::function<void()> handler) {
  sockets_->listen.async_wait(udp::socket::wait_read,
                              [h = std::move(handler)](const boost::system::error_code&) { h(); });
}

std::size_t NetPort::poll_receive(std::size_t budget) {
  const int fd = sockets_->listen.native_handle();
  std::size_t n = 0;
  while (n < budget) {
    if (rx_in_.full()) break;  // the port's input FIFO is full: leave the rest in the socket
    Packet* p = ctx_.pool.try_get();
    if (p == nullptr) {
      // No buffer: the datagram stays queued in the socket until the model frees one.
      ++rx_no_buffer_;
      break;
    }
    sockaddr_in from{};
    iovec iov{p->data.data(), p->data.size()};
    alignas(
        cmsghdr) char control[CMSG_SPACE(sizeof(in_pktinfo)) + CMSG_SPACE(sizeof(std::uint32_t))];
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t r = ::recvmsg(fd, &msg, MSG_DONTWAIT);
    if (r < 0) {
      ctx_.pool.unget(p);
      break;  // EAGAIN, or an error the next wait will show again
    }
    ++n;
    if ((msg.msg_flags & MSG_TRUNC) != 0) {
      ++rx_truncated_;
      protocol_errors->count_protocol_error(protocol::Error::too_long);
      ctx_.pool.put(p);
      continue;
    }
    p->size = static_cast<std::size_t>(r);
    p->peer_ip = ntohl(from.sin_addr.s_addr);
    p->peer_port = ntohs(from.sin_port);
    p->local_ip = local_ip_;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
        in_pktinfo info{};
        std::memcpy(&info, CMSG_DATA(c), sizeof info);
        p->local_ip = ntohl(info.ipi_addr.s_addr);
      } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
        std::uint32_t dropped = 0;
        std::memcpy(&dropped, CMSG_DATA(c), sizeof dropped);
        rx_socket_drops_ = dropped;  // cumulative since the socket opened
      }
    }
    p->arrival = sc_core::sc_time_stamp();
    ++rx_datagrams_;
    rx_bytes_ += p->size;
    (void)rx_in_.try_put(p);
  }
  return n;
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
  p->arrival = sc_core::sc_time_stamp();
  ++rx_datagrams_;
  rx_bytes_ += p->size;
  (void)rx_in_.try_put(p);
  return true;
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
void NetPort::wait_with_held(Channel<Packet*>& in, std::deque<Held>& held, Release release) {
  while (in.empty()) {
    if (held.empty()) {
      sc_core::wait(in.data_event());
      continue;
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (held.front().deadline > now) {
      sc_core::wait(held.front().deadline - now, in.data_event());
      continue;
    }
    // Fewer than reorder_delay datagrams came within the hold time: release it anyway.
    Packet* p = held.front().packet;
    held.pop_front();
    release(p);
  }
}

// Delivers p, then counts it against every held datagram; those overtaken often enough follow.
void NetPort::rx_forward(Packet* p) {
  to_rx->put(p);
  for (Held& h : rx_held_)
    --h.overtakes_left;
  while (!rx_held_.empty() && rx_held_.front().overtakes_left == 0) {
    Packet* q = rx_held_.front().packet;
    rx_held_.pop_front();
    to_rx->put(q);
  }
}

void NetPort::rx_thread() {
  const sc_core::sc_time hold(FaultSpec::kReorderHoldNs, sc_core::SC_NS);
  std::size_t last_size = 0;
  for (;;) {
    // While a stream comes in, refill from the socket whenever this FIFO runs dry, not only when
    // the whole model has starved: the next datagrams then enter a pipeline that is still busy,
    // as back-to-back frames on a wire would (docs/performance.md, simulated goodput).
    if (rx_in_.empty() && last_size >= kRefillMinBytes) (void)poll_receive(kRefillBudget);
    wait_with_held(rx_in_, rx_held_, [this](Packet* q) { to_rx->put(q); });
    Packet* p = rx_in_.get();
    last_size = p->size;
    rx_meter_.spend(SimConfig::stage_cycles(p->size, ctx_.cfg.width, ctx_.cfg.netport_latency));
    if (!rx_fault_.active()) {
      rx_forward(p);
      continue;
    }
    const NetFault::Decision d = rx_fault_.decide();
    if (d.drop) {
      ctx_.pool.put(p);
      continue;
    }
    Packet* dup = d.duplicate ? copy_of(*p) : nullptr;  // the copy stays intact
    if (d.corrupt) {
      rx_fault_.corrupt(p->data.data(), p->size,
                        protocol::make_roce_headers(p->peer_ip, p->peer_port, p->local_ip, p->size),
                        d.bit);
    }
    if (d.reorder) {
      rx_held_.push_back(Held{p, rx_fault_.spec().reorder_delay, sc_core::sc_time_stamp() + hold});
    } else {
      rx_forward(p);
    }
    if (dup != nullptr) rx_forward(dup);
  }
}

void NetPort::tap_rx(const Packet& p) {
  if (!pcap_.is_open()) return;
  const auto h = protocol::make_roce_headers(p.peer_ip, p.peer_port, p.local_ip, p.size, p.ip_id);
  pcap_.write_roce(to_ns(p.arrival), h, p.bytes());
}

std::uint16_t NetPort::source_port(std::uint32_t qpn) {
  const std::uint16_t port = protocol::roce_udp_source_port(qpn);
  if (!sockets_->listen.is_open()) return port;  // harness: no sockets at all
  auto it = sockets_->senders.find(port);
  if (it == sockets_->senders.end()) {
    auto s = std::make_unique<udp::socket>(sockets_->io);
    try {
      s->open(udp::v4());
      set_roce_options(*s);
      s->bind(udp::endpoint(asio::ip::address_v4(local_ip_), port));
    } catch (const std::exception& e) {
      ++port_fallbacks_;
      ctx_.log.write(LogLevel::warn, "net_port",
                     "cannot bind source port " + std::to_string(port) + " (" + e.what() +
                         "), QP " + std::to_string(qpn) + " sends from 4791");
      s.reset();
    }
    it = sockets_->senders.emplace(port, std::move(s)).first;
  }
  return it->second ? port : protocol::kRoceUdpPort;
}

void NetPort::send_datagram(const Packet& p, std::uint16_t src_port) {
  auto it = sockets_->senders.find(src_port);
  const int fd = (it != sockets_->senders.end() && it->second) ? it->second->native_handle()
                                                               : sockets_->listen.native_handle();
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(protocol::kRoceUdpPort);  // PROTOCOL.md 1: always to port 4791
  to.sin_addr.s_addr = htonl(p.peer_ip);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const ssize_t r = ::sendto(fd, p.data.data(), p.size, MSG_DONTWAIT,
                               reinterpret_cast<const sockaddr*>(&to), sizeof to);
    if (r >= 0) return;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) break;
    pollfd pfd{fd, POLLOUT, 0};
    (void)::poll(&pfd, 1, 10);  // the send buffer drains in microseconds on loopback
  }
  ++tx_errors_;
}

// One datagram onto the wire: socket, capture, tap.
void NetPort::tx_send_once(const Packet& p) {
  // TxPipe computed the ICRC for this source port; look it up again (it is cached).
  const std::uint16_t port = source_port(p.src_qpn);
  if (sockets_->listen.is_open()) send_datagram(p, port);
  ++tx_datagrams_;
  tx_bytes_ += p.size;
  if (pcap_.is_open()) {
    const auto h = protocol::make_roce_headers(local_ip_, port, p.peer_ip, p.size);
    pcap_.write_roce(to_ns(sc_core::sc_time_stamp()), h, p.bytes());
  }
  if (tx_tap_) tx_tap_(p, port);
}

void NetPort::tx_emit(Packet* p, bool release_held) {
  tx_send_once(*p);
  ctx_.pool.put(p);
  if (!release_held) return;
  for (Held& h : tx_held_)
    --h.overtakes_left;
  while (!tx_held_.empty() && tx_held_.front().overtakes_left == 0) {
    Packet* q = tx_held_.front().packet;
    tx_held_.pop_front();
    tx_emit(q, false);
  }
}

void NetPort::tx_thread() {
  const sc_core::sc_time hold(FaultSpec::kReorderHoldNs, sc_core::SC_NS);
  for (;;) {
    wait_with_held(tx_in_, tx_held_, [this](Packet* q) { tx_emit(q, false); });
    Packet* p = tx_in_.get();
    tx_meter_.spend(SimConfig::stage_cycles(p->size, ctx_.cfg.width, ctx_.cfg.netport_latency));
    if (!tx_fault_.active()) {
      tx_emit(p, true);
      continue;
    }
    const NetFault::Decision d = tx_fault_.decide();
    if (d.drop) {
      ctx_.pool.put(p);
      continue;
    }
    if (d.duplicate) tx_send_once(*p);  // the first copy leaves intact and in order
    if (d.corrupt) {
      tx_fault_.corrupt(
          p->data.data(), p->size,
          protocol::make_roce_headers(local_ip_, source_port(p->src_qpn), p->peer_ip, p->size),
          d.bit);
    }
    if (d.reorder) {
      tx_held_.push_back(Held{p, tx_fault_.spec().reorder_delay, sc_core::sc_time_stamp() + hold});
    } else {
      tx_emit(p, true);
    }
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
     << "net_port.pcap_write_errors=" << pcap_.write_errors() << '\n';
  rx_fault_.report(os, "net_port.fault_rx.");
  tx_fault_.report(os, "net_port.fault_tx.");
}

}  // namespace naa::sim
