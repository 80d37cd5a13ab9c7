// The Verbs backend's device (verbs_transport.cpp has the QPs and the Transport): the anchor
// rdma_cm_id, the verbs context, the protection domain and the MR map, with the small librdmacm
// helpers both files use (verbs_device.cpp).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ipv4_socket.hpp"
#include "naa/host/error.hpp"
#include "naa/host/verbs.hpp"

namespace naa::host::detail {

using Clock = std::chrono::steady_clock;

bool set_nonblocking(int fd);
// Milliseconds until `deadline`, rounded up, for poll(2); 0 if it has passed.
int ms_until(Clock::time_point deadline);
inline std::uint32_t mtu_bytes(ibv_mtu m) {
  return 128U << static_cast<unsigned>(m);  // IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5
}

// A CM event copied out of librdmacm (and acknowledged at once, so that rdma_destroy_id never
// waits for us).
struct CmEvent {
  rdma_cm_event_type type = RDMA_CM_EVENT_ADDR_ERROR;
  int status = 0;
  std::vector<std::uint8_t> private_data;
};

// Reads one CM event; false if none arrived before `deadline` (err 0) or reading failed (err set).
bool next_cm_event(rdma_event_channel* ch, Clock::time_point deadline, CmEvent& out, int& err);

Errc wc_status_errc(ibv_wc_status s);

// Port counters of the device (rxe names; other drivers have other names or none). Device-wide.
struct PortCounters {
  std::uint64_t sent_pkts = 0;
  std::uint64_t rcvd_pkts = 0;
  std::uint64_t rcvd_seq_err = 0;
  std::uint64_t rcvd_rnr_err = 0;
  std::uint64_t send_rnr_err = 0;
  std::uint64_t duplicate_request = 0;
  std::uint64_t out_of_seq_request = 0;
  std::uint64_t completer_retry_err = 0;
};
PortCounters read_port_counters(const std::string& dir);

// The device, its PD and the registered memory; shared by the transport and its QPs.
class VerbsDevice {
 public:
  VerbsDevice() = default;
  VerbsDevice(const VerbsDevice&) = delete;
  VerbsDevice& operator=(const VerbsDevice&) = delete;
  ~VerbsDevice() {
    for (auto& [lkey, mr] : mrs_)
      (void)::ibv_dereg_mr(mr.mr);
    if (zero_mr_ != nullptr) (void)::ibv_dereg_mr(zero_mr_);
    if (pd_ != nullptr) (void)::ibv_dealloc_pd(pd_);
    if (anchor_ != nullptr) (void)::rdma_destroy_id(anchor_);
    if (channel_ != nullptr) ::rdma_destroy_event_channel(channel_);
  }

  std::error_code open(const VerbsOptions& o, std::string& detail) {
    channel_ = ::rdma_create_event_channel();
    if (channel_ == nullptr) {
      detail = errno_text("rdma_create_event_channel", errno) +
               " (no RDMA device, or /dev/infiniband/rdma_cm missing)";
      return Errc::not_supported;
    }
    if (!set_nonblocking(channel_->fd)) {
      detail = errno_text("fcntl", errno);
      return Errc::socket_error;
    }
    if (::rdma_create_id(channel_, &anchor_, nullptr, RDMA_PS_TCP) != 0) {
      detail = errno_text("rdma_create_id", errno);
      return Errc::socket_error;
    }
    if (o.local_ip) {
      sockaddr_in src = make_sockaddr(*o.local_ip, 0);
      if (::rdma_bind_addr(anchor_, as_sockaddr(src)) != 0) {
        detail = errno_text("rdma_bind_addr", errno) + " for " + format_ipv4(*o.local_ip);
        return Errc::not_supported;
      }
      if (anchor_->verbs == nullptr) {
        detail = "no RDMA device has the address " + format_ipv4(*o.local_ip);
        return Errc::not_supported;
      }
    } else if (o.remote_ip) {
      sockaddr_in dst = make_sockaddr(*o.remote_ip, 0);
      const int ms = static_cast<int>(o.resolve_timeout.count());
      if (::rdma_resolve_addr(anchor_, nullptr, as_sockaddr(dst), ms) != 0) {
        detail = errno_text("rdma_resolve_addr", errno) + " for " + format_ipv4(*o.remote_ip);
        return Errc::naa_unreachable;
      }
      CmEvent ev;
      int err = 0;
      if (!next_cm_event(channel_, Clock::now() + o.resolve_timeout + std::chrono::seconds(1), ev,
                         err) ||
          ev.type != RDMA_CM_EVENT_ADDR_RESOLVED) {
        detail = "no RDMA route to " + format_ipv4(*o.remote_ip) + " (" +
                 (err != 0 ? std::string(std::strerror(err)) : rdma_event_str(ev.type)) + ")";
        return Errc::naa_unreachable;
      }
    } else {
      detail = "the Verbs backend needs a local address or the NAA's address";
      return Errc::invalid_argument;
    }
    const auto* local = reinterpret_cast<const sockaddr_in*>(  // NOLINT: the sockets API
        ::rdma_get_local_addr(anchor_));
    local_ip_ =
        local != nullptr && local->sin_family == AF_INET ? ipv4_of(*local) : o.local_ip.value_or(0);
    ctx_ = anchor_->verbs;
    port_ = anchor_->port_num;
    device_name_ = ::ibv_get_device_name(ctx_->device);
    if (::ibv_query_device(ctx_, &attr_) != 0) {
      detail = errno_text("ibv_query_device", errno);
      return Errc::socket_error;
    }
    pd_ = ::ibv_alloc_pd(ctx_);
    if (pd_ == nullptr) {
      detail = errno_text("ibv_alloc_pd", errno);
      return Errc::socket_error;
    }
    // Zero-length regions (allowed by the interface, refused by some drivers) share one small MR:
    // a zero-length access never touches memory and skips R_Key checks (IBTA).
    zero_mr_ = ::ibv_reg_mr(pd_, zero_buf_, sizeof zero_buf_,
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (zero_mr_ == nullptr) {
      detail = errno_text("ibv_reg_mr", errno);
      return Errc::socket_error;
    }
    counters_dir_ = "/sys/class/infiniband/" + device_name_ + "/ports/" + std::to_string(port_) +
                    "/hw_counters";
    base_ = read_port_counters(counters_dir_);
    return {};
  }

  std::error_code register_memory(void* addr, std::size_t length, Access access,
                                  MemoryRegion& out) {
    out = {};
    if (length == 0) {
      out = {addr, 0, zero_mr_->lkey, zero_mr_->rkey, access};
      return {};
    }
    if (addr == nullptr) return Errc::invalid_argument;
    unsigned flags = 0;
    if (has_access(access, Access::local_write)) flags |= IBV_ACCESS_LOCAL_WRITE;
    // IBTA: remote write needs local write.
    if (has_access(access, Access::remote_write)) {
      flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    }
    if (has_access(access, Access::remote_read)) flags |= IBV_ACCESS_REMOTE_READ;
    ibv_mr* mr = ::ibv_reg_mr(pd_, addr, length, flags);
    if (mr == nullptr) return Errc::local_protection_error;
    out = {addr, length, mr->lkey, mr->rkey, access};
    std::lock_guard lock(mu_);
    mrs_[mr->lkey] = Registered{mr, (flags & IBV_ACCESS_LOCAL_WRITE) != 0, 0};
    return {};
  }

  std::error_code deregister_memory(const MemoryRegion& mr) {
    if (mr.length == 0 && mr.lkey == zero_mr_->lkey) return {};
    ibv_mr* m = nullptr;
    {
      std::lock_guard lock(mu_);
      auto it = mrs_.find(mr.lkey);
      if (it == mrs_.end()) return Errc::invalid_argument;
      m = it->second.mr;
      mrs_.erase(it);
    }
    return ::ibv_dereg_mr(m) == 0 ? std::error_code{} : std::error_code(Errc::invalid_argument);
  }

  std::uint64_t remote_bytes_written(const MemoryRegion& mr) const {
    std::lock_guard lock(mu_);
    auto it = mrs_.find(mr.lkey);
    return it == mrs_.end() ? 0 : it->second.received;
  }

  // True if [addr, addr + length) lies inside the region of `lkey` (with local write access if
  // the device will write there): the same refusal at post time as the UdpRoce backend.
  bool sge_ok(const Sge& sge, bool needs_local_write) const {
    if (sge.length == 0) return true;
    std::lock_guard lock(mu_);
    auto it = mrs_.find(sge.lkey);
    if (it == mrs_.end()) return false;
    const ibv_mr* m = it->second.mr;
    const auto base = reinterpret_cast<std::uintptr_t>(m->addr);  // NOLINT: VAs are integers
    if (sge.addr < base || sge.addr - base > m->length ||
        m->length - (sge.addr - base) < sge.length) {
      return false;
    }
    return !needs_local_write || it->second.local_write;
  }

  void count_received(std::uint32_t lkey, std::uint32_t bytes) {
    std::lock_guard lock(mu_);
    auto it = mrs_.find(lkey);
    if (it != mrs_.end()) it->second.received += bytes;
  }

  ibv_context* context() const noexcept { return ctx_; }
  ibv_pd* pd() const noexcept { return pd_; }
  const ibv_device_attr& attr() const noexcept { return attr_; }
  std::uint32_t local_ip() const noexcept { return local_ip_; }
  std::uint8_t port() const noexcept { return port_; }
  const std::string& device_name() const noexcept { return device_name_; }
  PortCounters counters_since_open() const {
    const PortCounters now = read_port_counters(counters_dir_);
    PortCounters d;
    d.sent_pkts = now.sent_pkts - base_.sent_pkts;
    d.rcvd_pkts = now.rcvd_pkts - base_.rcvd_pkts;
    d.rcvd_seq_err = now.rcvd_seq_err - base_.rcvd_seq_err;
    d.rcvd_rnr_err = now.rcvd_rnr_err - base_.rcvd_rnr_err;
    d.send_rnr_err = now.send_rnr_err - base_.send_rnr_err;
    d.duplicate_request = now.duplicate_request - base_.duplicate_request;
    d.out_of_seq_request = now.out_of_seq_request - base_.out_of_seq_request;
    d.completer_retry_err = now.completer_retry_err - base_.completer_retry_err;
    return d;
  }

  std::atomic<std::uint64_t> bytes_sent{0};
  std::atomic<std::uint64_t> bytes_received{0};
  std::atomic<std::uint64_t> flushed{0};

 private:
  struct Registered {
    ibv_mr* mr = nullptr;
    bool local_write = false;
    std::uint64_t received = 0;
  };

  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* anchor_ = nullptr;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_mr* zero_mr_ = nullptr;
  alignas(64) std::uint8_t zero_buf_[64] = {};
  ibv_device_attr attr_{};
  std::uint32_t local_ip_ = 0;
  std::uint8_t port_ = 1;
  std::string device_name_;
  std::string counters_dir_;
  PortCounters base_;
  mutable std::mutex mu_;
  std::map<std::uint32_t, Registered> mrs_;
};

}  // namespace naa::host::detail
