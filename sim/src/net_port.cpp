#include "naa/sim/net_port.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <cerrno>
#include <cstring>
#include <map>
#include <span>
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

  // recvmmsg: one system call takes every datagram waiting (issue 19).
  static constexpr std::size_t kRxBatch = 64;
  struct RxSlot {
    sockaddr_in from;
    iovec iov;
    alignas(
        cmsghdr) char control[CMSG_SPACE(sizeof(in_pktinfo)) + CMSG_SPACE(sizeof(std::uint32_t))];
  };
  std::array<mmsghdr, kRxBatch> rx_msgs{};
  std::array<RxSlot, kRxBatch> rx_slots{};
  std::array<Packet*, kRxBatch> rx_packets{};

  // sendmmsg: datagrams the model transmitted, sent together when the runner's simulation step
  // ends (flush_tx), before the model reads the socket again, or when kTxBatch are queued. Their
  // buffers go back to the pool once sent.
  static constexpr std::size_t kTxBatch = 32;
  struct TxEntry {
    int fd;
    sockaddr_in to;
    Packet* packet;
  };
  std::vector<TxEntry> outbox;
  std::array<mmsghdr, kTxBatch> tx_msgs{};
  std::array<iovec, kTxBatch> tx_iovs{};
};

namespace {

// PROTOCOL.md 1: unconnected + IP_PMTUDISC_DO makes Linux send IPv4 ID 0 with DF.
void set_roce_options(udp::socket& s) {
  const int fd = s.native_handle();
  int v = IP_PMTUDISC_DO;
  if (::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v) != 0) {
    throw std::system_error(errno, std::generic_category(), "setsockopt(IP_MTU_DISCOVER)");
  }
  int buf = 16 << 20;
  // Large buffers: a host (or a test peer) streams a whole call, up to 4 MiB in ~1000 datagrams
  // of ~8 KiB kernel truesize each, before the model may read it. FORCE needs
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
constexpr std::size_t kRxFifo = 4096;  // NetPort's input FIFO (datagrams)

std::uint64_t to_ns(const sc_core::sc_time& t) {
  return static_cast<std::uint64_t>(t.to_seconds() * 1e9 + 0.5);
}

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

int NetPort::listen_fd() const {
  return sockets_->listen.native_handle();
}

void NetPort::async_wait_readable(std::function<void()> handler) {
  sockets_->listen.async_wait(udp::socket::wait_read,
                              [h = std::move(handler)](const boost::system::error_code&) { h(); });
}

std::size_t NetPort::poll_receive(std::size_t budget) {
  // What the model sent so far leaves before it reads again: its ACKs and replies reach the
  // peer before the model waits for what the peer sends next.
  flush_tx();
  Sockets& so = *sockets_;
  const int fd = so.listen.native_handle();
  std::size_t n = 0;
  while (n < budget) {
    // Up to as many datagrams as the port's input FIFO and the pool have room for: the rest
    // stays queued in the socket until the model frees buffers. The buffers recvmmsg did not
    // fill stay ready for the next call (a standing reserve of at most kRxBatch, so a read
    // costs no pool traffic for the slots it does not use).
    const std::size_t room =
        std::min({budget - n, rx_batch_hint_, Sockets::kRxBatch, kRxFifo - rx_in_.size()});
    std::size_t want = 0;
    while (want < room) {
      if (so.rx_packets[want] == nullptr) {
        Packet* p = ctx_.pool.try_get();
        if (p == nullptr) break;
        so.rx_packets[want] = p;
      }
      Sockets::RxSlot& slot = so.rx_slots[want];
      slot.iov = iovec{so.rx_packets[want]->data.data(), so.rx_packets[want]->data.size()};
      msghdr& msg = so.rx_msgs[want].msg_hdr;
      msg.msg_name = &slot.from;
      msg.msg_namelen = sizeof slot.from;
      msg.msg_iov = &slot.iov;
      msg.msg_iovlen = 1;
      msg.msg_control = slot.control;
      msg.msg_controllen = sizeof slot.control;
      msg.msg_flags = 0;
      ++want;
    }
    if (want == 0) {
      if (room != 0) ++rx_no_buffer_;  // no buffer: the datagram waits in the socket
      break;
    }
    ++rx_recv_calls_;
    const int r =
        ::recvmmsg(fd, so.rx_msgs.data(), static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
    const std::size_t got = r > 0 ? static_cast<std::size_t>(r) : 0;
    if (got == 0) {
      ++rx_recv_empty_;  // EAGAIN, or an error the next wait will show again
      break;
    }
    for (std::size_t i = 0; i < got; ++i) {
      Packet* p = so.rx_packets[i];
      accept_received(p, so.rx_msgs[i].msg_hdr, so.rx_msgs[i].msg_len);
    }
    // The filled buffers went on; the unused ones shift to the front for the next read.
    std::rotate(so.rx_packets.begin(), so.rx_packets.begin() + static_cast<std::ptrdiff_t>(got),
                so.rx_packets.begin() + static_cast<std::ptrdiff_t>(want));
    for (std::size_t i = want - got; i < want; ++i)
      so.rx_packets[i] = nullptr;
    n += got;
    // Ask for what the last reads found (preparing unused headers costs instructions): twice
    // the datagrams found, at least 4; a full batch doubles it.
    rx_batch_hint_ = std::max<std::size_t>(4, got * 2);
    // Fewer than asked: the socket is drained. No further read that would only say EAGAIN; a
    // datagram arriving meanwhile wakes the runner's wait.
    if (got < want) break;
  }
  return n;
}

void NetPort::accept_received(Packet* p, const msghdr& msg, std::size_t len) {
  if ((msg.msg_flags & MSG_TRUNC) != 0) {
    ++rx_truncated_;
    protocol_errors->count_protocol_error(protocol::Error::too_long);
    ctx_.pool.put(p);
    return;
  }
  const auto& from = *static_cast<const sockaddr_in*>(msg.msg_name);
  p->size = len;
  p->peer_ip = ntohl(from.sin_addr.s_addr);
  p->peer_port = ntohs(from.sin_port);
  p->local_ip = local_ip_;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&msg), c)) {
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
  stamp_arrival(*p);
  ++rx_datagrams_;
  rx_bytes_ += p->size;
  (void)rx_in_.try_put(p);
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
  (void)rx_in_.try_put(p);
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
  stamp_arrival(*p, handed_over);
  ++rx_datagrams_;
  rx_bytes_ += p->size;
  (void)rx_in_.try_put(p);
  return true;
}

void NetPort::stamp_arrival(Packet& p, std::optional<sc_core::sc_time> handed_over) {
  // Not before the runner's stamp floor: it may read datagrams before the simulation step that
  // first lets simulated time follow the wall time it waited (Runner::run).
  const sc_core::sc_time now = std::max(sc_core::sc_time_stamp(), stamp_floor_);
  if (!rx_link_.enabled()) {
    p.arrival = handed_over && *handed_over > now ? *handed_over : now;
    return;
  }
  if (handed_over) {
    p.arrival = rx_link_.send(std::max(now, *handed_over), p.size).arrival;
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
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    // Fewer than reorder_delay datagrams came within the hold time: release it anyway.
    if (!held.release_first_due(now, release))
      sc_core::wait(held.next_deadline() - now, in.data_event());
  }
}

// The receive stage's time for a datagram, from when it takes it: the rest of its way over the
// link (it is there once its last bit has arrived), then the port stage (counted busy).
sc_core::sc_time NetPort::rx_service(void* self, const Packet& p) {
  auto* port = static_cast<NetPort*>(self);
  const std::uint64_t stage =
      SimConfig::stage_cycles(p.size, port->ctx_.cfg.width, port->ctx_.cfg.netport_latency);
  port->rx_meter_.account(stage);
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  return (p.arrival > now ? p.arrival - now : sc_core::SC_ZERO_TIME) + port->rx_meter_.times(stage);
}

sc_core::sc_time NetPort::tx_service(void* self, const Packet& p) {
  auto* port = static_cast<NetPort*>(self);
  const std::uint64_t stage =
      SimConfig::stage_cycles(p.size, port->ctx_.cfg.width, port->ctx_.cfg.netport_latency);
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
    impair::pass(rx_fault_, rx_held_, p, p->bytes(), sc_core::sc_time_stamp() + hold, steps);
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

bool NetPort::queue_datagram(Packet* p, std::uint16_t src_port) {
  auto it = sockets_->senders.find(src_port);
  const int fd = (it != sockets_->senders.end() && it->second) ? it->second->native_handle()
                                                               : sockets_->listen.native_handle();
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(protocol::kRoceUdpPort);  // PROTOCOL.md 1: always to port 4791
  to.sin_addr.s_addr = htonl(p->peer_ip);
  auto& outbox = sockets_->outbox;
  outbox.push_back(Sockets::TxEntry{fd, to, p});
  if (outbox.size() >= Sockets::kTxBatch) flush_tx();
  return true;
}

void NetPort::flush_tx() {
  auto& outbox = sockets_->outbox;
  std::size_t i = 0;
  while (i < outbox.size()) {
    // One sendmmsg per run of datagrams from the same socket, in the order the model sent them.
    const int fd = outbox[i].fd;
    std::size_t count = 0;
    while (i + count < outbox.size() && outbox[i + count].fd == fd && count < Sockets::kTxBatch) {
      Sockets::TxEntry& e = outbox[i + count];
      sockets_->tx_iovs[count] = iovec{e.packet->data.data(), e.packet->size};
      msghdr& msg = sockets_->tx_msgs[count].msg_hdr;
      msg = msghdr{};
      msg.msg_name = &e.to;
      msg.msg_namelen = sizeof e.to;
      msg.msg_iov = &sockets_->tx_iovs[count];
      msg.msg_iovlen = 1;
      ++count;
    }
    std::size_t sent = 0;
    int attempts = 0;
    while (sent < count) {
      ++tx_send_calls_;
      const int r = ::sendmmsg(fd, sockets_->tx_msgs.data() + sent,
                               static_cast<unsigned>(count - sent), MSG_DONTWAIT);
      if (r > 0) {
        sent += static_cast<std::size_t>(r);
        continue;
      }
      if ((errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) && ++attempts < 100) {
        pollfd pfd{fd, POLLOUT, 0};
        (void)::poll(&pfd, 1, 10);  // the send buffer drains in microseconds on loopback
        continue;
      }
      ++tx_errors_;  // this datagram is lost (as on a wire); the rest still go
      ++sent;
      attempts = 0;
    }
    i += count;
  }
  // Back to the pool. Called between sc_start() calls, put() would notify the pool's event and
  // so make the model "active" for one more (empty) step; a process waits on that event only
  // while the pool is empty, so only the buffer that ends an empty pool needs the notification.
  for (const Sockets::TxEntry& e : outbox) {
    if (ctx_.pool.available() == 0) {
      ctx_.pool.put(e.packet);
    } else {
      ctx_.pool.unget(e.packet);
    }
  }
  outbox.clear();
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
    pcap_.write_roce(to_ns(sc_core::sc_time_stamp()), h, p->bytes());
  }
  if (tx_tap_) tx_tap_(*p, port);
  if (sockets_->listen.is_open()) return queue_datagram(p, port);
  return false;
}

void NetPort::tx_emit(Packet* p) {
  // Onto the wire behind the frames already queued (link model): the MAC holds a few frames
  // (kTxWireFrames); tx_wire_thread hands each on when its last bit has left.
  WireFrame f{p, sc_core::sc_time_stamp(), sc_core::sc_time_stamp()};
  if (tx_link_.enabled()) {
    const auto slot = tx_link_.send(sc_core::sc_time_stamp(), p->size);
    f.end = slot.end;
    f.arrival = slot.arrival;
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
  auto emit = [this](Packet* q) { tx_emit(q); };
  // What naa::impair's pass() does with a transmitted datagram's fate (docs/adr/0003).
  auto steps = impair::make_steps(
      /*discard=*/[this](Packet* q) { ctx_.pool.put(q); },
      /*deliver_copy=*/
      [this](Packet* q) {
        if (Packet* dup = copy_of(*q)) tx_emit(dup);
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
    impair::pass(tx_fault_, tx_held_, p, p->bytes(), sc_core::sc_time_stamp() + hold, steps);
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
  rx_fault_.report(os, "net_port.fault_rx.");
  tx_fault_.report(os, "net_port.fault_tx.");
}

}  // namespace naa::sim
