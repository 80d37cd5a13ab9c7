// The UdpRoce endpoint: sockets, the IB CM active side, packet dispatch to RC queue pairs, timers
// and the two progress models. The RC rules themselves live in rc_qp.cpp.
#include "naa/host/udp_roce.hpp"

#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "fault_injector.hpp"
#include "mr_table.hpp"
#include "naa/host/error.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"
#include "rc_qp.hpp"

namespace naa::host {

std::optional<std::uint32_t> parse_ipv4(const std::string& text) noexcept {
  in_addr a{};
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::string format_ipv4(std::uint32_t ip) {
  char buf[16];
  const std::size_t n = protocol::format_ipv4(ip, buf, sizeof buf);
  return std::string(buf, n);
}

namespace detail {
namespace {

namespace asio = boost::asio;
using protocol::ByteView;
using std::chrono::milliseconds;

constexpr std::size_t kRxBatch = 32;
constexpr std::size_t kRxBufferSize = 9216;
constexpr std::uint32_t kCmQpn = protocol::kCmQpn;
constexpr int kIcmpUnreachableLimit = 3;         // port unreachables before naa_unreachable
constexpr std::uint8_t kCmResponseTimeout = 20;  // as Linux CMA_CM_RESPONSE_TIMEOUT
constexpr std::uint8_t kMaxCmRetries = 15;       // as Linux CMA_MAX_CM_RETRIES

std::uint64_t wall_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

sockaddr_in make_sockaddr(std::uint32_t ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(ip);
  return a;
}

std::string errno_text(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

template <class T>
int set_opt(int fd, int level, int name, T value) {
  return ::setsockopt(fd, level, name, &value, sizeof value);
}

// A UDP socket set up as PROTOCOL.md 1 requires: not connected, PMTU discovery "do" (IPv4 ID 0 and
// DF), ICMP errors queued (IP_RECVERR) so that "nothing listens there" is reported, not guessed.
int open_roce_socket(std::uint32_t ip, std::uint16_t port, int& err) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    err = errno;
    return -1;
  }
  if (set_opt(fd, IPPROTO_IP, IP_MTU_DISCOVER, int{IP_PMTUDISC_DO}) != 0 ||
      set_opt(fd, IPPROTO_IP, IP_RECVERR, int{1}) != 0 ||
      set_opt(fd, SOL_SOCKET, SO_SNDBUF, int{4 << 20}) != 0) {
    err = errno;
    ::close(fd);
    return -1;
  }
  const sockaddr_in a = make_sockaddr(ip, port);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {  // NOLINT: sockets API
    err = errno;
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string printable(ByteView bytes) {
  std::string s;
  for (std::uint8_t c : bytes) {
    if (c == 0) break;
    s.push_back(c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '.');
  }
  return s;
}

}  // namespace

class Endpoint;

// A send-only socket bound to <local-ip>:<per-QP source port> (PROTOCOL.md 1).
struct SendSocket {
  std::unique_ptr<asio::ip::udp::socket> socket;  // for ICMP error notifications
  int fd = -1;
  std::uint16_t port = protocol::kRoceUdpPort;
  bool shared_rx = false;  // fell back to the 4791 socket
  std::array<std::uint8_t, 1> peek{};
};

enum class CmState : std::uint8_t { connecting, established, disconnecting, closed };

struct QpEntry {
  std::uint32_t qpn = 0;
  CmState state = CmState::connecting;
  ConnectParams params;
  std::unique_ptr<RcQp> rc;
  std::error_code error;  // why connecting failed / why the QP closed
  std::string detail;
  std::function<void()> callback;
  // IB CM.
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint32_t remote_qpn = 0;
  std::uint64_t tid = 0;
  std::uint32_t recv_psn = 0;  // our REQ's starting PSN: what the NAA sends with
  Clock::time_point deadline{};
  Clock::time_point next_send{};
  milliseconds interval{};
  int reqs_sent = 0;
  int icmp_unreachable = 0;
  protocol::CmMad pending_mad;  // REQ or DREQ, for retransmission
};

class Endpoint final : public Transport,
                       public PacketSink,
                       public std::enable_shared_from_this<Endpoint> {
 public:
  Endpoint(const UdpRoceOptions& options, std::uint32_t ip, int rx_fd);
  ~Endpoint() override;

  void start();
  // Before start() only.
  std::error_code open_pcap(const std::string& path) { return pcap_.open(path); }

  // Transport.
  std::string name() const override { return "udp-roce " + format_ipv4(ip_) + ":4791"; }
  std::uint32_t local_ip() const noexcept override { return ip_; }
  std::error_code register_memory(void* addr, std::size_t length, Access access,
                                  MemoryRegion& out) override {
    std::lock_guard lock(mu_);
    return mrs_.add(addr, length, access, out);
  }
  std::error_code deregister_memory(const MemoryRegion& mr) override {
    std::lock_guard lock(mu_);
    return mrs_.remove(mr.lkey);
  }
  void inject(std::span<const std::uint8_t> datagram, std::uint32_t src_ip,
              std::uint16_t src_port) {
    std::unique_lock lock(mu_);
    if (stopping_) return;
    std::vector<std::uint8_t> copy(datagram.begin(), datagram.end());
    on_datagram(copy.data(), copy.size(), src_ip, src_port, ip_, Clock::now());
    finish_handler(lock);
  }
  void set_faults(const FaultOptions& rx, const FaultOptions& tx) {
    std::lock_guard lock(mu_);
    rx_fault_.set_spec(rx);
    tx_fault_.set_spec(tx);
  }
  std::uint64_t remote_bytes_written(const MemoryRegion& mr) const override {
    std::lock_guard lock(mu_);
    return mrs_.written(mr.lkey);
  }
  std::unique_ptr<QueuePair> connect(const ConnectParams& params, std::error_code& ec,
                                     std::string* detail) override;
  void progress(std::chrono::nanoseconds timeout) override;
  TransportStats stats() const override;

  // PacketSink (called with mu_ held).
  void send_packet(std::uint32_t local_qpn, std::uint32_t dst_ip,
                   const protocol::PacketHeaders& headers, ByteView payload) override;

  // For UdpQp (each takes mu_).
  std::error_code qp_error(std::uint32_t qpn) const;
  std::error_code post_send(std::uint32_t qpn, const SendWr& wr);
  std::error_code post_recv(std::uint32_t qpn, const RecvWr& wr);
  std::size_t poll_cq(std::uint32_t qpn, std::span<WorkCompletion> out);
  std::size_t wait_cq(std::uint32_t qpn, std::span<WorkCompletion> out,
                      std::chrono::nanoseconds timeout);
  void set_callback(std::uint32_t qpn, std::function<void()> cb);
  std::error_code disconnect(std::uint32_t qpn, milliseconds timeout, bool wait);
  void release(std::uint32_t qpn);

 private:
  // All below run with mu_ held unless named *_unlocked.
  void arm_receive();
  void on_readable(const boost::system::error_code& ec);
  void drain_error_queue(int fd);
  void on_icmp_unreachable(std::uint32_t dst_ip, int err);
  void on_datagram(const std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                   std::uint16_t src_port, std::uint32_t dst_ip, Clock::time_point now);
  void on_cm(std::uint32_t src_ip, ByteView mad, Clock::time_point now);
  void on_timer(const boost::system::error_code& ec);
  void run_timers(Clock::time_point now);
  void arm_timer();
  SendSocket& send_socket(std::uint32_t qpn);
  void arm_send_socket_errors(std::uint32_t qpn);
  void send_mad(std::uint32_t dst_ip, const protocol::CmMad& mad);
  protocol::CmMad make_req(const QpEntry& e) const;
  void send_rtu(const QpEntry& e);
  void send_rej(std::uint32_t dst_ip, std::uint32_t local_comm_id, std::uint32_t remote_comm_id,
                std::uint64_t tid, std::uint8_t message, std::uint16_t reason);
  void fail_connect(QpEntry& e, std::error_code ec, std::string detail);
  QpEntry* find_by_comm_id(std::uint32_t local_comm_id);
  void collect_callbacks(std::vector<std::function<void()>>& out);
  void finish_handler(std::unique_lock<std::mutex>& lock);
  // Fault injection (fault_injector.hpp; docs/reliability.md).
  struct HeldDatagram {
    std::vector<std::uint8_t> bytes;
    protocol::Ipv4UdpHeaders ctx;  // the 4-tuple (tx: of the sending QP's socket)
    std::uint32_t local_qpn = 0;   // tx: selects the socket again at release
    std::uint32_t overtakes_left = 0;
    Clock::time_point deadline{};
  };
  void receive_datagram(std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                        std::uint16_t src_port, std::uint32_t dst_ip, Clock::time_point now);
  void fault_send(std::uint32_t local_qpn, const protocol::Ipv4UdpHeaders& ctx,
                  protocol::MutableByteView datagram);
  void transmit(int fd, const protocol::Ipv4UdpHeaders& ctx, ByteView datagram);
  void release_overtaken(bool rx, Clock::time_point now);
  void release_held_due(Clock::time_point now);
  void release_one(bool rx, HeldDatagram& h, Clock::time_point now);

  UdpRoceOptions opts_;
  const std::uint32_t ip_;
  asio::io_context io_;
  asio::ip::udp::socket rx_;
  int rx_fd_ = -1;
  asio::steady_timer timer_;
  std::optional<Clock::time_point> timer_armed_at_;
  std::array<std::uint8_t, 1> rx_peek_{};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::mutex progress_mu_;  // manual mode: one thread drives io_ at a time
  std::thread thread_;
  bool stopping_ = false;

  MrTable mrs_;
  RcCounters rc_counters_;
  TransportStats stats_;
  std::map<std::uint32_t, std::unique_ptr<QpEntry>> qps_;
  std::map<std::uint32_t, SendSocket> send_sockets_;
  std::uint32_t next_qpn_;
  std::uint32_t cm_psn_ = 0;
  std::mt19937_64 rng_;
  protocol::PcapWriter pcap_;
  std::vector<std::uint8_t> tx_buf_;
  std::vector<std::array<std::uint8_t, kRxBufferSize>> rx_bufs_;
  FaultInjector rx_fault_, tx_fault_;
  std::deque<HeldDatagram> rx_held_, tx_held_;
};

// ---- The QueuePair handle
// ------------------------------------------------------------------------

class UdpQp final : public QueuePair {
 public:
  UdpQp(std::shared_ptr<Endpoint> ep, std::uint32_t qpn, std::uint32_t remote_qpn,
        std::uint32_t mtu)
      : ep_(std::move(ep)), qpn_(qpn), remote_qpn_(remote_qpn), mtu_(mtu) {}
  ~UdpQp() override {
    (void)ep_->disconnect(qpn_, milliseconds(0), false);
    ep_->release(qpn_);
  }
  std::uint32_t qp_num() const noexcept override { return qpn_; }
  std::uint32_t remote_qp_num() const noexcept override { return remote_qpn_; }
  std::uint32_t path_mtu() const noexcept override { return mtu_; }
  std::error_code error() const override { return ep_->qp_error(qpn_); }
  std::error_code post_send(const SendWr& wr) override { return ep_->post_send(qpn_, wr); }
  std::error_code post_recv(const RecvWr& wr) override { return ep_->post_recv(qpn_, wr); }
  std::size_t poll_cq(std::span<WorkCompletion> out) override { return ep_->poll_cq(qpn_, out); }
  std::size_t wait_cq(std::span<WorkCompletion> out, std::chrono::nanoseconds timeout) override {
    return ep_->wait_cq(qpn_, out, timeout);
  }
  void set_completion_callback(std::function<void()> cb) override {
    ep_->set_callback(qpn_, std::move(cb));
  }
  std::error_code disconnect(milliseconds timeout) override {
    return ep_->disconnect(qpn_, timeout, true);
  }

 private:
  std::shared_ptr<Endpoint> ep_;
  std::uint32_t qpn_;
  std::uint32_t remote_qpn_;
  std::uint32_t mtu_;
};

// ---- Endpoint
// ------------------------------------------------------------------------------------

Endpoint::Endpoint(const UdpRoceOptions& options, std::uint32_t ip, int rx_fd)
    : opts_(options),
      ip_(ip),
      rx_(io_),
      rx_fd_(rx_fd),
      timer_(io_),
      mrs_(options.seed != 0 ? options.seed : std::random_device{}()),
      next_qpn_(std::max<std::uint32_t>(options.first_qpn, 2)),
      rng_(options.seed != 0
               ? options.seed ^ 0x9E3779B97F4A7C15ULL
               : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()),
      rx_bufs_(kRxBatch),
      rx_fault_(options.fault_rx, FaultInjector::mix_seed(options.fault_seed ^ 0x5258U)),
      tx_fault_(options.fault_tx, FaultInjector::mix_seed(options.fault_seed ^ 0x5458U)) {
  rx_.assign(asio::ip::udp::v4(), rx_fd);
  cm_psn_ = static_cast<std::uint32_t>(rng_()) & protocol::kMax24;
}

Endpoint::~Endpoint() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  io_.stop();
  if (thread_.joinable()) thread_.join();
  for (auto& [qpn, s] : send_sockets_) {
    if (!s.shared_rx && s.socket) s.socket->close();
  }
  rx_.close();
  pcap_.close();
}

void Endpoint::start() {
  std::lock_guard lock(mu_);
  arm_receive();
  if (opts_.progress == Progress::automatic) {
    thread_ = std::thread([this] {
      auto guard = asio::make_work_guard(io_);
      io_.run();
    });
  }
}

TransportStats Endpoint::stats() const {
  std::lock_guard lock(mu_);
  TransportStats s = stats_;
  s.retransmitted_packets = rc_counters_.retransmitted_packets;
  s.timeouts = rc_counters_.timeouts;
  s.seq_naks_received = rc_counters_.seq_naks_received;
  s.rnr_naks_received = rc_counters_.rnr_naks_received;
  s.seq_naks_sent = rc_counters_.seq_naks_sent;
  s.rnr_naks_sent = rc_counters_.rnr_naks_sent;
  s.duplicates_received = rc_counters_.duplicates_received;
  s.dropped_out_of_order = rc_counters_.dropped_out_of_order;
  s.dropped_other += rc_counters_.dropped_other;
  s.fault_rx_loss = rx_fault_.counters().dropped;
  s.fault_rx_dup = rx_fault_.counters().duplicated;
  s.fault_rx_reorder = rx_fault_.counters().reordered;
  s.fault_rx_corrupt = rx_fault_.counters().corrupted;
  s.fault_tx_loss = tx_fault_.counters().dropped;
  s.fault_tx_dup = tx_fault_.counters().duplicated;
  s.fault_tx_reorder = tx_fault_.counters().reordered;
  s.fault_tx_corrupt = tx_fault_.counters().corrupted;
  return s;
}

void Endpoint::progress(std::chrono::nanoseconds timeout) {
  if (opts_.progress == Progress::automatic) return;
  std::unique_lock pl(progress_mu_, std::try_to_lock);
  if (!pl) {
    // Another thread drives the endpoint; its handlers notify cv_ when completions arrive.
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::min<std::chrono::nanoseconds>(timeout, milliseconds(2)));
    return;
  }
  if (io_.stopped()) io_.restart();
  if (timeout.count() > 0) {
    io_.run_one_for(timeout);
  }
  io_.poll();
}

// ---- Sockets
// -------------------------------------------------------------------------------------

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
  std::array<mmsghdr, kRxBatch> msgs{};
  std::array<iovec, kRxBatch> iov{};
  std::array<sockaddr_in, kRxBatch> from{};
  std::array<std::array<std::uint8_t, CMSG_SPACE(sizeof(in_pktinfo))>, kRxBatch> ctrl{};
  bool more = false;
  for (int round = 0; round < 8; ++round) {
    for (std::size_t i = 0; i < kRxBatch; ++i) {
      iov[i] = {rx_bufs_[i].data(), rx_bufs_[i].size()};
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
      for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr;
           c = CMSG_NXTHDR(const_cast<msghdr*>(&mh), c)) {  // NOLINT: C API
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
          in_pktinfo pi{};
          std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
          dst_ip = ntohl(pi.ipi_addr.s_addr);
        }
      }
      const auto len = msgs[static_cast<std::size_t>(i)].msg_len;
      if ((mh.msg_flags & MSG_TRUNC) != 0) {
        ++stats_.dropped_malformed;
        continue;
      }
      const sockaddr_in& f = from[static_cast<std::size_t>(i)];
      receive_datagram(rx_bufs_[static_cast<std::size_t>(i)].data(), len, ntohl(f.sin_addr.s_addr),
                       ntohs(f.sin_port), dst_ip, now);
    }
    if (static_cast<std::size_t>(n) < kRxBatch) break;
    more = (round == 7);
  }
  if (more) {
    asio::post(io_, [this] { on_readable({}); });
  } else {
    arm_receive();
  }
  finish_handler(lock);
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
      on_icmp_unreachable(ntohl(offender_dst.sin_addr.s_addr), static_cast<int>(ee.ee_errno));
    }
  }
}

void Endpoint::on_icmp_unreachable(std::uint32_t dst_ip, int err) {
  const Clock::time_point now = Clock::now();
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

void Endpoint::send_packet(std::uint32_t local_qpn, std::uint32_t dst_ip,
                           const protocol::PacketHeaders& headers, ByteView payload) {
  const SendSocket& s = send_socket(local_qpn);
  const std::size_t n = protocol::packet_size(headers, payload.size());
  if (tx_buf_.size() < n) tx_buf_.resize(n);
  auto encoded = protocol::encode_packet(headers, payload, tx_buf_);
  if (!encoded) {
    ++stats_.dropped_other;
    return;
  }
  const protocol::MutableByteView datagram(tx_buf_.data(), *encoded);
  const protocol::Ipv4UdpHeaders ctx = protocol::make_roce_headers(ip_, s.port, dst_ip, *encoded);
  protocol::write_icrc(ctx, datagram);
  if (tx_fault_.active() || !tx_held_.empty()) {
    fault_send(local_qpn, ctx, datagram);
    return;
  }
  const sockaddr_in to = make_sockaddr(dst_ip, protocol::kRoceUdpPort);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const ssize_t r = ::sendto(s.fd, datagram.data(), datagram.size(), 0,
                               reinterpret_cast<const sockaddr*>(&to), sizeof to);  // NOLINT
    if (r >= 0) break;
    // IP_RECVERR reports a queued ICMP error on the next call; the datagram was not sent.
    if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH) {
      drain_error_queue(s.fd);
      if (errno == EHOSTUNREACH || errno == ENETUNREACH) on_icmp_unreachable(dst_ip, errno);
      continue;
    }
    ++stats_.dropped_other;  // EAGAIN/ENOBUFS: lost like on a wire; retransmission recovers
    break;
  }
  ++stats_.packets_sent;
  stats_.bytes_sent += datagram.size();
  if (pcap_.is_open()) pcap_.write_roce(wall_ns(), ctx, datagram);
}

// ---- Fault injection (docs/reliability.md)
// ----------------------------------------------------------------------

void Endpoint::receive_datagram(std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                                std::uint16_t src_port, std::uint32_t dst_ip,
                                Clock::time_point now) {
  if (!rx_fault_.active() && rx_held_.empty()) {
    on_datagram(data, n, src_ip, src_port, dst_ip, now);
    return;
  }
  const protocol::Ipv4UdpHeaders ctx = protocol::make_roce_headers(src_ip, src_port, dst_ip, n);
  FaultInjector::Decision d;
  if (rx_fault_.active()) d = rx_fault_.decide();
  if (d.drop) return;
  if (d.duplicate) on_datagram(data, n, src_ip, src_port, dst_ip, now);  // intact copy first
  if (d.corrupt) rx_fault_.corrupt(data, n, ctx, d.bit);
  if (d.reorder) {
    rx_held_.push_back(HeldDatagram{std::vector<std::uint8_t>(data, data + n), ctx, 0,
                                    rx_fault_.spec().reorder_delay,
                                    now + FaultInjector::kReorderHold});
    arm_timer();
    return;
  }
  on_datagram(data, n, src_ip, src_port, dst_ip, now);
  release_overtaken(true, now);
}

void Endpoint::fault_send(std::uint32_t local_qpn, const protocol::Ipv4UdpHeaders& ctx,
                          protocol::MutableByteView datagram) {
  const int fd = send_socket(local_qpn).fd;
  const Clock::time_point now = Clock::now();
  FaultInjector::Decision d;
  if (tx_fault_.active()) d = tx_fault_.decide();
  if (d.drop) return;
  if (d.duplicate) transmit(fd, ctx, datagram);  // intact copy first
  if (d.corrupt) tx_fault_.corrupt(datagram.data(), datagram.size(), ctx, d.bit);
  if (d.reorder) {
    tx_held_.push_back(HeldDatagram{std::vector<std::uint8_t>(datagram.begin(), datagram.end()),
                                    ctx, local_qpn, tx_fault_.spec().reorder_delay,
                                    now + FaultInjector::kReorderHold});
    arm_timer();
    return;
  }
  transmit(fd, ctx, datagram);
  release_overtaken(false, now);
}

// The send path of send_packet() for a datagram that went through the tx injector.
void Endpoint::transmit(int fd, const protocol::Ipv4UdpHeaders& ctx, ByteView datagram) {
  const sockaddr_in to = make_sockaddr(ctx.ip.dst, protocol::kRoceUdpPort);
  if (::sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<const sockaddr*>(&to),
               sizeof to) < 0) {  // NOLINT: sockets API
    ++stats_.dropped_other;       // lost like on a wire; retransmission recovers
  }
  ++stats_.packets_sent;
  stats_.bytes_sent += datagram.size();
  if (pcap_.is_open()) pcap_.write_roce(wall_ns(), ctx, datagram);
}

void Endpoint::release_one(bool rx, HeldDatagram& h, Clock::time_point now) {
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

// A datagram passed in direction rx/tx: held ones that it was the last to overtake follow.
void Endpoint::release_overtaken(bool rx, Clock::time_point now) {
  std::deque<HeldDatagram>& held = rx ? rx_held_ : tx_held_;
  for (HeldDatagram& h : held)
    --h.overtakes_left;
  while (!held.empty() && held.front().overtakes_left == 0) {
    HeldDatagram h = std::move(held.front());
    held.pop_front();
    release_one(rx, h, now);
  }
}

// Held datagrams whose hold time passed without enough traffic to overtake them.
void Endpoint::release_held_due(Clock::time_point now) {
  for (const bool rx : {true, false}) {
    std::deque<HeldDatagram>& held = rx ? rx_held_ : tx_held_;
    while (!held.empty() && held.front().deadline <= now) {
      HeldDatagram h = std::move(held.front());
      held.pop_front();
      release_one(rx, h, now);
    }
  }
}

// ---- Receive dispatch
// ----------------------------------------------------------------------------

void Endpoint::on_datagram(const std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                           std::uint16_t src_port, std::uint32_t dst_ip, Clock::time_point now) {
  ++stats_.packets_received;
  stats_.bytes_received += n;
  const ByteView bytes(data, n);
  const protocol::Ipv4UdpHeaders ctx = protocol::make_roce_headers(src_ip, src_port, dst_ip, n);
  const std::optional<std::uint16_t> id = protocol::recover_ipv4_id(ctx, bytes);
  if (pcap_.is_open()) {
    pcap_.write_roce(
        wall_ns(), protocol::make_roce_headers(src_ip, src_port, dst_ip, n, id.value_or(0)), bytes);
  }
  if (!id) {
    ++stats_.dropped_bad_icrc;  // never acted on (PROTOCOL.md 2)
    return;
  }
  auto packet = protocol::decode_packet(bytes);
  if (!packet) {
    ++stats_.dropped_malformed;
    return;
  }
  const protocol::PacketHeaders& h = packet->headers;
  if (h.bth.dest_qpn == kCmQpn) {
    if (h.bth.opcode != protocol::opcode::kUdSendOnly || !h.deth ||
        h.deth->qkey != protocol::kCmQKey) {
      ++stats_.dropped_malformed;
      return;
    }
    on_cm(src_ip, packet->payload, now);
    return;
  }
  auto it = qps_.find(h.bth.dest_qpn);
  if (it == qps_.end() || !it->second->rc || it->second->state != CmState::established ||
      it->second->params.remote_ip != src_ip) {
    ++stats_.dropped_unknown_qp;
    return;
  }
  it->second->rc->on_packet(*packet, now);
}

// ---- IB CM, active side (PROTOCOL.md 4 and 8)
// ------------------------------------------------------

protocol::CmMad Endpoint::make_req(const QpEntry& e) const {
  const ConnectParams& p = e.params;
  protocol::CmReq req;
  req.local_comm_id = e.local_comm_id;
  req.service_id = protocol::rdma_cm_service_id(p.cm_port);
  // A node GUID in EUI-64 form from our locally administered MAC (02:00:a:b:c:d).
  const protocol::MacAddress mac = protocol::mac_for_ipv4(ip_);
  req.local_ca_guid = (std::uint64_t{mac[0]} << 56) | (std::uint64_t{mac[1]} << 48) |
                      (std::uint64_t{mac[2]} << 40) | (0xFFFEULL << 24) |
                      (std::uint64_t{mac[3]} << 16) | (std::uint64_t{mac[4]} << 8) | mac[5];
  req.local_qpn = e.qpn;
  req.responder_resources = p.responder_resources;
  req.initiator_depth = p.initiator_depth;
  req.remote_cm_response_timeout = kCmResponseTimeout;
  req.transport_service_type = protocol::kCmTransportRc;
  req.end_to_end_flow_control = true;
  req.starting_psn = e.recv_psn;  // the PSN the NAA will send with (PROTOCOL.md 4, PSN rule)
  req.local_cm_response_timeout = kCmResponseTimeout;
  req.retry_count = p.retry_count;
  req.pkey = protocol::kDefaultPkey;
  req.path_mtu = protocol::ib_mtu_enum(p.path_mtu).value_or(5);
  req.rnr_retry_count = p.rnr_retry_count;
  req.max_cm_retries = kMaxCmRetries;
  req.primary_local_lid = 0xFFFF;  // permissive LID: RoCE has no LIDs
  req.primary_remote_lid = 0xFFFF;
  req.primary_local_gid = protocol::ipv4_mapped_gid(ip_);
  req.primary_remote_gid = protocol::ipv4_mapped_gid(p.remote_ip);
  req.primary_hop_limit = 64;
  req.primary_subnet_local = true;
  req.primary_local_ack_timeout = p.local_ack_timeout;
  // rdma_cm private data: the 36-byte IP header, then the user's bytes.
  protocol::RdmaCmIpHeader cma;
  cma.src_port = static_cast<std::uint16_t>(32768 + (e.local_comm_id % 28232));  // ephemeral
  cma.src_ip = ip_;
  cma.dst_ip = p.remote_ip;
  (void)protocol::encode_rdma_cm_ip_header(cma, req.private_data);
  const std::size_t user =
      std::min(p.private_data.size(), req.private_data.size() - protocol::kRdmaCmIpHeaderSize);
  std::copy_n(p.private_data.begin(), user,
              req.private_data.begin() + protocol::kRdmaCmIpHeaderSize);
  protocol::CmMad mad;
  mad.header.transaction_id = e.tid;
  mad.body = req;
  return mad;
}

void Endpoint::send_mad(std::uint32_t dst_ip, const protocol::CmMad& mad) {
  std::array<std::uint8_t, protocol::kMadSize> bytes{};
  if (!protocol::encode_cm_mad(mad, bytes)) {
    ++stats_.dropped_other;
    return;
  }
  protocol::PacketHeaders h;
  h.bth.opcode = protocol::opcode::kUdSendOnly;
  h.bth.dest_qpn = kCmQpn;
  h.bth.psn = cm_psn_;
  cm_psn_ = protocol::psn_add(cm_psn_, 1);
  h.deth = protocol::Deth{protocol::kCmQKey, 0, kCmQpn};
  send_packet(kCmQpn, dst_ip, h, bytes);
}

void Endpoint::send_rtu(const QpEntry& e) {
  protocol::CmRtu rtu;
  rtu.local_comm_id = e.local_comm_id;
  rtu.remote_comm_id = e.remote_comm_id;
  protocol::CmMad mad;
  mad.header.transaction_id = e.tid;
  mad.body = rtu;
  send_mad(e.params.remote_ip, mad);
}

void Endpoint::send_rej(std::uint32_t dst_ip, std::uint32_t local_comm_id,
                        std::uint32_t remote_comm_id, std::uint64_t tid, std::uint8_t message,
                        std::uint16_t reason) {
  protocol::CmRej rej;
  rej.local_comm_id = local_comm_id;
  rej.remote_comm_id = remote_comm_id;
  rej.message_rejected = message;
  rej.reason = reason;
  protocol::CmMad mad;
  mad.header.transaction_id = tid;
  mad.body = rej;
  send_mad(dst_ip, mad);
}

void Endpoint::fail_connect(QpEntry& e, std::error_code ec, std::string detail) {
  if (e.state != CmState::connecting) return;
  e.state = CmState::closed;
  e.error = ec;
  e.detail = std::move(detail);
  cv_.notify_all();
}

QpEntry* Endpoint::find_by_comm_id(std::uint32_t local_comm_id) {
  for (auto& [qpn, e] : qps_) {
    if (e->local_comm_id == local_comm_id) return e.get();
  }
  return nullptr;
}

void Endpoint::on_cm(std::uint32_t src_ip, ByteView bytes, Clock::time_point now) {
  auto decoded = protocol::decode_cm_mad(bytes);
  if (!decoded) {
    ++stats_.dropped_malformed;
    return;
  }
  const protocol::CmMad& mad = *decoded;
  const std::uint64_t tid = mad.header.transaction_id;
  if (const auto* rep = std::get_if<protocol::CmRep>(&mad.body)) {
    QpEntry* e = find_by_comm_id(rep->remote_comm_id);
    if (e == nullptr || e->params.remote_ip != src_ip) {
      // A REP for an attempt we gave up on: tell the NAA, so it frees the QP (as Linux does).
      send_rej(src_ip, rep->remote_comm_id, rep->local_comm_id, tid, protocol::kCmRejMessageRep,
               protocol::kCmRejInvalidCommId);
      return;
    }
    if (e->state == CmState::connecting) {
      if (rep->local_qpn == 0) {
        fail_connect(*e, Errc::connection_rejected, "REP names QPN 0");
        return;
      }
      e->remote_comm_id = rep->local_comm_id;
      e->remote_qpn = rep->local_qpn;
      RcConfig cfg;
      cfg.qpn = e->qpn;
      cfg.remote_qpn = rep->local_qpn;
      cfg.remote_ip = src_ip;
      cfg.send_psn = rep->starting_psn;  // PROTOCOL.md 4: the REP's PSN is what we start with
      cfg.recv_psn = e->recv_psn;
      cfg.mtu = e->params.path_mtu;
      cfg.local_ack_timeout = e->params.local_ack_timeout;
      cfg.retry_count = e->params.retry_count;
      cfg.rnr_retry = rep->rnr_retry_count;  // the passive side's wish, as Linux applies it
      cfg.max_reads_outstanding = std::min(e->params.initiator_depth, rep->responder_resources);
      e->rc = std::make_unique<RcQp>(cfg, mrs_, *this, rc_counters_);
      e->state = CmState::established;
      send_rtu(*e);
      cv_.notify_all();
    } else if (e->state == CmState::established && e->remote_comm_id == rep->local_comm_id) {
      send_rtu(*e);  // our RTU was lost: the NAA repeats its REP
    }
    return;
  }
  if (const auto* rej = std::get_if<protocol::CmRej>(&mad.body)) {
    QpEntry* e = find_by_comm_id(rej->remote_comm_id);
    if (e == nullptr || e->state != CmState::connecting) return;
    std::string detail = "connection to " + format_ipv4(src_ip) + " CM port " +
                         std::to_string(e->params.cm_port) + " rejected: REJ reason " +
                         std::to_string(rej->reason) + " (" +
                         std::string(protocol::cm_rej_reason_name(rej->reason)) + ")";
    const std::string why = printable(rej->private_data);
    if (!why.empty()) detail += ": " + why;
    fail_connect(*e,
                 rej->reason == protocol::kCmRejInvalidServiceId ? Errc::connection_refused
                                                                 : Errc::connection_rejected,
                 detail);
    return;
  }
  if (const auto* mra = std::get_if<protocol::CmMra>(&mad.body)) {
    QpEntry* e = find_by_comm_id(mra->remote_comm_id);
    if (e == nullptr || e->state != CmState::connecting) return;
    // The NAA needs more time: hold the REQ retries for its service timeout (IBTA 12.6.6).
    const auto wait =
        std::chrono::nanoseconds(protocol::local_ack_timeout_ns(mra->service_timeout));
    e->next_send =
        std::min(e->deadline, now + std::max<std::chrono::nanoseconds>(wait, e->interval));
    arm_timer();
    return;
  }
  if (const auto* dreq = std::get_if<protocol::CmDreq>(&mad.body)) {
    // Always answer a DREQ, even for a connection we do not know (PROTOCOL.md 4).
    protocol::CmDrep drep;
    drep.local_comm_id = dreq->remote_comm_id;
    drep.remote_comm_id = dreq->local_comm_id;
    protocol::CmMad reply;
    reply.header.transaction_id = tid;
    reply.body = drep;
    send_mad(src_ip, reply);
    QpEntry* e = find_by_comm_id(dreq->remote_comm_id);
    if (e != nullptr && e->state == CmState::established) {
      e->state = CmState::closed;
      e->rc->to_error(make_error_code(Errc::flushed));
      e->error = Errc::disconnected;
      e->detail = "the NAA closed the connection (DREQ)";
      cv_.notify_all();
    }
    return;
  }
  if (const auto* drep = std::get_if<protocol::CmDrep>(&mad.body)) {
    QpEntry* e = find_by_comm_id(drep->remote_comm_id);
    if (e != nullptr && e->state == CmState::disconnecting) {
      e->state = CmState::closed;
      cv_.notify_all();
    }
    return;
  }
  if (const auto* req = std::get_if<protocol::CmReq>(&mad.body)) {
    // We are the active side only: nobody listens here.
    send_rej(src_ip, 0, req->local_comm_id, tid, protocol::kCmRejMessageReq,
             protocol::kCmRejInvalidServiceId);
    return;
  }
  // RTU: not expected by an active side; ignore.
}

std::unique_ptr<QueuePair> Endpoint::connect(const ConnectParams& params, std::error_code& ec,
                                             std::string* detail) {
  ec.clear();
  auto fail = [&](Errc e, std::string text) -> std::unique_ptr<QueuePair> {
    ec = e;
    if (detail != nullptr) *detail = std::move(text);
    return nullptr;
  };
  if (!protocol::ib_mtu_enum(params.path_mtu)) {
    return fail(Errc::invalid_argument, "path MTU must be 256, 512, 1024, 2048 or 4096");
  }
  if (params.retry_count > 7 || params.rnr_retry_count > 7 || params.local_ack_timeout > 31) {
    return fail(Errc::invalid_argument, "retry counts are 3-bit, the ACK timeout 5-bit");
  }
  if (params.private_data.size() > 56) {
    return fail(Errc::invalid_argument, "at most 56 bytes of CM private data");
  }
  std::uint32_t qpn = 0;
  {
    std::unique_lock lock(mu_);
    qpn = next_qpn_;
    next_qpn_ = next_qpn_ + 1 > protocol::kMax24 ? 2 : next_qpn_ + 1;
    auto e = std::make_unique<QpEntry>();
    e->qpn = qpn;
    e->params = params;
    do {
      e->local_comm_id = static_cast<std::uint32_t>(rng_());
    } while (e->local_comm_id == 0 || find_by_comm_id(e->local_comm_id) != nullptr);
    e->tid = (rng_() & 0xFFFFFFFF00000000ULL) | e->local_comm_id;
    e->recv_psn = static_cast<std::uint32_t>(rng_()) & protocol::kMax24;
    const Clock::time_point now = Clock::now();
    e->deadline = now + params.timeout;
    e->interval =
        std::clamp<milliseconds>(params.timeout / 8, milliseconds(50), milliseconds(1000));
    e->pending_mad = make_req(*e);
    QpEntry& ref = *e;
    qps_.emplace(qpn, std::move(e));
    send_mad(params.remote_ip, ref.pending_mad);
    ref.reqs_sent = 1;
    ref.next_send = now + ref.interval;
    arm_timer();
  }
  // Wait for REP (-> established), REJ, unreachable or the deadline (timers fail the attempt).
  for (;;) {
    {
      std::unique_lock lock(mu_);
      QpEntry& e = *qps_.at(qpn);
      if (opts_.progress == Progress::automatic) {
        cv_.wait(lock, [&] { return e.state != CmState::connecting; });
      }
      if (e.state == CmState::established) {
        return std::make_unique<UdpQp>(shared_from_this(), qpn, e.remote_qpn, e.params.path_mtu);
      }
      if (e.state != CmState::connecting) {
        ec = e.error;
        if (detail != nullptr) *detail = e.detail;
        qps_.erase(qpn);
        send_sockets_.erase(qpn);
        return nullptr;
      }
    }
    progress(milliseconds(50));
  }
}

// ---- Timers
// --------------------------------------------------------------------------------------

void Endpoint::arm_timer() {
  if (stopping_) return;
  std::optional<Clock::time_point> next;
  auto consider = [&](Clock::time_point t) {
    if (!next || t < *next) next = t;
  };
  if (!rx_held_.empty()) consider(rx_held_.front().deadline);
  if (!tx_held_.empty()) consider(tx_held_.front().deadline);
  for (auto& [qpn, e] : qps_) {
    if (e->state == CmState::connecting || e->state == CmState::disconnecting) {
      consider(std::min(e->next_send, e->deadline));
    }
    if (e->rc) {
      if (auto d = e->rc->next_deadline()) consider(*d);
    }
  }
  if (!next) return;
  if (timer_armed_at_ && *timer_armed_at_ <= *next) return;  // fires early enough already
  timer_armed_at_ = *next;
  timer_.expires_at(*next);
  timer_.async_wait([this](const boost::system::error_code& ec) { on_timer(ec); });
}

void Endpoint::on_timer(const boost::system::error_code& ec) {
  if (ec == asio::error::operation_aborted) return;  // re-armed earlier; that wait is pending
  std::unique_lock lock(mu_);
  if (stopping_) return;
  timer_armed_at_.reset();
  run_timers(Clock::now());
  finish_handler(lock);
}

void Endpoint::run_timers(Clock::time_point now) {
  release_held_due(now);
  for (auto& [qpn, entry] : qps_) {
    QpEntry& e = *entry;
    if (e.state == CmState::connecting) {
      if (now >= e.deadline) {
        // Give up, and tell the NAA as Linux does (REJ reason 4, timeout).
        send_rej(e.params.remote_ip, e.local_comm_id, 0, e.tid, protocol::kCmRejMessageOther,
                 protocol::kCmRejTimeout);
        const auto ms = std::chrono::duration_cast<milliseconds>(e.params.timeout).count();
        if (e.icmp_unreachable > 0) {
          fail_connect(e, Errc::naa_unreachable,
                       "nothing listens on " + format_ipv4(e.params.remote_ip) +
                           ":4791 (ICMP port unreachable); is the NAA (naa-sim) running?");
        } else {
          fail_connect(e, Errc::cm_timeout,
                       "no answer from " + format_ipv4(e.params.remote_ip) + " CM port " +
                           std::to_string(e.params.cm_port) + " within " + std::to_string(ms) +
                           " ms (" + std::to_string(e.reqs_sent) + " CM REQs sent)");
        }
      } else if (now >= e.next_send) {
        send_mad(e.params.remote_ip, e.pending_mad);  // same comm ID and TID: a retry
        ++e.reqs_sent;
        e.next_send = now + e.interval;
      }
    } else if (e.state == CmState::disconnecting) {
      if (now >= e.deadline) {
        e.state = CmState::closed;  // no DREP: closed anyway (the NAA times out its side)
        cv_.notify_all();
      } else if (now >= e.next_send) {
        send_mad(e.params.remote_ip, e.pending_mad);
        e.next_send = now + e.interval;
      }
    }
    if (e.rc) e.rc->on_timer(now);
  }
  arm_timer();
}

void Endpoint::collect_callbacks(std::vector<std::function<void()>>& out) {
  for (auto& [qpn, e] : qps_) {
    if (e->callback && e->rc && e->rc->has_completions()) out.push_back(e->callback);
  }
}

void Endpoint::finish_handler(std::unique_lock<std::mutex>& lock) {
  arm_timer();
  std::vector<std::function<void()>> callbacks;
  collect_callbacks(callbacks);
  lock.unlock();
  cv_.notify_all();
  for (auto& cb : callbacks)
    cb();
}

// ---- QueuePair operations
// ------------------------------------------------------------------------

std::error_code Endpoint::qp_error(std::uint32_t qpn) const {
  std::lock_guard lock(mu_);
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return Errc::not_connected;
  if (it->second->error) return it->second->error;
  if (it->second->rc && it->second->rc->in_error()) return it->second->rc->error();
  if (it->second->state != CmState::established) return Errc::not_connected;
  return {};
}

std::error_code Endpoint::post_send(std::uint32_t qpn, const SendWr& wr) {
  std::unique_lock lock(mu_);
  auto it = qps_.find(qpn);
  if (it == qps_.end() || !it->second->rc || it->second->state != CmState::established) {
    return Errc::not_connected;
  }
  const std::error_code ec = it->second->rc->post_send(wr, Clock::now());
  arm_timer();
  if (opts_.progress == Progress::automatic && it->second->rc->has_completions()) {
    // Completion callbacks never run inside post_send (the caller may hold its own locks): the
    // progress thread delivers them.
    asio::post(io_, [this] {
      std::unique_lock l(mu_);
      if (!stopping_) finish_handler(l);
    });
  }
  return ec;
}

std::error_code Endpoint::post_recv(std::uint32_t qpn, const RecvWr& wr) {
  std::lock_guard lock(mu_);
  auto it = qps_.find(qpn);
  if (it == qps_.end() || !it->second->rc || it->second->state != CmState::established) {
    return Errc::not_connected;
  }
  return it->second->rc->post_recv(wr);
}

std::size_t Endpoint::poll_cq(std::uint32_t qpn, std::span<WorkCompletion> out) {
  if (opts_.progress == Progress::manual) progress(std::chrono::nanoseconds(0));
  std::lock_guard lock(mu_);
  auto it = qps_.find(qpn);
  if (it == qps_.end() || !it->second->rc) return 0;
  return it->second->rc->poll(out);
}

std::size_t Endpoint::wait_cq(std::uint32_t qpn, std::span<WorkCompletion> out,
                              std::chrono::nanoseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      auto it = qps_.find(qpn);
      if (it == qps_.end() || !it->second->rc) return 0;
      RcQp& rc = *it->second->rc;
      if (opts_.progress == Progress::automatic) {
        cv_.wait_until(lock, deadline, [&] { return rc.has_completions() || stopping_; });
      }
      if (rc.has_completions()) return rc.poll(out);
      if (rc.in_error() || Clock::now() >= deadline) return 0;
    }
    progress(deadline - Clock::now());
  }
}

void Endpoint::set_callback(std::uint32_t qpn, std::function<void()> cb) {
  std::lock_guard lock(mu_);
  auto it = qps_.find(qpn);
  if (it != qps_.end()) it->second->callback = std::move(cb);
}

std::error_code Endpoint::disconnect(std::uint32_t qpn, milliseconds timeout, bool wait) {
  {
    std::unique_lock lock(mu_);
    auto it = qps_.find(qpn);
    if (it == qps_.end()) return {};
    QpEntry& e = *it->second;
    if (e.state != CmState::established) return {};
    protocol::CmDreq dreq;
    dreq.local_comm_id = e.local_comm_id;
    dreq.remote_comm_id = e.remote_comm_id;
    dreq.remote_qpn = e.remote_qpn;  // must name the NAA's QP, or Linux ignores it
    e.pending_mad.header.transaction_id = (rng_() & 0xFFFFFFFF00000000ULL) | e.local_comm_id;
    e.pending_mad.body = dreq;
    send_mad(e.params.remote_ip, e.pending_mad);
    e.rc->to_error(make_error_code(Errc::flushed));
    e.error = Errc::disconnected;
    e.detail = "disconnected by the host";
    if (!wait || timeout.count() <= 0) {
      e.state = CmState::closed;
      finish_handler(lock);
      return {};
    }
    e.state = CmState::disconnecting;
    const Clock::time_point now = Clock::now();
    e.deadline = now + timeout;
    // Ten DREQs within the timeout, not three: a DREQ that never arrives leaves the NAA holding the
    // QP and its regions (an idle RC QP has no timer), and at 10% loss three tries all fail once
    // in a thousand disconnects (found by testbench/reliability).
    e.interval = std::max<milliseconds>(timeout / 10, milliseconds(10));
    e.next_send = now + e.interval;
    arm_timer();
  }
  for (;;) {
    {
      std::unique_lock lock(mu_);
      QpEntry& e = *qps_.at(qpn);
      if (opts_.progress == Progress::automatic) {
        cv_.wait(lock, [&] { return e.state != CmState::disconnecting; });
      }
      if (e.state != CmState::disconnecting) return {};
    }
    progress(milliseconds(50));
  }
}

void Endpoint::release(std::uint32_t qpn) {
  std::lock_guard lock(mu_);
  qps_.erase(qpn);
  auto it = send_sockets_.find(qpn);
  if (it != send_sockets_.end()) {
    if (!it->second.shared_rx && it->second.socket) it->second.socket->close();
    send_sockets_.erase(it);
  }
}

}  // namespace detail

// ---- Opening
// -------------------------------------------------------------------------------------

bool set_udp_roce_faults(Transport& transport, const FaultOptions& rx, const FaultOptions& tx) {
  auto* ep = dynamic_cast<detail::Endpoint*>(&transport);
  if (ep == nullptr) return false;
  ep->set_faults(rx, tx);
  return true;
}

bool inject_udp_roce_datagram(Transport& transport, std::span<const std::uint8_t> datagram,
                              std::uint32_t src_ip, std::uint16_t src_port) {
  auto* ep = dynamic_cast<detail::Endpoint*>(&transport);
  if (ep == nullptr) return false;
  ep->inject(datagram, src_ip, src_port);
  return true;
}

// Issue 12: what usually holds port 4791. Linux Soft-RoCE (rdma_rxe) binds 0.0.0.0:4791 in the
// kernel as soon as an rxe device exists, which takes the port on every address.
constexpr const char* kPort4791TakenHint =
    " (another program holds UDP port 4791 there: another host endpoint or naa-sim, or the "
    "kernel's Soft-RoCE module rdma_rxe, which binds 0.0.0.0:4791 on every address; check with "
    "`ss -ulpn 'sport = :4791'` (a socket with no process is the kernel's) and "
    "`lsmod | grep rdma_rxe`)";

std::shared_ptr<Transport> open_udp_roce(const UdpRoceOptions& options, std::error_code& ec,
                                         std::string* detail) {
  ec.clear();
  auto fail = [&](Errc e, std::string text) -> std::shared_ptr<Transport> {
    ec = e;
    if (detail != nullptr) *detail = std::move(text);
    return nullptr;
  };
  int fd = -1;
  std::uint32_t ip = 0;
  int err = 0;
  if (options.local_ip) {
    ip = *options.local_ip;
    fd = detail::open_roce_socket(ip, protocol::kRoceUdpPort, err);
    if (fd < 0 && err == EADDRINUSE) {
      return fail(Errc::address_in_use,
                  detail::errno_text(("bind " + format_ipv4(ip) + ":4791").c_str(), err) +
                      kPort4791TakenHint);
    }
    if (fd < 0) {
      return fail(Errc::socket_error,
                  detail::errno_text(("bind " + format_ipv4(ip) + ":4791").c_str(), err));
    }
  } else {
    // The first free 127.0.0.x, x >= 3 (PROTOCOL.md 6: 127.0.0.2 is the NAA's default).
    for (std::uint32_t x = 3; x < 255 && fd < 0; ++x) {
      ip = 0x7F000000U | x;
      fd = detail::open_roce_socket(ip, protocol::kRoceUdpPort, err);
      if (fd < 0 && err != EADDRINUSE) {
        return fail(Errc::socket_error,
                    detail::errno_text(("bind " + format_ipv4(ip) + ":4791").c_str(), err));
      }
    }
    if (fd < 0) {
      return fail(Errc::no_free_address,
                  std::string("every 127.0.0.3-254:4791 is taken") + kPort4791TakenHint);
    }
  }
  if (detail::set_opt(fd, IPPROTO_IP, IP_PKTINFO, int{1}) != 0) {
    err = errno;
    ::close(fd);
    return fail(Errc::socket_error, detail::errno_text("IP_PKTINFO", err));
  }
  // A deep receive buffer: a window of 128 x 4 KiB per QP must not overflow it.
  if (detail::set_opt(fd, SOL_SOCKET, SO_RCVBUFFORCE, options.receive_buffer_bytes) != 0) {
    (void)detail::set_opt(fd, SOL_SOCKET, SO_RCVBUF, options.receive_buffer_bytes);
  }
  auto ep = std::make_shared<detail::Endpoint>(options, ip, fd);
  if (!options.pcap_path.empty()) {
    // The endpoint is not running yet: no lock needed.
    if (auto pec = ep->open_pcap(options.pcap_path)) {
      return fail(Errc::socket_error,
                  "cannot create pcap " + options.pcap_path + ": " + pec.message());
    }
  }
  ep->start();
  return ep;
}

}  // namespace naa::host
