// UdpRoce endpoint, the network side (as rxe_net.c): the PROTOCOL.md 1 sockets, batched receive
// with IP_PKTINFO, ICMP errors from IP_RECVERR, transmit and pcap, and the network impairment of
// both directions (naa::impair, docs/reliability.md). Locking: udp_endpoint.hpp.
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>

#include "naa/protocol/icrc.hpp"
#include "udp_endpoint.hpp"

namespace naa::host::detail {
namespace {

constexpr int kIcmpUnreachableLimit = 3;  // port unreachables before naa_unreachable

template <class T>
int set_opt(int fd, int level, int name, T value) {
  return ::setsockopt(fd, level, name, &value, sizeof value);
}

// The receiver's check a corrupted datagram must fail (PROTOCOL.md 2): too short, or no IPv4 ID
// makes its ICRC verify.
bool icrc_rejects(const protocol::Ipv4UdpHeaders& h, std::span<const std::uint8_t> bytes) {
  return bytes.size() < protocol::kBthSize + protocol::kIcrcSize ||
         !protocol::recover_ipv4_id(h, bytes);
}

}  // namespace

std::uint64_t wall_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

// A UDP socket set up as PROTOCOL.md 1 requires: not connected, PMTU discovery "do" (IPv4 ID 0 and
// DF), ICMP errors queued (IP_RECVERR) so that "nothing listens there" is reported, not guessed.
int open_roce_socket(std::uint32_t ip, std::uint16_t port, int& err, bool reuse_port) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    err = errno;
    return -1;
  }
  if ((reuse_port && set_opt(fd, SOL_SOCKET, SO_REUSEPORT, int{1}) != 0) ||
      set_opt(fd, IPPROTO_IP, IP_MTU_DISCOVER, int{IP_PMTUDISC_DO}) != 0 ||
      set_opt(fd, IPPROTO_IP, IP_RECVERR, int{1}) != 0 ||
      set_opt(fd, SOL_SOCKET, SO_SNDBUF, int{4 << 20}) != 0) {
    err = errno;
    ::close(fd);
    return -1;
  }
  const sockaddr_in a = make_sockaddr(ip, port);
  if (::bind(fd, as_sockaddr(a), sizeof a) != 0) {
    err = errno;
    ::close(fd);
    return -1;
  }
  return fd;
}

// UDP 4791 in use: name the likely holders (issue 12 finding 11).
constexpr const char* kPort4791TakenHint =
    " (another program holds UDP port 4791 there: another host endpoint or naa-sim, or the "
    "kernel's Soft-RoCE module rdma_rxe, which binds 0.0.0.0:4791 on every address; check with "
    "`ss -ulpn 'sport = :4791'` (a socket with no process is the kernel's) and "
    "`lsmod | grep rdma_rxe`)";

int open_receive_socket(const UdpRoceOptions& options, std::uint32_t& ip, Errc& why,
                        std::string& detail, std::unique_ptr<SharedAddress>& share) {
  int fd = -1;
  int err = 0;
  auto fail = [&](Errc e, std::string text) {
    why = e;
    detail = std::move(text);
    return -1;
  };
  if (options.share_address) {
    // Many processes on one address (docs/adr/0006): the group's program steers by QPN.
    if (!options.local_ip) {
      return fail(Errc::invalid_argument, "share_address needs local_ip (the address to share)");
    }
    ip = *options.local_ip;
    share = SharedAddress::join(ip, why, detail);
    if (!share) return -1;
    fd = share->fd();
  } else if (options.local_ip) {
    ip = *options.local_ip;
    fd = open_roce_socket(ip, protocol::kRoceUdpPort, err);
    if (fd < 0) {
      if (err == EADDRINUSE) {
        return fail(Errc::address_in_use,
                    errno_text("bind " + format_ipv4(ip) + ":4791", err) + kPort4791TakenHint);
      }
      return fail(Errc::socket_error, errno_text("bind " + format_ipv4(ip) + ":4791", err));
    }
  } else {
    // The first free 127.0.0.x (naa/host/ipv4.hpp; PROTOCOL.md 6).
    for (std::uint32_t x = kFirstLoopbackHost; x <= kLastLoopbackHost && fd < 0; ++x) {
      ip = loopback_ipv4(x);
      fd = open_roce_socket(ip, protocol::kRoceUdpPort, err);
      if (fd < 0 && err != EADDRINUSE) {
        return fail(Errc::socket_error, errno_text("bind " + format_ipv4(ip) + ":4791", err));
      }
    }
    if (fd < 0) {
      return fail(Errc::no_free_address,
                  std::string("every 127.0.0.3-254:4791 is taken") + kPort4791TakenHint);
    }
  }
  if (set_opt(fd, IPPROTO_IP, IP_PKTINFO, int{1}) != 0) {
    err = errno;
    if (share) {
      share.reset();  // closes fd as it leaves the group
    } else {
      ::close(fd);
    }
    return fail(Errc::socket_error, errno_text("IP_PKTINFO", err));
  }
  // A deep receive buffer: a window of 128 x 4 KiB per QP must not overflow it.
  if (set_opt(fd, SOL_SOCKET, SO_RCVBUFFORCE, options.receive_buffer_bytes) != 0) {
    (void)set_opt(fd, SOL_SOCKET, SO_RCVBUF, options.receive_buffer_bytes);
  }
  return fd;
}

// ---- QPNs and comm IDs on a shared address (docs/adr/0006)
// -------------------------------------------------------------------

std::uint32_t Endpoint::take_qpn() {
  const std::uint32_t qpn = next_qpn_;
  if (share_) {
    // Within the slot: s << 16 | n, n from kFirstSharedQpn to 0xFFFF, wrapping to 2.
    const std::uint32_t n = (qpn & 0xFFFF) == 0xFFFF ? 2 : (qpn & 0xFFFF) + 1;
    next_qpn_ = (qpn & 0xFF0000) | n;
  } else {
    next_qpn_ = next_qpn_ + 1 > protocol::kMax24 ? 2 : next_qpn_ + 1;
  }
  return qpn;
}

std::uint32_t Endpoint::comm_id_candidate() {
  const auto id = static_cast<std::uint32_t>(rng_());
  if (!share_) return id;
  // The top byte is the slot: the group's program steers REP, RTU, REJ, MRA, DREQ and DREP by it.
  return std::uint32_t{share_->slot()} << 24 | (id & 0xFFFFFF);
}

// ---- Receive
// ---------------------------------------------------------------------------------------

void Endpoint::arm_receive() {
  if (stopping_) return;
  // A one-byte MSG_PEEK receive rather than async_wait: Asio performs it speculatively, so a
  // datagram that arrived between two drains is never missed (the reactor is edge-triggered).
  rx_.async_receive(asio::buffer(rx_peek_), asio::socket_base::message_peek,
                    [this](const boost::system::error_code& ec, std::size_t) { on_readable(ec); });
}

void Endpoint::on_readable(const boost::system::error_code& ec) {
  std::unique_lock lock(mu_);
  if (stopping_ || ec == asio::error::operation_aborted) return;
  if (ec) drain_error_queue(rx_fd_);  // IP_RECVERR reports ICMP errors through recv
  bool more = false;
  {
    TxBatch batch(*this);  // the ACKs and requests this pass produces leave together
    more = drain_socket();
  }
  if (more) {
    asio::post(io_, [this] { on_readable({}); });
  } else {
    arm_receive();
  }
  finish_handler(lock);
}

// A zero-timeout manual poll (an application spinning on fi_cq_read over the libfabric provider,
// issue 29): poll(2) on the socket, and one recvmmsg when something came, instead of Asio's
// epoll_wait and its MSG_PEEK receives (each datagram cost one at re-arming and one on readiness:
// fi_pingpong's client made 2 recvfrom calls per transfer, now none). An empty spin costs one
// poll(2), as it cost one epoll_wait (a recvmmsg on an empty socket costs more). What only Asio
// runs (posted handlers, the pending receives' errors) it still runs on every kAsioPollEvery-th
// call, and timers as soon as one is due: false then. progress_mu_ held.
bool Endpoint::poll_directly() {
  pollfd pfd{rx_fd_, POLLIN, 0};
  const bool readable = ::poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN) != 0;
  std::unique_lock lock(mu_);
  if (stopping_) return true;
  if (timer_armed_at_ && *timer_armed_at_ <= now()) return false;
  if (!readable) return true;
  bool more = false;
  {
    TxBatch batch(*this);
    more = drain_socket();
  }
  finish_handler(lock);
  return !more;
}

// Up to 8 batches of kRxBatch datagrams; true if more may be waiting.
bool Endpoint::drain_socket() {
  std::array<mmsghdr, kRxBatch> msgs{};
  std::array<iovec, kRxBatch> iov{};
  std::array<sockaddr_in, kRxBatch> from{};
  std::array<std::array<std::uint8_t, CMSG_SPACE(sizeof(in_pktinfo)) + CMSG_SPACE(sizeof(int))>,
             kRxBatch>
      ctrl{};
  bool more = false;
  for (int round = 0; round < 8; ++round) {
    for (std::size_t i = 0; i < kRxBatch; ++i) {
      iov[i] = {rx_bufs_.data() + i * rx_buf_size_, rx_buf_size_};
      msgs[i].msg_hdr = {};
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = ctrl[i].data();
      msgs[i].msg_hdr.msg_controllen = ctrl[i].size();
    }
    const int n = ::recvmmsg(rx_fd_, msgs.data(), kRxBatch, MSG_DONTWAIT, nullptr);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) drain_error_queue(rx_fd_);
      break;
    }
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) {
      const msghdr& mh = msgs[static_cast<std::size_t>(i)].msg_hdr;
      std::uint32_t dst_ip = ip_;
      std::size_t segment = 0;  // UDP_GRO: the coalesced datagrams' size (the last may be less)
      for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr;
           c = CMSG_NXTHDR(const_cast<msghdr*>(&mh), c)) {  // NOLINT: C API
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
          in_pktinfo pi{};
          std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
          dst_ip = ntohl(pi.ipi_addr.s_addr);
        } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
          int size = 0;
          std::memcpy(&size, CMSG_DATA(c), sizeof size);
          if (size > 0) segment = static_cast<std::size_t>(size);
        }
      }
      const std::size_t len = msgs[static_cast<std::size_t>(i)].msg_len;
      if ((mh.msg_flags & MSG_TRUNC) != 0) {
        ++stats_.dropped_malformed;
        continue;
      }
      const sockaddr_in& f = from[static_cast<std::size_t>(i)];
      std::uint8_t* buf = rx_bufs_.data() + static_cast<std::size_t>(i) * rx_buf_size_;
      if (segment == 0 || segment >= len) {
        receive_datagram(buf, len, ipv4_of(f), ntohs(f.sin_port), dst_ip, now);
        continue;
      }
      // A coalesced run: the datagrams as the peer sent them, one after the other.
      for (std::size_t at = 0; at < len; at += segment) {
        ++stats_.gro_datagrams;
        receive_datagram(buf + at, std::min(segment, len - at), ipv4_of(f), ntohs(f.sin_port),
                         dst_ip, now);
      }
    }
    if (static_cast<std::size_t>(n) < kRxBatch) break;
    more = (round == 7);
  }
  return more;
}

void Endpoint::drain_error_queue(int fd) {
  for (int i = 0; i < 64; ++i) {
    std::array<std::uint8_t, 512> control{};
    std::array<std::uint8_t, 64> data{};
    sockaddr_in offender_dst{};
    iovec iov{data.data(), data.size()};
    msghdr mh{};
    mh.msg_name = &offender_dst;
    mh.msg_namelen = sizeof offender_dst;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control.data();
    mh.msg_controllen = control.size();
    if (::recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
      if (c->cmsg_level != IPPROTO_IP || c->cmsg_type != IP_RECVERR) continue;
      sock_extended_err ee{};
      std::memcpy(&ee, CMSG_DATA(c), sizeof ee);
      ++stats_.icmp_errors;
      // msg_name is the address the failed datagram was sent to.
      on_icmp_unreachable(ipv4_of(offender_dst), static_cast<int>(ee.ee_errno));
    }
  }
}

// ---- ICMP errors and send sockets
// --------------------------------------------------------------------------

void Endpoint::on_icmp_unreachable(std::uint32_t dst_ip, int err) {
  const Clock::time_point now = this->now();
  for (auto& [qpn, e] : qps_) {
    if (e->state != CmState::connecting || e->params.remote_ip != dst_ip) continue;
    ++e->icmp_unreachable;
    if (e->icmp_unreachable >= kIcmpUnreachableLimit) {
      fail_connect(*e, Errc::naa_unreachable,
                   "nothing listens on " + format_ipv4(dst_ip) + ":4791 (" + std::strerror(err) +
                       ", " + std::to_string(e->icmp_unreachable) +
                       " CM REQs refused); is the NAA (naa-sim) running?");
    } else {
      // The NAA may be starting up: try again soon rather than at the full REQ interval.
      e->next_send = std::min(e->next_send, now + milliseconds(100));
    }
  }
  arm_timer();
}

SendSocket& Endpoint::send_socket(std::uint32_t qpn) {
  auto it = send_sockets_.find(qpn);
  if (it != send_sockets_.end()) return it->second;
  SendSocket s;
  int err = 0;
  const std::uint16_t port = protocol::roce_udp_source_port(qpn);
  if (opts_.link) {
    // Co-simulation: no socket; the datagram link carries the per-QP source port.
    s.port = port;
    s.shared_rx = true;
    return send_sockets_.emplace(qpn, std::move(s)).first->second;
  }
  const int fd = open_roce_socket(ip_, port, err);
  if (fd >= 0) {
    s.fd = fd;
    s.port = port;
    s.socket = std::make_unique<asio::ip::udp::socket>(io_);
    s.socket->assign(asio::ip::udp::v4(), fd);
  } else {
    // Port taken (another endpoint's QP hashed to it): PROTOCOL.md 1 says receivers never check
    // the source port, so send from 4791 and put 4791 in the ICRC pseudo-header.
    s.fd = rx_fd_;
    s.port = protocol::kRoceUdpPort;
    s.shared_rx = true;
  }
  auto& ref = send_sockets_.emplace(qpn, std::move(s)).first->second;
  if (!ref.shared_rx) arm_send_socket_errors(qpn);
  return ref;
}

void Endpoint::arm_send_socket_errors(std::uint32_t qpn) {
  auto it = send_sockets_.find(qpn);
  if (it == send_sockets_.end() || stopping_) return;
  SendSocket& s = it->second;
  s.socket->async_receive(
      asio::buffer(s.peek), asio::socket_base::message_peek,
      [this, qpn](const boost::system::error_code& ec, std::size_t) {
        std::unique_lock lock(mu_);
        if (stopping_ || ec == asio::error::operation_aborted) return;
        auto i = send_sockets_.find(qpn);
        if (i == send_sockets_.end()) return;
        drain_error_queue(i->second.fd);
        // Nothing should be sent to a per-QP source port; discard what is.
        std::array<std::uint8_t, 64> junk{};
        while (::recv(i->second.fd, junk.data(), junk.size(), MSG_DONTWAIT) >= 0) {
          ++stats_.dropped_other;
        }
        arm_send_socket_errors(qpn);
        finish_handler(lock);
      });
}

// ---- Transmit
// --------------------------------------------------------------------------------------

void Endpoint::send_packet(std::uint32_t local_qpn, std::uint32_t dst_ip,
                           const protocol::PacketHeaders& headers, ByteView payload) {
  const SendSocket& s = send_socket(local_qpn);
  const std::size_t n = protocol::packet_size(headers, payload.size());
  // Inside a TxBatch scope (the usual case) the datagram is encoded straight into its slot of
  // the batch: its payload is copied once on its way to the socket, not into tx_buf_ and then
  // again into the batch (issue 31). Injected faults and the co-simulation's link take tx_buf_.
  const bool batched = !opts_.link && tx_queue_.depth > 0 && !tx_fault_.active() &&
                       tx_held_.empty() && n <= kRxBufferSize;
  std::span<std::uint8_t> buf;
  if (batched) {
    buf = tx_slot(s.fd);
  } else {
    if (tx_buf_.size() < n) tx_buf_.resize(n);
    buf = tx_buf_;
  }
  auto encoded = protocol::encode_packet(headers, payload, buf);
  if (!encoded) {
    ++stats_.dropped_other;
    return;
  }
  const protocol::MutableByteView datagram(buf.data(), *encoded);
  const protocol::Ipv4UdpHeaders ctx = protocol::make_roce_headers(ip_, s.port, dst_ip, *encoded);
  protocol::write_icrc(ctx, datagram);
  const sockaddr_in to = make_sockaddr(dst_ip, protocol::kRoceUdpPort);
  if (batched) {
    commit_tx(to, datagram.size());  // flush_tx() sends it, handling ICMP errors as below
  } else if (tx_fault_.active() || !tx_held_.empty()) {
    fault_send(local_qpn, ctx, datagram);
    return;
  } else if (opts_.link) {
    opts_.link->send(datagram, ip_, s.port, dst_ip);
  } else if (tx_queue_.depth > 0 && enqueue_tx(s.fd, to, datagram)) {
    // flush_tx() sends it, with the same handling of ICMP errors as below.
  } else {
    send_now(s.fd, to, datagram);
  }
  ++stats_.packets_sent;
  stats_.bytes_sent += datagram.size();
  if (pcap_.is_open()) pcap_.write_roce(wall_ns(), ctx, datagram);
}

// One datagram now; a queued ICMP error (IP_RECVERR) reported instead is handled and the
// datagram sent once more.
void Endpoint::send_now(int fd, const sockaddr_in& to, ByteView datagram) {
  for (int attempt = 0; attempt < 2 && !opts_.link; ++attempt) {
    ++stats_.send_system_calls;
    const ssize_t r = ::sendto(fd, datagram.data(), datagram.size(), 0, as_sockaddr(to), sizeof to);
    if (r >= 0) break;
    // IP_RECVERR reports a queued ICMP error on the next call; the datagram was not sent.
    const int err = errno;
    if (err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH) {
      drain_error_queue(fd);
      if (err == EHOSTUNREACH || err == ENETUNREACH) on_icmp_unreachable(ipv4_of(to), err);
      continue;
    }
    ++stats_.dropped_other;  // EAGAIN/ENOBUFS: lost like on a wire; retransmission recovers
    break;
  }
}

// ---- Network impairment (naa::impair, docs/reliability.md)
// ------------------------------------

void Endpoint::receive_datagram(std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                                std::uint16_t src_port, std::uint32_t dst_ip,
                                Clock::time_point now) {
  if (!rx_fault_.active() && rx_held_.empty()) {
    on_datagram(data, n, src_ip, src_port, dst_ip, now);
    return;
  }
  const protocol::Ipv4UdpHeaders ctx = protocol::make_roce_headers(src_ip, src_port, dst_ip, n);
  auto deliver = [&](protocol::MutableByteView& d) {
    on_datagram(d.data(), d.size(), src_ip, src_port, dst_ip, now);
  };
  protocol::MutableByteView datagram(data, n);
  impair::pass(rx_fault_, rx_held_, datagram, datagram, now + kReorderHold,
               impair::make_steps(
                   /*discard=*/[](protocol::MutableByteView&) {},
                   /*deliver_copy=*/deliver,  // on_datagram() does not modify the bytes
                                              /*corrupt=*/
                   [&](protocol::MutableByteView& d, std::uint64_t bit) {
                     rx_fault_.corrupt(
                         d.data(), d.size(), bit,
                         [&](std::span<const std::uint8_t> b) { return icrc_rejects(ctx, b); });
                   },
                   /*keep=*/
                   [&](protocol::MutableByteView& d) {
                     return HeldDatagram{std::vector<std::uint8_t>(d.begin(), d.end()), ctx, 0};
                   },
                   /*deliver=*/deliver,
                   /*release=*/[&](HeldDatagram& h) { release_held(true, h, now); }));
  if (!rx_held_.empty()) arm_timer();
}

void Endpoint::fault_send(std::uint32_t local_qpn, const protocol::Ipv4UdpHeaders& ctx,
                          protocol::MutableByteView datagram) {
  const int fd = send_socket(local_qpn).fd;
  const Clock::time_point now = this->now();
  auto send = [&](protocol::MutableByteView& d) { transmit(fd, ctx, d); };
  impair::pass(
      tx_fault_, tx_held_, datagram, datagram, now + kReorderHold,
      impair::make_steps(
          /*discard=*/[](protocol::MutableByteView&) {},
          /*deliver_copy=*/send,
          /*corrupt=*/
          [&](protocol::MutableByteView& d, std::uint64_t bit) {
            tx_fault_.corrupt(d.data(), d.size(), bit, [&](std::span<const std::uint8_t> b) {
              return icrc_rejects(ctx, b);
            });
          },
          /*keep=*/
          [&](protocol::MutableByteView& d) {
            return HeldDatagram{std::vector<std::uint8_t>(d.begin(), d.end()), ctx, local_qpn};
          },
          /*deliver=*/send,
          /*release=*/[&](HeldDatagram& h) { release_held(false, h, now); }));
  if (!tx_held_.empty()) arm_timer();
}

// The send path of send_packet() for a datagram that went through the tx injector.
void Endpoint::transmit(int fd, const protocol::Ipv4UdpHeaders& ctx, ByteView datagram) {
  const sockaddr_in to = make_sockaddr(ctx.ip.dst, protocol::kRoceUdpPort);
  if (opts_.link) {
    opts_.link->send(datagram, ctx.ip.src, ctx.udp.src_port, ctx.ip.dst);
  } else if (tx_queue_.depth > 0 && enqueue_tx(fd, to, datagram)) {
    // sent by flush_tx()
  } else {
    send_now(fd, to, datagram);
  }
  ++stats_.packets_sent;
  stats_.bytes_sent += datagram.size();
  if (pcap_.is_open()) pcap_.write_roce(wall_ns(), ctx, datagram);
}

void Endpoint::release_held(bool rx, HeldDatagram& h, Clock::time_point now) {
  if (rx) {
    on_datagram(h.bytes.data(), h.bytes.size(), h.ctx.ip.src, h.ctx.udp.src_port, h.ctx.ip.dst,
                now);
    return;
  }
  // The QP may have gone meanwhile (its socket closed): then the datagram is lost.
  auto it = send_sockets_.find(h.local_qpn);
  if (it != send_sockets_.end() || h.local_qpn == kCmQpn) {
    transmit(send_socket(h.local_qpn).fd, h.ctx, h.bytes);
  }
}

// Held datagrams whose hold time passed without enough traffic to overtake them.
void Endpoint::release_held_due(Clock::time_point now) {
  rx_held_.release_due(now, [&](HeldDatagram& h) { release_held(true, h, now); });
  tx_held_.release_due(now, [&](HeldDatagram& h) { release_held(false, h, now); });
}

}  // namespace naa::host::detail
