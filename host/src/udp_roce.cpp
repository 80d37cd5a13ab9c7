// UdpRoce endpoint (naa/host/udp_roce.hpp): its life (open, start, stop), the two progress
// models, the timers, receive dispatch to the CM or an RC queue pair, and the QueuePair operations
// (opening one: udp_roce_open.cpp).
// Sockets and transmit are in udp_net.cpp, the CM in udp_cm.cpp, the RC rules in rc_qp.cpp; the
// locking rule is written once, in udp_endpoint.hpp.
#include "naa/host/udp_roce.hpp"

#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <random>

#include "naa/host/error.hpp"
#include "naa/protocol/icrc.hpp"
#include "udp_endpoint.hpp"

namespace naa::host {
namespace detail {

// ---- Endpoint
// ------------------------------------------------------------------------------------

Endpoint::Endpoint(const UdpRoceOptions& options, std::uint32_t ip, int rx_fd,
                   std::unique_ptr<SharedAddress> share)
    : opts_(options),
      ip_(ip),
      rx_(io_),
      rx_fd_(rx_fd),
      timer_(io_),
      mrs_(options.seed != 0 ? options.seed : std::random_device{}()),
      next_qpn_(share ? std::uint32_t{share->slot()} << 16 | kFirstSharedQpn
                      : std::max<std::uint32_t>(options.first_qpn, 2)),
      share_(std::move(share)),
      rng_(options.seed != 0
               ? options.seed ^ 0x9E3779B97F4A7C15ULL
               : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()),
      rx_fault_(options.fault_rx,
                impair::direction_seed(options.fault_seed, impair::Direction::rx)),
      tx_fault_(options.fault_tx,
                impair::direction_seed(options.fault_seed, impair::Direction::tx)) {
  if (rx_fd >= 0) rx_.assign(asio::ip::udp::v4(), rx_fd);  // none with a DatagramLink
  // UDP_GRO (Linux 5.0): a peer's UDP GSO send (naa-sim's write-back toward loopback) arrives
  // as one buffer, not cut into an skb, a queueing and a wake-up per datagram in the sender's
  // system call; drain_socket cuts it. Not on a shared address, whose steering between the
  // processes on it (docs/adr/0006) is kept as it was.
  const int on = 1;
  const bool gro =
      rx_fd >= 0 && !share_ && ::setsockopt(rx_fd, SOL_UDP, UDP_GRO, &on, sizeof on) == 0;
  rx_buf_size_ = gro ? kRxGroBufferSize : kRxBufferSize;
  rx_bufs_.resize(kRxBatch * rx_buf_size_);
  cm_psn_ = static_cast<std::uint32_t>(rng_()) & protocol::kMax24;
}

Endpoint::~Endpoint() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  progress_cv_.notify_all();
  io_.stop();
  if (thread_.joinable()) thread_.join();
  for (auto& [qpn, s] : send_sockets_) {
    if (!s.shared_rx && s.socket) s.socket->close();
  }
  if (share_) {
    share_->leave([this] { rx_.close(); });  // steers the group for the others first
  } else {
    rx_.close();
  }
  pcap_.close();
}

void Endpoint::start() {
  std::lock_guard lock(mu_);
  if (rx_fd_ >= 0) arm_receive();
  if (opts_.progress == Progress::automatic)
    thread_ = std::thread([this] { progress_thread_main(); });
}

// How long the progress thread stays parked after a caller's turn at driving ended: the caller's
// next wait (the next call) usually follows within microseconds and should find the socket its
// own, not the thread in epoll_wait to be woken out of it.
constexpr auto kDriverLease = std::chrono::milliseconds(1);
// While a caller drives, the parked thread looks again this often (a caller waiting 300 ms for a
// large kernel costs it 30 wake-ups, not 300); the caller that stops driving does not wake it, so
// this is also how late it may resume after the last wait of a burst (below the RC retransmit
// timeout; CM waits wake it at once).
constexpr auto kParkedRecheck = std::chrono::milliseconds(10);
// The longest turn a driving caller takes before it looks at its completions and deadline again.
constexpr auto kDriveSlice = std::chrono::milliseconds(50);

void Endpoint::progress_thread_main() {
  auto guard = asio::make_work_guard(io_);
  for (;;) {
    {
      std::unique_lock lock(mu_);
      while (!stopping_ && (driving_ || Clock::now() < driver_lease_)) {
        progress_cv_.wait_until(lock, driving_ ? Clock::now() + kParkedRecheck : driver_lease_);
      }
      if (stopping_) return;
    }
    std::unique_lock pl(progress_mu_);
    if (io_.stopped()) return;  // the destructor
    {
      std::lock_guard lock(mu_);
      if (driving_) continue;  // a caller took over while this thread waited for progress_mu_
      ++stats_.progress_thread_turns;
    }
    io_.run_one();  // a handler, a caller's no-op to take over, or io_.stop(): no idle wake-ups
  }
}

void Endpoint::wake_progress_thread() {
  driver_lease_ = {};
  progress_cv_.notify_one();
}

// A waiting caller's turn: take io_ from the progress thread (a no-op handler wakes it out of
// epoll_wait; it sees driving_ and parks) and run one handler or until the deadline.
void Endpoint::drive_once(Clock::time_point deadline, bool poll_first) {
  std::unique_lock pl(progress_mu_, std::try_to_lock);
  if (!pl) {
    asio::post(io_, [] {});
    pl.lock();
    std::lock_guard lock(mu_);
    ++stats_.progress_thread_interrupts;
  }
  if (io_.stopped()) return;  // the destructor
  if (poll_first && poll_before_wait(deadline)) {
    // The answer is there: read it directly, without Asio's epoll_wait and MSG_PEEK receive
    // first (the pending receive stays armed for later datagrams; three system calls fewer per
    // call). The caller looks at its completions; if none came, its next turn runs io_.
    std::unique_lock lock(mu_);
    if (stopping_) return;
    ++stats_.progress_direct_reads;
    {
      TxBatch batch(*this);
      // More than one pass holds is left to the pending receive (its edge is still to be
      // reported): posting on_readable here would arm a second receive beside it, and every
      // later datagram would wake both.
      (void)drain_socket();
    }
    finish_handler(lock);
    return;
  }
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return;
  io_.run_one_for(std::min<Clock::duration>(left, kDriveSlice));
}

// UdpRoceOptions::poll_us: look at the socket without sleeping before the caller blocks in
// epoll_wait. In the VMs CI runs in, a sleep and its wake-up cost ~10 us of CPU (the scheduler's
// task switch, measured with perf: docs/performance-wall-clock.md "Caller-driven progress"), more
// than the NAA's answer to a small call takes to come. The yield lets a runnable thread on this
// core go first (on a 2-core machine often the peer, whose answer this waits for), as naa-sim's
// --poll-us does. Called with progress_mu_ held, not mu_.
bool Endpoint::poll_before_wait(Clock::time_point deadline) {
  if (opts_.poll_us == 0) return false;
  const auto until = std::min(deadline, Clock::now() + std::chrono::microseconds(opts_.poll_us));
  pollfd pfd{rx_fd_, POLLIN, 0};
  bool hit = false;
  do {
    pfd.revents = 0;
    if (::poll(&pfd, 1, 0) > 0 && pfd.revents != 0) {
      hit = true;
      break;
    }
    ::sched_yield();
  } while (Clock::now() < until);
  std::lock_guard lock(mu_);
  ++stats_.progress_polls;
  if (hit) ++stats_.progress_poll_hits;
  return hit;
}

std::size_t Endpoint::wait_cq_driving(std::uint32_t qpn, std::span<WorkCompletion> out,
                                      Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  ++waiters_;
  bool polled = false;
  bool mine = false;  // this caller holds driving_
  // A driver keeps driving until its own wait ends (handing the turn to another waiter after
  // every handler woke them all: a thundering herd with 8 sessions on one endpoint), then lets
  // the next waiter take over.
  const auto stop_driving = [&] {
    if (!mine) return;
    mine = false;
    driving_ = false;
    driver_lease_ = Clock::now() + kDriverLease;
    if (waiters_ > 1) cv_.notify_all();  // another waiter takes over
  };
  const auto leave = [&](std::size_t n) {
    stop_driving();
    --waiters_;
    return n;
  };
  for (;;) {
    auto it = qps_.find(qpn);  // looked up every turn: mu_ was released
    if (it == qps_.end() || !it->second->rc) return leave(0);
    QpEngine& rc = *it->second->rc;
    if (rc.has_completions()) return leave(rc.poll(out));
    if (rc.in_error() || stopping_ || Clock::now() >= deadline) return leave(0);
    if (mine && callbacks_ > 0) {
      stop_driving();  // a callback was set meanwhile: it must run on the progress thread
      wake_progress_thread();
    }
    if (!mine) {
      if (driving_ || callbacks_ > 0) {
        // Another caller drives (its handlers notify cv_, and it does when it stops), or a
        // callback must run on the progress thread: wait as without caller-driven progress.
        cv_.wait_until(lock, deadline, [&] {
          return rc.has_completions() || stopping_ || (!driving_ && callbacks_ == 0);
        });
        continue;
      }
      driving_ = true;
      mine = true;
    }
    ++stats_.progress_caller_turns;
    lock.unlock();
    drive_once(deadline, !polled);  // one short poll per wait: right after the caller posted
    polled = true;
    lock.lock();
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
  s.rtt_samples = rc_counters_.rtt_samples;
  s.measured_timeout_ns = rc_counters_.measured_timeout_ns;
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
  if (opts_.clock) {
    progress_simulated(timeout);
    return;
  }
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
  } else if (rx_fd_ >= 0 && ++zero_timeout_polls_ % kAsioPollEvery != 0 && poll_directly()) {
    return;
  }
  io_.poll();
}

// Co-simulation (docs/adr/0004): time passes on the EndpointClock, up to the timeout or the next
// timer, datagrams arrive through deliver(); then due timers run and posted handlers with them.
void Endpoint::progress_simulated(std::chrono::nanoseconds timeout) {
  Clock::time_point until = now() + std::chrono::duration_cast<Clock::duration>(timeout);
  {
    std::lock_guard lock(mu_);
    if (const auto next = next_timer_deadline(); next && *next < until) until = *next;
  }
  opts_.clock->wait_until(until);
  {
    std::unique_lock lock(mu_);
    run_timers(now());
    finish_handler(lock);
  }
  if (io_.stopped()) io_.restart();
  io_.poll();
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

// ---- Timers
// --------------------------------------------------------------------------------------

void Endpoint::arm_timer() {
  // Co-simulation: timers run in progress_simulated() on the simulated clock, not on Asio's.
  if (stopping_ || opts_.clock) return;
  const std::optional<Clock::time_point> next = next_timer_deadline();
  if (!next) return;
  if (timer_armed_at_ && *timer_armed_at_ <= *next) return;  // fires early enough already
  timer_armed_at_ = *next;
  timer_.expires_at(*next);
  timer_.async_wait([this](const boost::system::error_code& ec) { on_timer(ec); });
}

std::optional<Clock::time_point> Endpoint::next_timer_deadline() const {
  std::optional<Clock::time_point> next;
  auto consider = [&](Clock::time_point t) {
    if (!next || t < *next) next = t;
  };
  if (!rx_held_.empty()) consider(rx_held_.next_deadline());
  if (!tx_held_.empty()) consider(tx_held_.next_deadline());
  for (auto& [qpn, e] : qps_) {
    if (e->state == CmState::connecting || e->state == CmState::disconnecting) {
      consider(std::min(e->next_send, e->deadline));
    }
    if (e->rc) {
      if (auto d = e->rc->next_deadline()) consider(*d);
    }
  }
  return next;
}

void Endpoint::on_timer(const boost::system::error_code& ec) {
  if (ec == asio::error::operation_aborted) return;  // re-armed earlier; that wait is pending
  std::unique_lock lock(mu_);
  if (stopping_) return;
  timer_armed_at_.reset();
  {
    TxBatch batch(*this);
    // Read what has arrived before deciding that a retransmit timer expired: after the host was
    // not scheduled for a while, the ACK may be waiting in the socket while the timer is already
    // due, and the timer first would retransmit for nothing (issue 30: spurious retransmissions
    // at 0 % loss). What a full drain leaves, the pending receive reads.
    if (rx_fd_ >= 0) (void)drain_socket();
    run_timers(now());
  }
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
  TxBatch batch(*this);  // closed (and sent) before the lock is released: declared after it
  auto it = qps_.find(qpn);
  if (it == qps_.end() || !it->second->rc || it->second->state != CmState::established) {
    return Errc::not_connected;
  }
  const std::error_code ec = it->second->rc->post_send(wr, now());
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

std::error_code Endpoint::cancel_recv(std::uint32_t qpn, std::uint64_t wr_id) {
  std::lock_guard lock(mu_);
  auto it = qps_.find(qpn);
  if (it == qps_.end() || !it->second->rc) return Errc::not_connected;
  return it->second->rc->cancel_recv(wr_id);
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
  const Clock::time_point deadline = now() + timeout;
  if (opts_.progress == Progress::automatic && !opts_.clock && rx_fd_ >= 0) {
    return wait_cq_driving(qpn, out, deadline);
  }
  for (;;) {
    {
      std::unique_lock lock(mu_);
      auto it = qps_.find(qpn);
      if (it == qps_.end() || !it->second->rc) return 0;
      QpEngine& rc = *it->second->rc;
      if (opts_.progress == Progress::automatic) {
        cv_.wait_until(lock, deadline, [&] { return rc.has_completions() || stopping_; });
      }
      if (rc.has_completions()) return rc.poll(out);
      if (rc.in_error() || now() >= deadline) return 0;
    }
    progress(deadline - now());
  }
}

void Endpoint::set_callback(std::uint32_t qpn, std::function<void()> cb) {
  std::lock_guard lock(mu_);
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return;
  const bool had = static_cast<bool>(it->second->callback);
  it->second->callback = std::move(cb);
  const bool has = static_cast<bool>(it->second->callback);
  if (had != has) {
    callbacks_ = has ? callbacks_ + 1 : callbacks_ - 1;
    cv_.notify_all();  // waiters decide again whether they may drive
  }
}

void Endpoint::release(std::uint32_t qpn) {
  std::lock_guard lock(mu_);
  if (auto q = qps_.find(qpn); q != qps_.end() && q->second->callback) --callbacks_;
  qps_.erase(qpn);
  auto it = send_sockets_.find(qpn);
  if (it != send_sockets_.end()) {
    if (!it->second.shared_rx && it->second.socket) it->second.socket->close();
    send_sockets_.erase(it);
  }
}

}  // namespace detail

}  // namespace naa::host
