// Helpers of the Verbs backend (verbs_device.hpp).
#include <fcntl.h>
#include <poll.h>

#include <fstream>

#include "verbs_device.hpp"

namespace naa::host::detail {
namespace {

std::uint64_t read_counter(const std::string& dir, const char* name) {
  std::ifstream f(dir + "/" + name);
  std::uint64_t v = 0;
  f >> v;
  return f ? v : 0;
}

}  // namespace

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

int ms_until(Clock::time_point deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<std::int64_t>(ms, 1 << 30));
}

bool next_cm_event(rdma_event_channel* ch, Clock::time_point deadline, CmEvent& out, int& err) {
  err = 0;
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (::rdma_get_cm_event(ch, &ev) == 0) {
      out.type = ev->event;
      out.status = ev->status;
      const auto* pd = static_cast<const std::uint8_t*>(ev->param.conn.private_data);
      if (pd != nullptr &&
          (ev->event == RDMA_CM_EVENT_REJECTED || ev->event == RDMA_CM_EVENT_ESTABLISHED ||
           ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE)) {
        out.private_data.assign(pd, pd + ev->param.conn.private_data_len);
      } else {
        out.private_data.clear();
      }
      ::rdma_ack_cm_event(ev);
      return true;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      err = errno;
      return false;
    }
    const int wait_ms = ms_until(deadline);
    if (wait_ms == 0) return false;
    pollfd p{ch->fd, POLLIN, 0};
    const int r = ::poll(&p, 1, wait_ms);
    if (r < 0 && errno != EINTR) {
      err = errno;
      return false;
    }
  }
}

Errc wc_status_errc(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_RETRY_EXC_ERR:
      return Errc::retry_exceeded;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return Errc::rnr_retry_exceeded;
    case IBV_WC_REM_INV_REQ_ERR:
      return Errc::remote_invalid_request;
    case IBV_WC_REM_ACCESS_ERR:
      return Errc::remote_access_error;
    case IBV_WC_REM_OP_ERR:
      return Errc::remote_operational_error;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_MW_BIND_ERR:
      return Errc::local_protection_error;
    case IBV_WC_LOC_LEN_ERR:
      return Errc::local_length_error;
    case IBV_WC_WR_FLUSH_ERR:
      return Errc::flushed;
    default:
      return Errc::remote_operational_error;
  }
}

PortCounters read_port_counters(const std::string& dir) {
  PortCounters c;
  if (dir.empty()) return c;
  c.sent_pkts = read_counter(dir, "sent_pkts");
  c.rcvd_pkts = read_counter(dir, "rcvd_pkts");
  c.rcvd_seq_err = read_counter(dir, "rcvd_seq_err");
  c.rcvd_rnr_err = read_counter(dir, "rcvd_rnr_err");
  c.send_rnr_err = read_counter(dir, "send_rnr_err");
  c.duplicate_request = read_counter(dir, "duplicate_request");
  c.out_of_seq_request = read_counter(dir, "out_of_seq_request");
  c.completer_retry_err = read_counter(dir, "completer_retry_err");
  return c;
}

}  // namespace naa::host::detail
