// The UdpRoce endpoint's private interface (naa/host/udp_roce.hpp is the public one), split as
// Linux rxe splits its driver:
//   udp_net.cpp    sockets, receive batches (and manual progress's direct poll), ICMP errors,
//                  transmit, network impairment
//   udp_cm.cpp     the IB CM active side: connect, REQ/REP/RTU/REJ/MRA, DREQ/DREP, disconnect
//   udp_roce.cpp   the endpoint's life, progress, timers, receive dispatch, QueuePair operations
// The RC rules themselves live in rc_qp.cpp.
//
// Locking rule (the one rule for all three files):
//   * mu_ guards all mutable endpoint state: qps_ and every QpEntry with its RcQp, send_sockets_,
//     mrs_, rc_counters_, stats_, the fault injectors and held queues, pcap_, tx_buf_, rx_bufs_,
//     rx_peek_, cm_psn_, rng_, next_qpn_, timer_armed_at_ and stopping_; and every use of the Asio
//     objects rx_, timer_ and the send sockets (they are not thread-safe), except in the
//     constructor and, after the progress thread has joined, the destructor. io_.run*/poll/
//     restart/stop need no lock. Public entry points (Transport, the UdpQp operations) and Asio
//     handlers take it first; every private member function runs with it held.
//   * progress_mu_ (manual progress) lets one thread at a time drive io_. Lock order: progress_mu_
//     before mu_ (handlers run by io_ take mu_); progress() is never called with mu_ held.
//   * cv_ waits on mu_; whoever changes what a waiter watches (a QP's CmState, completions,
//     stopping_, driving_) notifies it.
//   * Automatic progress is caller-driven while a caller waits (wait_cq, docs/host/README.md
//     "Progress"): that caller sets driving_ and runs io_ itself under progress_mu_, so the
//     datagram that completes its work request wakes it directly, not the progress thread and
//     then it through a futex hand-off. The progress thread parks on progress_cv_ while driving_
//     is set and until driver_lease_ (a caller about to wait again keeps the socket); other
//     blocking waits end the lease (wake_progress_thread). Not while any QP has a completion
//     callback: those run on the progress thread.
//   * No user code runs under mu_: completion callbacks are collected under it and called by
//     finish_handler() after it unlocks; post_send() never calls them (it posts to io_).
//   * opts_, ip_ and rx_fd_ are fixed at construction and read without the lock; thread_ is
//     touched only by start() and the destructor.
#pragma once

#include <netinet/in.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ipv4_socket.hpp"
#include "irn_qp.hpp"
#include "mr_table.hpp"
#include "naa/host/error.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/impair/held_queue.hpp"
#include "naa/impair/injector.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"
#include "rc_qp.hpp"
#include "shared_address.hpp"

namespace naa::host::detail {

namespace asio = boost::asio;
using protocol::ByteView;
using std::chrono::milliseconds;

inline constexpr std::size_t kRxBatch = 32;
inline constexpr std::size_t kTxBatch = 32;
inline constexpr std::size_t kRxBufferSize = 9216;
// A receive buffer of a socket with UDP_GRO: a coalesced run is at most one UDP datagram's
// payload (64 KiB), so the kernel never truncates one.
inline constexpr std::size_t kRxGroBufferSize = 65536;
inline constexpr std::uint32_t kCmQpn = protocol::kCmQpn;
// A shared address's first QPN within its slot (s << 16 | 0x11, as Linux starts at 0x11).
inline constexpr std::uint32_t kFirstSharedQpn = 0x11;
// A reordered datagram not overtaken in time is released after this much wall-clock time (naa-sim
// holds for 100 us of simulated time; the host's clock jitters by more than that).
inline constexpr std::chrono::milliseconds kReorderHold{1};

// A UDP socket set up as PROTOCOL.md 1 requires (udp_net.cpp); -1 and the errno in err on failure.
// reuse_port: SO_REUSEPORT, for a shared address (shared_address.hpp).
int open_roce_socket(std::uint32_t ip, std::uint16_t port, int& err, bool reuse_port = false);
// Opens the 4791 receive socket of UdpRoceOptions (udp_net.cpp): on <local_ip>, or on the first
// free 127.0.0.x, which it stores in ip; with share_address, joins <local_ip>'s group and sets
// share. -1 with the error and a one-line detail on failure.
int open_receive_socket(const UdpRoceOptions& options, std::uint32_t& ip, Errc& why,
                        std::string& detail, std::unique_ptr<SharedAddress>& share);
// Wall-clock nanoseconds for pcap timestamps.
std::uint64_t wall_ns();

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
  std::unique_ptr<QpEngine> rc;  // RcQp (go-back-N) or IrnQp (negotiated IRN)
  std::error_code error;         // why connecting failed / why the QP closed
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
  protocol::CmMad pending_mad;  // REQ or DREQ, for retransmission (passive: the REP)
  bool passive = false;         // accepted by udp_cm_passive.cpp
};

class Endpoint final : public Transport,
                       public PacketSink,
                       public std::enable_shared_from_this<Endpoint> {
 public:
  // share: the group of a shared address (docs/adr/0006), whose socket rx_fd is; else null.
  Endpoint(const UdpRoceOptions& options, std::uint32_t ip, int rx_fd,
           std::unique_ptr<SharedAddress> share = nullptr);
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
    on_datagram(copy.data(), copy.size(), src_ip, src_port, ip_, now());
    finish_handler(lock);
  }
  // Co-simulation: a datagram from the in-memory link (deliver_udp_roce_datagram).
  void deliver(std::span<const std::uint8_t> datagram, std::uint32_t src_ip,
               std::uint16_t src_port) {
    std::unique_lock lock(mu_);
    if (stopping_) return;
    std::vector<std::uint8_t> copy(datagram.begin(), datagram.end());
    receive_datagram(copy.data(), copy.size(), src_ip, src_port, ip_, now());
    finish_handler(lock);
  }
  // Co-simulation: a datagram this endpoint sent to dst_ip left the NIC (udp_roce.cpp,
  // udp_roce_packet_on_wire).
  bool packet_on_wire(std::span<const std::uint8_t> datagram, std::uint32_t dst_ip);
  // The endpoint's time: the co-simulation's clock if it has one (docs/adr/0004).
  [[nodiscard]] Clock::time_point now() const {
    return opts_.clock ? opts_.clock->now() : Clock::now();
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
  std::error_code cancel_recv(std::uint32_t qpn, std::uint64_t wr_id);
  std::size_t poll_cq(std::uint32_t qpn, std::span<WorkCompletion> out);
  std::size_t wait_cq(std::uint32_t qpn, std::span<WorkCompletion> out,
                      std::chrono::nanoseconds timeout);
  void set_callback(std::uint32_t qpn, std::function<void()> cb);
  std::error_code disconnect(std::uint32_t qpn, milliseconds timeout, bool wait);
  void release(std::uint32_t qpn);

  // The CM passive side (udp_cm_passive.cpp, naa/host/udp_listen.hpp); each takes mu_.
  std::error_code listen(std::uint16_t cm_port, bool on);
  std::optional<ConnectRequest> next_request(std::chrono::nanoseconds timeout);
  std::unique_ptr<QueuePair> accept(std::uint64_t id, const AcceptParams& params,
                                    std::error_code& ec, std::string* detail);
  std::error_code reject(std::uint64_t id, std::span<const std::uint8_t> private_data);

 private:
  // A REQ for a listened port, held until accepted or rejected (udp_cm_passive.cpp).
  struct HeldRequest {
    ConnectRequest info;
    protocol::CmReq req;
    std::uint64_t tid = 0;
    bool handed_out = false;
  };
  void on_req(std::uint32_t src_ip, std::uint64_t tid, const protocol::CmReq& req);
  // All below run with mu_ held (the locking rule at the top of this file). udp_net.cpp: sockets,
  // receive and transmit; udp_cm.cpp: the CM; udp_roce.cpp: timers, dispatch, QP operations.
  void arm_receive();
  void on_readable(const boost::system::error_code& ec);
  bool drain_socket();
  void drain_error_queue(int fd);
  void on_icmp_unreachable(std::uint32_t dst_ip, int err);
  void on_datagram(const std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                   std::uint16_t src_port, std::uint32_t dst_ip, Clock::time_point now);
  void on_cm(std::uint32_t src_ip, ByteView mad, Clock::time_point now);
  void on_timer(const boost::system::error_code& ec);
  void run_timers(Clock::time_point now);
  void arm_timer();
  [[nodiscard]] std::optional<Clock::time_point> next_timer_deadline() const;
  void progress_simulated(std::chrono::nanoseconds timeout);  // co-simulation (EndpointClock)
  bool poll_directly();  // manual progress(0): false if Asio must poll (udp_net.cpp)
  // Automatic progress (udp_roce.cpp): the progress thread's loop, a waiting caller's turn at
  // driving io_ (called without mu_), and the end of the lease before another blocking wait.
  void progress_thread_main();
  std::size_t wait_cq_driving(std::uint32_t qpn, std::span<WorkCompletion> out,
                              Clock::time_point deadline);
  void drive_once(Clock::time_point deadline, bool poll_first);
  bool poll_before_wait(Clock::time_point deadline);
  void wake_progress_thread();
  SendSocket& send_socket(std::uint32_t qpn);
  void arm_send_socket_errors(std::uint32_t qpn);
  void send_mad(std::uint32_t dst_ip, const protocol::CmMad& mad);
  protocol::CmMad make_req(const QpEntry& e) const;
  void send_rtu(const QpEntry& e);
  void send_rej(std::uint32_t dst_ip, std::uint32_t local_comm_id, std::uint32_t remote_comm_id,
                std::uint64_t tid, std::uint8_t message, std::uint16_t reason);
  void fail_connect(QpEntry& e, std::error_code ec, std::string detail);
  QpEntry* find_by_comm_id(std::uint32_t local_comm_id);
  // The next QPN and a fresh local comm ID candidate: on a shared address both carry the slot
  // (QPN s << 16 | n, comm ID s << 24 | random; shared_address.hpp), udp_net.cpp.
  std::uint32_t take_qpn();
  std::uint32_t comm_id_candidate();
  void collect_callbacks(std::vector<std::function<void()>>& out);
  void finish_handler(std::unique_lock<std::mutex>& lock);
  // Network impairment (naa::impair, docs/reliability.md), udp_net.cpp.
  struct HeldDatagram {
    std::vector<std::uint8_t> bytes;
    protocol::Ipv4UdpHeaders ctx;  // the 4-tuple (tx: of the sending QP's socket)
    std::uint32_t local_qpn = 0;   // tx: selects the socket again at release
  };
  using HeldQueue = impair::HeldQueue<HeldDatagram, Clock::time_point>;
  void receive_datagram(std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                        std::uint16_t src_port, std::uint32_t dst_ip, Clock::time_point now);
  void fault_send(std::uint32_t local_qpn, const protocol::Ipv4UdpHeaders& ctx,
                  protocol::MutableByteView datagram);
  void transmit(int fd, const protocol::Ipv4UdpHeaders& ctx, ByteView datagram);
  void flush_tx();  // sends what a TxBatch scope queued, in sendmmsg calls
  bool enqueue_tx(int fd, const sockaddr_in& to, ByteView datagram);
  // The next free slot of the send batch for a datagram to `fd` (the batch is sent first if it
  // is full or for another socket); commit_tx() queues what was written into it.
  std::span<std::uint8_t> tx_slot(int fd);
  void commit_tx(const sockaddr_in& to, std::size_t size);
  void send_now(int fd, const sockaddr_in& to, ByteView datagram);
  friend class TxBatch;
  void release_held(bool rx, HeldDatagram& h, Clock::time_point now);
  void release_held_due(Clock::time_point now);

  UdpRoceOptions opts_;
  const std::uint32_t ip_;
  asio::io_context io_;
  asio::ip::udp::socket rx_;
  int rx_fd_ = -1;
  // Manual progress(0) (udp_net.cpp poll_directly): calls so far (progress_mu_), and how often
  // Asio's own poll runs among them.
  static constexpr std::uint64_t kAsioPollEvery = 32;
  std::uint64_t zero_timeout_polls_ = 0;
  asio::steady_timer timer_;
  std::optional<Clock::time_point> timer_armed_at_;
  std::array<std::uint8_t, 1> rx_peek_{};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::mutex progress_mu_;  // one thread drives io_ at a time (manual, or a driving caller)
  std::thread thread_;
  bool stopping_ = false;
  // Caller-driven automatic progress (the locking rule above).
  std::condition_variable progress_cv_;
  bool driving_ = false;
  std::size_t waiters_ = 0;    // callers inside wait_cq_driving
  std::size_t callbacks_ = 0;  // QPs with a completion callback
  Clock::time_point driver_lease_{};

  MrTable mrs_;
  RcCounters rc_counters_;
  // The round trip last measured to each peer (a CM REQ -> REP): the BDP cap a later IRN offer
  // computes from it (UdpRoceOptions::irn_bdp_cap = 0; udp_cm.cpp).
  std::map<std::uint32_t, Clock::duration> path_rtt_;
  TransportStats stats_;
  std::map<std::uint32_t, std::unique_ptr<QpEntry>> qps_;
  std::map<std::uint32_t, SendSocket> send_sockets_;
  std::uint32_t next_qpn_;
  std::unique_ptr<SharedAddress> share_;  // set before start(), never changed
  std::uint32_t cm_psn_ = 0;
  std::mt19937_64 rng_;
  protocol::PcapWriter pcap_;
  std::vector<std::uint8_t> tx_buf_;
  // Datagrams queued while a TxBatch scope is open (one socket at a time; udp_net.cpp).
  struct TxQueue {
    int depth = 0;  // open TxBatch scopes
    int fd = -1;
    std::size_t count = 0;
    // The queued datagrams back to back: datagram i at offsets[i], sizes[i] bytes; offsets[count]
    // is where the next goes. A run of datagrams of one size to one loopback address leaves as
    // one UDP GSO send (flush_tx).
    std::vector<std::uint8_t> bytes;
    std::array<std::size_t, kTxBatch + 1> offsets{};
    std::array<std::size_t, kTxBatch> sizes{};
    std::array<sockaddr_in, kTxBatch> to{};
  } tx_queue_;
  bool tx_gso_ = true;  // UDP_SEGMENT works here; cleared when the kernel refuses it
  // kRxBatch receive buffers of rx_buf_size_ bytes each, back to back (kRxGroBufferSize when the
  // receive socket has UDP_GRO: Endpoint's constructor).
  std::vector<std::uint8_t> rx_bufs_;
  std::size_t rx_buf_size_ = kRxBufferSize;
  impair::Injector rx_fault_, tx_fault_;
  HeldQueue rx_held_, tx_held_;
  std::vector<std::uint16_t> listening_;           // rdma_cm ports (passive side)
  std::map<std::uint64_t, HeldRequest> requests_;  // by ConnectRequest::id, oldest first
  std::uint64_t next_request_id_ = 1;
};

// While one is open (mu_ held), the endpoint's datagrams are queued and leave together in
// sendmmsg calls when the outermost closes: everything one receive pass, one post_send or one
// timer pass produces (issue 19 item 2; a system call costs ~1 us in the VMs we run in). Open it
// after taking mu_ and close it before releasing mu_.
class TxBatch {
 public:
  explicit TxBatch(Endpoint& ep) : ep_(ep) { ++ep_.tx_queue_.depth; }
  ~TxBatch() {
    if (--ep_.tx_queue_.depth == 0) ep_.flush_tx();
  }
  TxBatch(const TxBatch&) = delete;
  TxBatch& operator=(const TxBatch&) = delete;

 private:
  Endpoint& ep_;
};

// The QueuePair handle: every operation goes to the endpoint under its lock.
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
  std::error_code cancel_recv(std::uint64_t wr_id) override {
    return ep_->cancel_recv(qpn_, wr_id);
  }
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

}  // namespace naa::host::detail
