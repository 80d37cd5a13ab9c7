// The Verbs backend (naa/host/verbs.hpp): Transport on libibverbs + librdmacm.
//
// Objects and their owners:
//   VerbsDevice   the anchor rdma_cm_id that pins the device (bound to the local address), the
//                 verbs context, our own protection domain, the MR map (lkey -> ibv_mr) used to
//                 check SGEs at post time as the UdpRoce backend does. Shared by the transport and
//                 every QP it made (QPs keep the PD alive).
//   VerbsQp       one rdma_cm_id with its own event channel, completion channel, CQ and RC QP.
//
// CM events after the connection is up (the peer's DREQ) are read without a thread: wait_cq sleeps
// on both the completion channel and the CM event channel, and error()/disconnect() drain the CM
// channel. A DREQ from the NAA is answered with rdma_disconnect (the kernel CM sends the DREP,
// PROTOCOL.md 4 "always answer a DREQ").
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "naa/host/error.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/host/verbs.hpp"
#include "verbs_device.hpp"

namespace naa::host {

bool verbs_built() noexcept {
  return true;
}

namespace detail {
namespace {

class VerbsQp final : public QueuePair {
 public:
  VerbsQp(std::shared_ptr<VerbsDevice> dev, bool solicited_only)
      : dev_(std::move(dev)), solicited_only_(solicited_only) {}
  VerbsQp(const VerbsQp&) = delete;
  VerbsQp& operator=(const VerbsQp&) = delete;

  ~VerbsQp() override {
    {
      std::lock_guard lock(cm_mu_);
      if (state_ == State::connected) {
        (void)::rdma_disconnect(id_);  // DREQ; no wait for the DREP
      }
    }
    if (id_ != nullptr && id_->qp != nullptr) ::rdma_destroy_qp(id_);
    if (cq_ != nullptr) (void)::ibv_destroy_cq(cq_);
    if (comp_ != nullptr) (void)::ibv_destroy_comp_channel(comp_);
    if (id_ != nullptr) (void)::rdma_destroy_id(id_);
    if (channel_ != nullptr) ::rdma_destroy_event_channel(channel_);
  }

  std::error_code connect(std::uint32_t local_ip, const ConnectParams& p, const VerbsOptions& o,
                          std::string& detail) {
    const auto deadline = Clock::now() + p.timeout;
    const std::string where = format_ipv4(p.remote_ip) + " CM port " + std::to_string(p.cm_port);
    if (p.private_data.size() > 56) {
      detail = "CM private data longer than 56 bytes";
      return Errc::invalid_argument;
    }
    channel_ = ::rdma_create_event_channel();
    if (channel_ == nullptr || !set_nonblocking(channel_->fd)) {
      detail = errno_text("rdma_create_event_channel", errno);
      return Errc::socket_error;
    }
    if (::rdma_create_id(channel_, &id_, nullptr, RDMA_PS_TCP) != 0) {
      detail = errno_text("rdma_create_id", errno);
      return Errc::socket_error;
    }
    sockaddr_in src = make_sockaddr(local_ip, 0);
    sockaddr_in dst = make_sockaddr(p.remote_ip, p.cm_port);
    const int resolve_ms = static_cast<int>(o.resolve_timeout.count());
    if (::rdma_resolve_addr(id_, as_sockaddr(src), as_sockaddr(dst), resolve_ms) != 0) {
      detail = errno_text("rdma_resolve_addr", errno) + " to " + where;
      return Errc::naa_unreachable;
    }
    CmEvent ev;
    int err = 0;
    if (auto ec = expect(RDMA_CM_EVENT_ADDR_RESOLVED, deadline, ev, err)) {
      detail = "address resolution to " + where + " failed (" + describe(ev, err) + ")";
      return ec == Errc::timeout ? Errc::cm_timeout : Errc::naa_unreachable;
    }
    if (::rdma_resolve_route(id_, resolve_ms) != 0) {
      detail = errno_text("rdma_resolve_route", errno) + " to " + where;
      return Errc::naa_unreachable;
    }
    if (auto ec = expect(RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, ev, err)) {
      detail = "route resolution to " + where + " failed (" + describe(ev, err) + ")";
      return ec == Errc::timeout ? Errc::cm_timeout : Errc::naa_unreachable;
    }
    if (id_->verbs != dev_->context()) {
      detail = "the route to " + where + " leaves through " +
               ::ibv_get_device_name(id_->verbs->device) + ", but this transport registered " +
               "memory on " + dev_->device_name();
      return Errc::invalid_argument;
    }
    if (id_->route.num_paths > 0 && id_->route.path_rec != nullptr) {
      const std::uint32_t route_mtu = mtu_bytes(static_cast<ibv_mtu>(id_->route.path_rec->mtu));
      if (route_mtu > p.path_mtu) {
        detail = "the route's path MTU is " + std::to_string(route_mtu) + ", more than the " +
                 std::to_string(p.path_mtu) + " asked for (rdma_cm takes the port's MTU; lower " +
                 "the interface MTU instead)";
        return Errc::invalid_argument;
      }
    }

    const ibv_device_attr& da = dev_->attr();
    comp_ = ::ibv_create_comp_channel(dev_->context());
    if (comp_ == nullptr || !set_nonblocking(comp_->fd)) {
      detail = errno_text("ibv_create_comp_channel", errno);
      return Errc::socket_error;
    }
    const auto max_wr = static_cast<std::uint32_t>(std::max(da.max_qp_wr, 1));
    const std::uint32_t send_wr = std::min(o.max_send_wr, max_wr);
    const std::uint32_t recv_wr = std::min(o.max_recv_wr, max_wr);
    const int cqe = static_cast<int>(
        std::min<std::uint32_t>(send_wr + recv_wr, static_cast<std::uint32_t>(da.max_cqe)));
    cq_ = ::ibv_create_cq(dev_->context(), cqe, nullptr, comp_, 0);
    if (cq_ == nullptr) {
      detail = errno_text("ibv_create_cq", errno);
      return Errc::socket_error;
    }
    ibv_qp_init_attr qa{};
    qa.send_cq = cq_;
    qa.recv_cq = cq_;
    qa.cap.max_send_wr = send_wr;
    qa.cap.max_recv_wr = recv_wr;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    qa.qp_type = IBV_QPT_RC;
    qa.sq_sig_all = 0;
    if (::rdma_create_qp(id_, dev_->pd(), &qa) != 0) {
      detail = errno_text("rdma_create_qp", errno);
      return Errc::socket_error;
    }
    // The REQ's local ACK timeout (PROTOCOL.md 4); rdma_cm's default is 14 or the route's.
    std::uint8_t ack_timeout = p.local_ack_timeout;
    (void)::rdma_set_option(id_, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack_timeout,
                            sizeof ack_timeout);

    rdma_conn_param cp{};
    cp.private_data = p.private_data.empty() ? nullptr : p.private_data.data();
    cp.private_data_len = static_cast<std::uint8_t>(p.private_data.size());
    // Never ask for more READ resources than the device has: rxe has 128, ConnectX 16.
    cp.responder_resources = static_cast<std::uint8_t>(
        std::min<int>(p.responder_resources, std::max(da.max_qp_rd_atom, 0)));
    cp.initiator_depth = static_cast<std::uint8_t>(
        std::min<int>(p.initiator_depth, std::max(da.max_qp_init_rd_atom, 0)));
    cp.flow_control = 1;
    cp.retry_count = static_cast<std::uint8_t>(std::min<int>(p.retry_count, 7));
    cp.rnr_retry_count = static_cast<std::uint8_t>(std::min<int>(p.rnr_retry_count, 7));
    if (::rdma_connect(id_, &cp) != 0) {
      detail = errno_text("rdma_connect", errno) + " to " + where;
      return Errc::socket_error;
    }
    state_ = State::connecting;
    const auto ec = expect(RDMA_CM_EVENT_ESTABLISHED, deadline, ev, err);
    if (ec == Errc::timeout) {
      // rdma_destroy_id (in the destructor) makes the kernel CM send REJ(timeout), as Linux does.
      detail = "no answer to the CM REQ from " + where + " within " +
               std::to_string(p.timeout.count()) + " ms";
      return Errc::cm_timeout;
    }
    if (ec) {
      state_ = State::closed;
      if (ev.type == RDMA_CM_EVENT_REJECTED) {
        detail = "connection to " + where + " rejected, reason " + std::to_string(ev.status);
        if (!ev.private_data.empty()) {
          std::string text;
          for (std::uint8_t c : ev.private_data) {
            if (c == 0) break;
            text.push_back(c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '.');
          }
          if (!text.empty()) detail += " (\"" + text + "\")";
        }
        // REJ reason 8: no listener on that service ID (PROTOCOL.md 4).
        return ev.status == 8 ? Errc::connection_refused : Errc::connection_rejected;
      }
      if (ev.type == RDMA_CM_EVENT_UNREACHABLE) {
        detail = "the CM REQ to " + where + " went unanswered (" + describe(ev, err) + ")";
        return Errc::cm_timeout;
      }
      detail = "connection to " + where + " failed (" + describe(ev, err) + ")";
      return Errc::connection_rejected;
    }
    state_ = State::connected;
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    if (::ibv_query_qp(id_->qp, &attr, IBV_QP_PATH_MTU | IBV_QP_DEST_QPN, &init) == 0) {
      path_mtu_ = mtu_bytes(attr.path_mtu);
      remote_qpn_ = attr.dest_qp_num;
    }
    qpn_ = id_->qp->qp_num;
    if (arm() != 0) {
      detail = errno_text("ibv_req_notify_cq", errno);
      return Errc::socket_error;
    }
    return {};
  }

  std::uint32_t qp_num() const noexcept override { return qpn_; }
  std::uint32_t remote_qp_num() const noexcept override { return remote_qpn_; }
  std::uint32_t path_mtu() const noexcept override { return path_mtu_; }

  std::error_code error() const override {
    const_cast<VerbsQp*>(this)->drain_cm_events();  // NOLINT: a peer's DREQ is news to report
    std::lock_guard lock(err_mu_);
    // As UdpRoce: the connection's fate (the NAA's DREQ, our disconnect) before the completion
    // error that preceded it.
    return cm_error_ ? cm_error_ : error_;
  }

  std::error_code post_send(const SendWr& wr) override {
    if (!usable()) return Errc::not_connected;
    if (!dev_->sge_ok(wr.sge, wr.opcode == WrOpcode::rdma_read)) {
      return Errc::local_protection_error;
    }
    ibv_sge sge{wr.sge.addr, wr.sge.length, wr.sge.lkey};
    ibv_send_wr w{};
    ibv_send_wr* bad = nullptr;
    w.wr_id = wr.wr_id;
    w.sg_list = wr.sge.length != 0 ? &sge : nullptr;
    w.num_sge = wr.sge.length != 0 ? 1 : 0;
    switch (wr.opcode) {
      case WrOpcode::send:
        w.opcode = IBV_WR_SEND;
        break;
      case WrOpcode::send_with_imm:
        w.opcode = IBV_WR_SEND_WITH_IMM;
        break;
      case WrOpcode::rdma_write:
        w.opcode = IBV_WR_RDMA_WRITE;
        break;
      case WrOpcode::rdma_write_with_imm:
        w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        break;
      case WrOpcode::rdma_read:
        w.opcode = IBV_WR_RDMA_READ;
        break;
      default:
        return Errc::invalid_argument;
    }
    if (wr.opcode == WrOpcode::send_with_imm || wr.opcode == WrOpcode::rdma_write_with_imm) {
      w.imm_data = htonl(wr.imm);  // ImmDt is big-endian on the wire; verbs keeps it so
    }
    if (wr.opcode == WrOpcode::rdma_write || wr.opcode == WrOpcode::rdma_write_with_imm ||
        wr.opcode == WrOpcode::rdma_read) {
      w.wr.rdma.remote_addr = wr.remote_addr;
      w.wr.rdma.rkey = wr.rkey;
    }
    // PROTOCOL.md 5: the MRSP SEND and a call's last WRITE_WITH_IMM carry SE.
    unsigned flags = 0;
    if (wr.signaled) flags |= IBV_SEND_SIGNALED;
    if (wr.solicited) flags |= IBV_SEND_SOLICITED;
    w.send_flags = flags;
    const int rc = ::ibv_post_send(id_->qp, &w, &bad);
    if (rc != 0) return rc == ENOMEM ? Errc::busy : Errc::invalid_argument;
    dev_->bytes_sent += wr.sge.length;
    return {};
  }

  std::error_code post_recv(const RecvWr& wr) override {
    if (!usable()) return Errc::not_connected;
    if (!dev_->sge_ok(wr.sge, true)) return Errc::local_protection_error;
    ibv_sge sge{wr.sge.addr, wr.sge.length, wr.sge.lkey};
    ibv_recv_wr w{};
    ibv_recv_wr* bad = nullptr;
    w.wr_id = wr.wr_id;
    w.sg_list = wr.sge.length != 0 ? &sge : nullptr;
    w.num_sge = wr.sge.length != 0 ? 1 : 0;
    {
      std::lock_guard lock(err_mu_);
      recv_lkeys_[wr.wr_id] = wr.sge.lkey;
    }
    const int rc = ::ibv_post_recv(id_->qp, &w, &bad);
    if (rc != 0) {
      std::lock_guard lock(err_mu_);
      recv_lkeys_.erase(wr.wr_id);
      return rc == ENOMEM ? Errc::busy : Errc::invalid_argument;
    }
    return {};
  }

  std::size_t poll_cq(std::span<WorkCompletion> out) override {
    if (out.empty() || cq_ == nullptr) return 0;
    std::array<ibv_wc, 16> wcs{};
    const int want = static_cast<int>(std::min<std::size_t>(out.size(), wcs.size()));
    const int n = ::ibv_poll_cq(cq_, want, wcs.data());
    if (n <= 0) return 0;
    for (int i = 0; i < n; ++i)
      out[static_cast<std::size_t>(i)] = convert(wcs[static_cast<std::size_t>(i)]);
    return static_cast<std::size_t>(n);
  }

  std::size_t wait_cq(std::span<WorkCompletion> out, std::chrono::nanoseconds timeout) override {
    if (out.empty() || cq_ == nullptr) return 0;
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (const std::size_t n = poll_cq(out); n > 0) return n;
      // Arm, then poll once more: a completion that arrived before arming makes no event.
      (void)arm();
      if (const std::size_t n = poll_cq(out); n > 0) return n;
      const int wait_ms = ms_until(deadline);
      if (wait_ms == 0) return 0;
      std::array<pollfd, 2> fds{pollfd{comp_->fd, POLLIN, 0}, pollfd{channel_->fd, POLLIN, 0}};
      const int r = ::poll(fds.data(), fds.size(), wait_ms);
      if (r < 0 && errno != EINTR) return 0;
      // There is no progress thread: the completion callback runs here, when the channel fires.
      if ((fds[0].revents & POLLIN) != 0 && consume_cq_events() > 0 && callback_) callback_();
      if ((fds[1].revents & POLLIN) != 0) drain_cm_events();
    }
  }

  void set_completion_callback(std::function<void()> callback) override {
    callback_ = std::move(callback);
  }

  std::error_code disconnect(std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    std::unique_lock lock(cm_mu_);
    if (state_ == State::connected) {
      // DREQ naming the NAA's QPN (the kernel CM fills it in); the QP moves to error and its work
      // requests are flushed.
      (void)::rdma_disconnect(id_);
      state_ = State::disconnecting;
      set_cm_error(Errc::disconnected);
    }
    while (state_ == State::disconnecting) {
      CmEvent ev;
      int err = 0;
      if (!next_cm_event(channel_, deadline, ev, err)) {
        // No DREP in time: the connection is closed anyway (the NAAICE reference NAA never
        // answers a DREQ, issue 11), so this is not an error; the kernel CM retries the DREQ.
        state_ = State::closed;
        return {};
      }
      handle_cm_event(ev);
    }
    return {};
  }

 private:
  enum class State : std::uint8_t { idle, connecting, connected, disconnecting, closed };

  std::error_code expect(rdma_cm_event_type want, Clock::time_point deadline, CmEvent& ev,
                         int& err) {
    if (!next_cm_event(channel_, deadline, ev, err)) {
      return err != 0 ? Errc::socket_error : Errc::timeout;
    }
    return ev.type == want ? std::error_code{} : std::error_code(Errc::connection_rejected);
  }

  static std::string describe(const CmEvent& ev, int err) {
    if (err != 0) return std::strerror(err);
    return std::string(::rdma_event_str(ev.type)) + ", status " + std::to_string(ev.status);
  }

  int arm() { return ::ibv_req_notify_cq(cq_, solicited_only_ ? 1 : 0); }

  int consume_cq_events() {
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    int n = 0;
    while (::ibv_get_cq_event(comp_, &cq, &ctx) == 0) {
      ::ibv_ack_cq_events(cq, 1);
      ++n;
    }
    return n;
  }

  bool usable() const {
    std::lock_guard lock(err_mu_);
    return !error_ && !cm_error_ && id_ != nullptr && id_->qp != nullptr;
  }

  void set_error(std::error_code ec) {
    std::lock_guard lock(err_mu_);
    if (!error_) error_ = ec;
  }
  void set_cm_error(std::error_code ec) {
    std::lock_guard lock(err_mu_);
    if (!cm_error_) cm_error_ = ec;
  }

  void drain_cm_events() {
    std::unique_lock lock(cm_mu_, std::try_to_lock);
    if (!lock.owns_lock() || channel_ == nullptr) return;
    CmEvent ev;
    int err = 0;
    while (next_cm_event(channel_, Clock::now(), ev, err))
      handle_cm_event(ev);
  }

  // Called with cm_mu_ held.
  void handle_cm_event(const CmEvent& ev) {
    switch (ev.type) {
      case RDMA_CM_EVENT_DISCONNECTED:
        if (state_ == State::connected) {
          // The NAA sent DREQ: answer with DREP (rdma_disconnect does, PROTOCOL.md 4).
          (void)::rdma_disconnect(id_);
          state_ = State::closed;
          set_cm_error(Errc::disconnected);
        } else if (state_ == State::disconnecting) {
          state_ = State::closed;  // our DREQ was answered
        }
        break;
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
        state_ = State::closed;
        set_cm_error(Errc::not_connected);
        break;
      default:
        break;  // TIMEWAIT_EXIT and the like
    }
  }

  WorkCompletion convert(const ibv_wc& wc) {
    WorkCompletion out;
    out.wr_id = wc.wr_id;
    out.qp_num = wc.qp_num;
    out.byte_len = wc.byte_len;
    bool is_recv = false;
    std::uint32_t recv_lkey = 0;
    {
      std::lock_guard lock(err_mu_);
      auto it = recv_lkeys_.find(wc.wr_id);
      // Only receive completions can be matched reliably this way when the status is an error
      // (ibv_wc.opcode is undefined then); wr_ids of sends and receives may coincide, so for a
      // success the opcode decides.
      if (it != recv_lkeys_.end() &&
          (wc.status != IBV_WC_SUCCESS || (wc.opcode & IBV_WC_RECV) != 0)) {
        is_recv = true;
        recv_lkey = it->second;
        recv_lkeys_.erase(it);
      }
    }
    if (wc.status != IBV_WC_SUCCESS) {
      const Errc e = wc_status_errc(wc.status);
      out.status = e;
      out.opcode = is_recv ? WcOpcode::recv : WcOpcode::send;
      if (e == Errc::flushed) {
        ++dev_->flushed;
        set_error(Errc::not_connected);
      } else {
        set_error(e);
      }
      return out;
    }
    switch (wc.opcode) {
      case IBV_WC_SEND:
        out.opcode = WcOpcode::send;
        break;
      case IBV_WC_RDMA_WRITE:
        out.opcode = WcOpcode::rdma_write;
        break;
      case IBV_WC_RDMA_READ:
        out.opcode = WcOpcode::rdma_read;
        break;
      case IBV_WC_RECV:
        out.opcode = WcOpcode::recv;
        dev_->count_received(recv_lkey, wc.byte_len);
        dev_->bytes_received += wc.byte_len;
        break;
      case IBV_WC_RECV_RDMA_WITH_IMM:
        out.opcode = WcOpcode::recv_rdma_with_imm;
        dev_->bytes_received += wc.byte_len;
        break;
      default:
        out.opcode = WcOpcode::send;
        break;
    }
    if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) out.imm = ntohl(wc.imm_data);
    // ibv_wc does not report the SE bit; a receive that woke a solicited-only CQ had it.
    out.solicited = false;
    return out;
  }

  std::shared_ptr<VerbsDevice> dev_;
  bool solicited_only_ = false;
  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* id_ = nullptr;
  ibv_comp_channel* comp_ = nullptr;
  ibv_cq* cq_ = nullptr;
  std::uint32_t qpn_ = 0;
  std::uint32_t remote_qpn_ = 0;
  std::uint32_t path_mtu_ = 0;
  std::function<void()> callback_;
  std::mutex cm_mu_;
  State state_ = State::idle;  // guarded by cm_mu_ after connect()
  mutable std::mutex err_mu_;
  std::error_code error_;     // the first failed completion
  std::error_code cm_error_;  // disconnected (either side) or device removal
  std::map<std::uint64_t, std::uint32_t> recv_lkeys_;  // outstanding receives: wr_id -> lkey
};

class VerbsTransport final : public Transport {
 public:
  VerbsTransport(std::shared_ptr<VerbsDevice> dev, VerbsOptions o)
      : dev_(std::move(dev)), opts_(std::move(o)) {}

  std::string name() const override {
    return "verbs " + dev_->device_name() + " port " + std::to_string(dev_->port()) + " " +
           format_ipv4(dev_->local_ip());
  }
  std::uint32_t local_ip() const noexcept override { return dev_->local_ip(); }

  std::error_code register_memory(void* addr, std::size_t length, Access access,
                                  MemoryRegion& out) override {
    return dev_->register_memory(addr, length, access, out);
  }
  std::error_code deregister_memory(const MemoryRegion& mr) override {
    return dev_->deregister_memory(mr);
  }
  std::uint64_t remote_bytes_written(const MemoryRegion& mr) const override {
    return dev_->remote_bytes_written(mr);
  }
  bool observes_remote_writes() const noexcept override { return false; }

  std::unique_ptr<QueuePair> connect(const ConnectParams& params, std::error_code& ec,
                                     std::string* detail) override {
    auto qp = std::make_unique<VerbsQp>(dev_, opts_.solicited_only);
    std::string d;
    ec = qp->connect(dev_->local_ip(), params, opts_, d);
    if (ec) {
      if (detail != nullptr) *detail = d;
      return nullptr;
    }
    return qp;
  }

  void progress(std::chrono::nanoseconds /*timeout*/) override {}

  TransportStats stats() const override {
    TransportStats s;
    const PortCounters c = dev_->counters_since_open();
    s.packets_sent = c.sent_pkts;
    s.packets_received = c.rcvd_pkts;
    s.bytes_sent = dev_->bytes_sent;
    s.bytes_received = dev_->bytes_received;
    s.retransmitted_packets = c.completer_retry_err;
    s.seq_naks_received = c.rcvd_seq_err;
    s.rnr_naks_received = c.rcvd_rnr_err;
    s.rnr_naks_sent = c.send_rnr_err;
    s.duplicates_received = c.duplicate_request;
    s.dropped_out_of_order = c.out_of_seq_request;
    return s;
  }

 private:
  std::shared_ptr<VerbsDevice> dev_;
  VerbsOptions opts_;
};

}  // namespace
}  // namespace detail

std::shared_ptr<Transport> open_verbs(const VerbsOptions& options, std::error_code& ec,
                                      std::string* detail) {
  auto dev = std::make_shared<detail::VerbsDevice>();
  std::string d;
  ec = dev->open(options, d);
  if (ec) {
    if (detail != nullptr) *detail = d;
    return nullptr;
  }
  return std::make_shared<detail::VerbsTransport>(std::move(dev), options);
}

}  // namespace naa::host
