// NetPort's UDP side (net_port.hpp): the listening and per-QP sockets, the batched receive
// (recvmmsg, issue 19) that injects datagrams into the port stage, and the batched send
// (sendmmsg) of what the wire handed on.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/udp_gso.hpp"
#include "net_port_sockets.hpp"

namespace naa::sim {
namespace asio = boost::asio;
using udp = asio::ip::udp;

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
}  // namespace

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
  // UDP_GRO (Linux 5.0): a peer's UDP GSO send (the host's WRITE packets toward loopback) is
  // handed over as one buffer instead of an skb, a queueing and a wake-up per datagram in the
  // sender's system call (poll_receive_gro cuts it).
  Sockets& so = *sockets_;
  so.gro = ::setsockopt(s.native_handle(), SOL_UDP, UDP_GRO, &on, sizeof on) == 0;
  if (so.gro) so.gro_bufs.resize(Sockets::kGroSlots * Sockets::kGroBufferSize);
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
  if (sockets_->gro) return poll_receive_gro(budget);
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
      so.prepare_rx(want, so.rx_packets[want]->data.data(), so.rx_packets[want]->data.size());
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

NetPort::RxMeta NetPort::parse_received(const msghdr& msg) {
  RxMeta m;
  const auto& from = *static_cast<const sockaddr_in*>(msg.msg_name);
  m.peer_ip = ntohl(from.sin_addr.s_addr);
  m.peer_port = ntohs(from.sin_port);
  m.local_ip = local_ip_;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&msg), c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      in_pktinfo info{};
      std::memcpy(&info, CMSG_DATA(c), sizeof info);
      m.local_ip = ntohl(info.ipi_addr.s_addr);
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
      std::uint32_t dropped = 0;
      std::memcpy(&dropped, CMSG_DATA(c), sizeof dropped);
      rx_socket_drops_ = dropped;  // cumulative since the socket opened
    } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int size = 0;
      std::memcpy(&size, CMSG_DATA(c), sizeof size);
      if (size > 0) m.gro_segment = static_cast<std::size_t>(size);
    }
  }
  return m;
}

void NetPort::accept_received(Packet* p, const msghdr& msg, std::size_t len) {
  if ((msg.msg_flags & MSG_TRUNC) != 0) {
    ++rx_truncated_;
    protocol_errors->count_protocol_error(protocol::Error::too_long);
    ctx_.pool.put(p);
    return;
  }
  admit_received(p, len, parse_received(msg));
}

void NetPort::admit_received(Packet* p, std::size_t len, const RxMeta& meta) {
  p->size = len;
  p->peer_ip = meta.peer_ip;
  p->peer_port = meta.peer_port;
  p->local_ip = meta.local_ip;
  stamp_arrival(*p);
  ++rx_datagrams_;
  rx_bytes_ += p->size;
  rx_admit(p);
}

// poll_receive on a socket with UDP_GRO: up to kGroSlots messages per recvmmsg into the GRO
// buffers, each cut into its datagrams (a message without the UDP_GRO block is one datagram),
// each copied into a packet of the pool. A message asks for kGroMaxSegments packets and FIFO
// places of room, so a read never takes more than the model can hold.
std::size_t NetPort::poll_receive_gro(std::size_t budget) {
  Sockets& so = *sockets_;
  const int fd = so.listen.native_handle();
  std::size_t n = 0;
  while (n < budget) {
    // The first read takes one message even under a smaller budget (it may hold 64 datagrams).
    const std::size_t left = n == 0 ? std::max(budget, Sockets::kGroMaxSegments) : budget - n;
    const std::size_t space = std::min(kRxFifo - rx_in_.size(), ctx_.pool.available());
    const std::size_t want =
        std::min({std::min(left, space) / Sockets::kGroMaxSegments, Sockets::kGroSlots,
                  std::max<std::size_t>(1, rx_batch_hint_)});
    if (want == 0) {
      // The datagrams wait in the socket until the model frees packets.
      if (space < Sockets::kGroMaxSegments) ++rx_no_buffer_;
      break;
    }
    for (std::size_t i = 0; i < want; ++i)
      so.prepare_rx(i, so.gro_bufs.data() + i * Sockets::kGroBufferSize, Sockets::kGroBufferSize);
    ++rx_recv_calls_;
    const int r =
        ::recvmmsg(fd, so.rx_msgs.data(), static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
    const std::size_t got = r > 0 ? static_cast<std::size_t>(r) : 0;
    if (got == 0) {
      ++rx_recv_empty_;
      break;
    }
    for (std::size_t i = 0; i < got; ++i) {
      const msghdr& msg = so.rx_msgs[i].msg_hdr;
      const std::size_t len = so.rx_msgs[i].msg_len;
      const RxMeta meta = parse_received(msg);
      const std::size_t segment = meta.gro_segment != 0 ? meta.gro_segment : len;
      const std::uint8_t* buf = so.gro_bufs.data() + i * Sockets::kGroBufferSize;
      // A datagram larger than a packet buffer is dropped and counted, as recvmmsg into a
      // packet buffer truncated it (MSG_TRUNC) without GRO.
      if ((msg.msg_flags & MSG_TRUNC) != 0 || segment > kMaxDatagram) {
        ++rx_truncated_;
        protocol_errors->count_protocol_error(protocol::Error::too_long);
        continue;
      }
      std::size_t at = 0;
      do {  // an empty datagram too (the receive path drops and counts it)
        Packet* p = ctx_.pool.try_get();  // there: room counted the pool's free packets
        const std::size_t size = std::min(segment, len - at);
        std::memcpy(p->data.data(), buf + at, size);
        if (meta.gro_segment != 0) ++rx_gro_datagrams_;
        admit_received(p, size, meta);
        ++n;
        at += segment;
      } while (at < len);
    }
    rx_batch_hint_ = std::max<std::size_t>(1, got * 2);
    if (got < want) break;
  }
  return n;
}

// Asked twice per datagram, mostly for the QP asked last: that answer without the map, and
// without the register saves and stack frame the socket-opening path needs (issue 31). `last`
// is only ever set with the listening socket open.
std::uint16_t NetPort::source_port(std::uint32_t qpn) {
  const Sockets::LastSender& last = sockets_->last;
  if (last.valid && last.qpn == qpn) return last.port;
  return source_port_lookup(qpn);
}

std::uint16_t NetPort::source_port_lookup(std::uint32_t qpn) {
  if (!sockets_->listen.is_open()) return protocol::roce_udp_source_port(qpn);  // no sockets
  Sockets::LastSender& last = sockets_->last;
  const std::uint16_t port = protocol::roce_udp_source_port(qpn);
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
  const std::uint16_t from = it->second ? port : protocol::kRoceUdpPort;
  last = Sockets::LastSender{
      true, qpn, from, it->second ? it->second->native_handle() : sockets_->listen.native_handle()};
  return from;
}

bool NetPort::queue_datagram(Packet* p, std::uint16_t src_port) {
  int fd = -1;
  if (const Sockets::LastSender& last = sockets_->last; last.valid && last.port == src_port) {
    fd = last.fd;
  } else {
    auto it = sockets_->senders.find(src_port);
    fd = (it != sockets_->senders.end() && it->second) ? it->second->native_handle()
                                                       : sockets_->listen.native_handle();
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(protocol::kRoceUdpPort);  // PROTOCOL.md 1: always to port 4791
  to.sin_addr.s_addr = htonl(p->peer_ip);
  auto& outbox = sockets_->outbox;
  outbox.push_back(Sockets::TxEntry{fd, to, p});
  if (outbox.size() >= Sockets::kTxBatch) flush_tx();
  return true;
}

// The outbox's datagrams first .. end (one socket, at most kTxBatch) as sendmmsg messages: with
// `gso`, a run of equal-size datagrams (the last may be shorter; at most 64 and 64 KiB) to one
// loopback address is one message with UDP_SEGMENT, the rest one message each. Returns the
// messages; message m carries the datagrams first + tx_first[m] .. first + tx_first[m+1).
std::size_t NetPort::build_tx_messages(std::size_t first, std::size_t end, bool gso) {
  Sockets& so = *sockets_;
  std::size_t nmsg = 0;
  for (std::size_t k = first; k < end; ++k) {
    Sockets::TxEntry& e = so.outbox[k];
    so.tx_iovs[k - first] = iovec{e.packet->data.data(), e.packet->size};
  }
  for (std::size_t i = first; i < end; ++nmsg) {
    Sockets::TxEntry& e = so.outbox[i];
    const std::size_t size = e.packet->size;
    std::size_t j = i + 1;
    if (gso && protocol::udp_gso::allowed_to(ntohl(e.to.sin_addr.s_addr))) {
      j = protocol::udp_gso::run_end(
          i, end, [&so](std::size_t k) { return so.outbox[k].packet->size; },
          [&so, &e](std::size_t k) {
            return so.outbox[k].to.sin_addr.s_addr == e.to.sin_addr.s_addr &&
                   so.outbox[k].to.sin_port == e.to.sin_port;
          });
    }
    msghdr& msg = so.tx_msgs[nmsg].msg_hdr;
    msg = msghdr{};
    msg.msg_name = &e.to;
    msg.msg_namelen = sizeof e.to;
    msg.msg_iov = &so.tx_iovs[i - first];
    msg.msg_iovlen = j - i;
    if (j - i > 1) {
      msg.msg_control = so.tx_ctrl[nmsg].bytes;
      msg.msg_controllen = sizeof so.tx_ctrl[nmsg].bytes;
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
      const auto segment = static_cast<std::uint16_t>(size);
      std::memcpy(CMSG_DATA(c), &segment, sizeof segment);
    }
    so.tx_first[nmsg] = i - first;
    i = j;
  }
  so.tx_first[nmsg] = end - first;
  return nmsg;
}

// Several QPs sending at once (the transmit scheduler takes them in turn) interleave their
// sockets in the outbox, which would make runs of one or two datagrams: one sendmmsg each and no
// GSO. Each QP sends from its own socket and UDP source port, and RoCEv2 keeps no order between
// QPs (the source port spreads them over ECMP paths, PROTOCOL.md 1), so the datagrams are
// grouped per socket, each socket's in the order sent. A CM MAD (destination QP 1, sent from
// QP 1's own source port) or a datagram from the listening socket (a QP whose port could not be
// bound) keeps its place with respect to all others: a connection's last NAK must reach the peer
// before the DREQ that ends it (the softroce probe's bad-rkey and long-send scenarios).
void NetPort::group_outbox_by_socket() {
  auto& outbox = sockets_->outbox;
  if (outbox.size() < 2) return;  // nothing to group (a short call's datagrams; issue 31)
  // One socket only (one QP sending, a call's ACK and result): every range below would keep its
  // order, so there is nothing to sort (issue 31).
  const int first_fd = outbox.front().fd;
  if (std::all_of(outbox.begin() + 1, outbox.end(),
                  [first_fd](const Sockets::TxEntry& e) { return e.fd == first_fd; })) {
    return;
  }
  const int listen_fd = sockets_->listen.native_handle();
  auto by_fd = [](const Sockets::TxEntry& a, const Sockets::TxEntry& b) { return a.fd < b.fd; };
  auto keeps_place = [listen_fd](const Sockets::TxEntry& e) {
    const auto& d = e.packet->data;  // BTH first; its destination QP in bytes 5-7 (IBTA 9.2)
    const bool to_qp1 = e.packet->size >= 8 && d[5] == 0 && d[6] == 0 && d[7] == 1;
    return e.fd == listen_fd || to_qp1;
  };
  auto from = outbox.begin();
  while (from != outbox.end()) {
    auto to = std::find_if(from, outbox.end(), keeps_place);
    if (std::adjacent_find(from, to, [](const Sockets::TxEntry& a, const Sockets::TxEntry& b) {
          return a.fd != b.fd;
        }) != to) {
      std::stable_sort(from, to, by_fd);
    }
    from = to == outbox.end() ? to : to + 1;
  }
}

// One sendmmsg per run of datagrams from the same socket, in the order the model sent them. Runs
// of equal-size datagrams toward a loopback address leave as UDP GSO messages: the kernel passes
// each through its IP stack and the loopback once and cuts it into the same datagrams at the
// receiving socket, the sender's system time per datagram a fraction of a datagram's own send
// (docs/performance-cost.md item 28). Only toward loopback: GSO numbers the segments' IPv4 IDs
// 0, 1, 2, ..., and the ICRC covers the ID (TxPipe writes it for ID 0, PROTOCOL.md 1), which a
// receiver reading the IP header (Soft-RoCE, a RoCE NIC: the VM test's tap address) checks as
// sent; a receiver behind a socket (the host library, naa-sim) never sees the ID and recovers
// the one the ICRC was written with (protocol::recover_ipv4_id). A GSO message that fails is
// sent again datagram by datagram; if the kernel refused GSO itself, GSO stays off for the port.
bool NetPort::sockets_listening() const {
  return sockets_->listen.is_open();
}

void NetPort::flush_tx() {
  Sockets& so = *sockets_;
  auto& outbox = so.outbox;
  if (outbox.empty()) return;  // the runner flushes after every turn, mostly with nothing queued
  // A frame whose last bit has not left yet (tx_emit's direct hand-over, issue 31) stays: it is
  // the outbox's last datagram (every later frame is queued at its own, later end), and a step
  // that reaches its end sends it (the runner flushes after every step).
  std::optional<Sockets::TxEntry> held;
  if (wire_hold_ != nullptr) {
    if (sim_now() < wire_hold_end_ && outbox.back().packet == wire_hold_) {
      held = outbox.back();
      outbox.pop_back();
      if (outbox.empty()) {
        outbox.push_back(*held);
        return;
      }
    } else {
      wire_hold_ = nullptr;
    }
  }
  group_outbox_by_socket();
  std::size_t i = 0;
  std::size_t plain_end = 0;  // a failed GSO message's datagrams (before it) go one by one
  while (i < outbox.size()) {
    const int fd = outbox[i].fd;
    std::size_t end = i;
    while (end < outbox.size() && outbox[end].fd == fd && end - i < Sockets::kTxBatch)
      ++end;
    const std::size_t nmsg = build_tx_messages(i, end, tx_gso_ && i >= plain_end);
    std::size_t sent = 0;
    std::size_t resume = end;  // where the next batch starts
    int attempts = 0;
    while (sent < nmsg) {
      ++tx_send_calls_;
      const int r = ::sendmmsg(fd, so.tx_msgs.data() + sent, static_cast<unsigned>(nmsg - sent),
                               MSG_DONTWAIT);
      if (r > 0) {
        for (std::size_t m = sent; m < sent + static_cast<std::size_t>(r); ++m) {
          const std::size_t segments = so.tx_first[m + 1] - so.tx_first[m];
          if (segments > 1) tx_gso_datagrams_ += segments;
        }
        sent += static_cast<std::size_t>(r);
        continue;
      }
      const int err = errno;
      if ((err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) && ++attempts < 100) {
        pollfd pfd{fd, POLLOUT, 0};
        (void)::poll(&pfd, 1, 10);  // the send buffer drains in microseconds on loopback
        continue;
      }
      if (so.tx_first[sent + 1] - so.tx_first[sent] > 1) {
        // A GSO message failed: its datagrams again, one message each (a queued ICMP error then
        // costs one datagram, as without GSO). A kernel without UDP GSO: off for good.
        if (protocol::udp_gso::refused(err)) {
          tx_gso_ = false;
          ++tx_gso_refused_;
        }
        resume = i + so.tx_first[sent];
        plain_end = i + so.tx_first[sent + 1];
        break;
      }
      ++tx_errors_;  // this datagram is lost (as on a wire); the rest still go
      ++sent;
      attempts = 0;
    }
    i = resume;
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
  if (held) outbox.push_back(*held);
}

}  // namespace naa::sim
