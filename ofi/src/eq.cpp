// Event queues: FI_CONNREQ (a REQ for a listening passive endpoint, with its private data),
// FI_CONNECTED, FI_SHUTDOWN (the peer's DREQ), and errors for fi_eq_readerr (a REJ:
// FI_ECONNREFUSED, prov_errno the REJ reason, err_data its private data). With manual progress the
// connection events arrive while the application reads the EQ (poll_sources progresses the
// transports).
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "enosys.hpp"
#include "naa/host/error.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa_fi.hpp"

namespace naa::ofi {

// ep_cm.cpp: turns a request taken from `pep`'s transport into a FI_CONNREQ on its EQ.
void route_request(Pep& pep, const host::ConnectRequest& request);

namespace {

Eq* as_eq(fid_eq* e) {
  return reinterpret_cast<Eq*>(e);
}

void signal_fd(int fd) {
  if (fd < 0) return;
  const std::uint64_t one = 1;
  (void)!::write(fd, &one, sizeof one);
}

void drain_fd(int fd) {
  if (fd < 0) return;
  std::uint64_t v = 0;
  (void)!::read(fd, &v, sizeof v);
}

ssize_t take(Eq& eq, uint32_t* event, void* buf, size_t len, uint64_t flags) {
  std::lock_guard lock(eq.mu);
  if (eq.events.empty()) return -FI_EAGAIN;
  EqEvent& e = eq.events.front();
  if (e.error) return -FI_EAVAIL;
  if (len < std::min<std::size_t>(e.data.size(), sizeof(fi_eq_cm_entry))) return -FI_ETOOSMALL;
  const std::size_t n = std::min(len, e.data.size());
  if (event != nullptr) *event = e.event;
  if (buf != nullptr) std::memcpy(buf, e.data.data(), n);
  if (!(flags & FI_PEEK)) {
    eq.events.pop_front();
    if (eq.events.empty()) drain_fd(eq.wait_fd);
  }
  return static_cast<ssize_t>(n);
}

ssize_t eq_read(fid_eq* f, uint32_t* event, void* buf, size_t len, uint64_t flags) noexcept {
  return guard(
      [&]() -> ssize_t {
        Eq& eq = *as_eq(f);
        eq.poll_sources();
        return take(eq, event, buf, len, flags);
      },
      ssize_t{-FI_EOTHER});
}

ssize_t eq_readerr(fid_eq* f, fi_eq_err_entry* buf, uint64_t flags) noexcept {
  return guard(
      [&]() -> ssize_t {
        Eq& eq = *as_eq(f);
        std::lock_guard lock(eq.mu);
        if (eq.events.empty() || !eq.events.front().error) return -FI_EAGAIN;
        eq.last_error = eq.events.front();
        if (!(flags & FI_PEEK)) eq.events.pop_front();
        const std::vector<std::uint8_t>& d = eq.last_error.err_data;
        fi_eq_err_entry out = eq.last_error.err;
        if (buf->err_data != nullptr && buf->err_data_size > 0) {
          // libfabric >= 1.5: the caller's buffer, if it gave one.
          const std::size_t n = std::min(buf->err_data_size, d.size());
          std::memcpy(buf->err_data, d.data(), n);
          out.err_data = buf->err_data;
          out.err_data_size = n;
        } else {
          out.err_data = d.empty() ? nullptr : const_cast<std::uint8_t*>(d.data());
          out.err_data_size = d.size();
        }
        *buf = out;
        return static_cast<ssize_t>(sizeof(fi_eq_err_entry));
      },
      ssize_t{-FI_EOTHER});
}

ssize_t eq_write(fid_eq* f, uint32_t event, const void* buf, size_t len, uint64_t) noexcept {
  return guard(
      [&]() -> ssize_t {
        EqEvent e;
        e.event = event;
        const auto* p = static_cast<const std::uint8_t*>(buf);
        e.data.assign(p, p + len);
        as_eq(f)->push(std::move(e));
        return static_cast<ssize_t>(len);
      },
      ssize_t{-FI_ENOMEM});
}

ssize_t eq_sread(fid_eq* f, uint32_t* event, void* buf, size_t len, int timeout,
                 uint64_t flags) noexcept {
  return guard(
      [&]() -> ssize_t {
        Eq& eq = *as_eq(f);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
        for (;;) {
          eq.poll_sources();
          const ssize_t r = take(eq, event, buf, len, flags);
          if (r != -FI_EAGAIN) return r;
          if (timeout >= 0 && std::chrono::steady_clock::now() >= deadline) return -FI_EAGAIN;
          std::unique_lock lock(eq.mu);
          eq.cv.wait_for(lock, std::chrono::milliseconds(2), [&] { return !eq.events.empty(); });
        }
      },
      ssize_t{-FI_EOTHER});
}

const char* eq_strerror(fid_eq*, int prov_errno, const void*, char* buf, size_t len) noexcept {
  return prov_strerror(prov_errno, buf, len);
}

int eq_close(fid* f) noexcept {
  return guard(
      [&]() -> int {
        Eq* eq = reinterpret_cast<Eq*>(f);
        {
          std::lock_guard lock(eq->sources_mu);
          if (!eq->peps.empty() || !eq->eps.empty()) return -FI_EBUSY;
        }
        eq->stop_cm_thread();
        if (eq->wait_fd >= 0) ::close(eq->wait_fd);
        delete eq;
        return 0;
      },
      -FI_EOTHER);
}

int eq_control(fid* f, int command, void* arg) noexcept {
  Eq* eq = reinterpret_cast<Eq*>(f);
  switch (command) {
    case FI_GETWAIT:
      if (eq->wait_fd < 0) return -FI_ENODATA;
      *static_cast<int*>(arg) = eq->wait_fd;
      return 0;
    case FI_GETWAITOBJ:
      *static_cast<fi_wait_obj*>(arg) = eq->wait_obj;
      return 0;
    default:
      return -FI_ENOSYS;
  }
}

fi_ops g_eq_fid_ops = {
    .size = sizeof(fi_ops),
    .close = eq_close,
    .bind = FI_NO(fi_ops, bind),
    .control = eq_control,
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};
fi_ops_eq g_eq_ops = {sizeof(fi_ops_eq), eq_read, eq_readerr, eq_write, eq_sread, eq_strerror};

}  // namespace

void Eq::push(EqEvent e) {
  {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
  signal_fd(wait_fd);
  cv.notify_all();
}

void Eq::poll_sources() {
  app.called();
  poll_sources_work();
}

// Connection management goes on while the application does not read the EQ (issue 29): a REQ is
// answered, a FI_CONNREQ / FI_SHUTDOWN reaches the EQ and its fd, as with a NIC's CM. Parked while
// the application reads the EQ itself.
void Eq::cm_thread_main() {
  std::unique_lock lock(cm_mu);
  bool driving = false;
  while (!cm_stop) {
    // Parked for kNicIdle after a look that found the application reading the EQ; otherwise a
    // turn every kNicSlice (CM is not latency bound: the REQ is retried, PROTOCOL.md 4).
    cm_cv.wait_for(lock, driving ? std::chrono::milliseconds(kNicSlice) : kNicIdle);
    if (cm_stop) return;
    driving = app.idle_since_last_look();
    if (!driving) continue;
    lock.unlock();
    poll_sources_work();
    lock.lock();
  }
}

void Eq::stop_cm_thread() {
  {
    std::lock_guard lock(cm_mu);
    cm_stop = true;
  }
  cm_cv.notify_all();
  if (cm_thread.joinable()) cm_thread.join();
}

void Eq::poll_sources_work() {
  // Held throughout: fi_close of an endpoint or passive endpoint bound here waits for it (it used
  // to copy the lists and look at endpoints another thread might be deleting meanwhile).
  std::lock_guard sources(sources_mu);
  for (Pep* pep : peps) {
    if (!pep->listening) continue;
    pep->transport->progress(std::chrono::nanoseconds(0));  // manual progress; a no-op if auto
    while (auto r = host::udp_roce_next_request(*pep->transport, std::chrono::nanoseconds(0))) {
      route_request(*pep, *r);
    }
  }
  for (Ep* ep : eps) {
    if (ep->state.load() != EpState::connected) continue;
    ep->domain->transport->progress(std::chrono::nanoseconds(0));
    std::lock_guard dl(ep->domain->mu);
    if (ep->shutdown_reported || !ep->qp) continue;
    if (ep->qp->error() == make_error_code(host::Errc::disconnected)) {
      // The peer's DREQ (a local fi_shutdown marks the endpoint reported first).
      ep->shutdown_reported = true;
      ep->state = EpState::shut;
      EqEvent e;
      e.event = FI_SHUTDOWN;
      fi_eq_cm_entry entry{};
      entry.fid = &ep->fid.fid;
      e.data.resize(sizeof entry);
      std::memcpy(e.data.data(), &entry, sizeof entry);
      push(std::move(e));
    }
  }
}

int eq_open(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** out, void* context) noexcept {
  return guard(
      [&]() -> int {
        if (attr != nullptr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
            attr->wait_obj != FI_WAIT_FD) {
          return -FI_ENOSYS;
        }
        auto eq = std::make_unique<Eq>();
        eq->fid.fid.fclass = FI_CLASS_EQ;
        eq->fid.fid.context = context;
        eq->fid.fid.ops = &g_eq_fid_ops;
        eq->fid.ops = &g_eq_ops;
        eq->fabric = reinterpret_cast<Fabric*>(fabric);
        eq->wait_obj = attr != nullptr ? attr->wait_obj : FI_WAIT_NONE;
        // FI_WAIT_UNSPEC: an fd (ofi_rxm polls its msg EQ's fd, FI_GETWAIT).
        if (eq->wait_obj == FI_WAIT_UNSPEC) eq->wait_obj = FI_WAIT_FD;
        if (eq->wait_obj == FI_WAIT_FD) {
          eq->wait_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
          if (eq->wait_fd < 0) return -FI_EMFILE;
        }
        bool thread = true;
        if (!param_bool("progress_thread", thread) || thread) {
          Eq* raw = eq.get();
          eq->cm_thread = std::thread([raw] { raw->cm_thread_main(); });
        }
        *out = &eq.release()->fid;
        return 0;
      },
      -FI_ENOMEM);
}

}  // namespace naa::ofi
