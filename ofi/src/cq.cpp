// Completion queues (context, msg, data and tagged formats; an error at the head makes fi_cq_read
// answer -FI_EAVAIL until fi_cq_readerr takes it; fi_cq_sread; FI_WAIT_FD with fi_trywait) and
// counters. With manual progress, reading a CQ or counter is what progresses its domain.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "enosys.hpp"
#include "naa/host/error.hpp"
#include "naa_fi.hpp"

namespace naa::ofi {
namespace {

using host::Errc;
using Clock = std::chrono::steady_clock;

Cq* as_cq(fid_cq* c) {
  return reinterpret_cast<Cq*>(c);
}
Cntr* as_cntr(fid_cntr* c) {
  return reinterpret_cast<Cntr*>(c);
}

std::size_t entry_size(fi_cq_format f) {
  switch (f) {
    case FI_CQ_FORMAT_MSG:
      return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA:
      return sizeof(fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED:
      return sizeof(fi_cq_tagged_entry);
    default:
      return sizeof(fi_cq_entry);
  }
}

void write_entry(fi_cq_format f, const CqEntry& e, void* out) {
  fi_cq_tagged_entry t{};
  t.op_context = e.op_context;
  t.flags = e.flags;
  t.len = e.len;
  t.buf = e.buf;
  t.data = e.data;
  t.tag = 0;
  // The formats are prefixes of one another (fi_eq.h), so one copy of the right length does.
  std::memcpy(out, &t, entry_size(f));
}

ssize_t take(Cq& cq, void* buf, size_t count) {
  std::lock_guard lock(cq.mu);
  if (cq.entries.empty()) return -FI_EAGAIN;
  if (cq.entries.front().error) return -FI_EAVAIL;
  std::size_t n = 0;
  auto* out = static_cast<std::uint8_t*>(buf);
  while (n < count && !cq.entries.empty() && !cq.entries.front().error) {
    write_entry(cq.format, cq.entries.front(), out + n * entry_size(cq.format));
    cq.entries.pop_front();
    ++n;
  }
  if (cq.entries.empty() && cq.wait_fd >= 0) {
    std::uint64_t v = 0;
    (void)!::read(cq.wait_fd, &v, sizeof v);
  }
  return static_cast<ssize_t>(n);
}

ssize_t cq_read(fid_cq* f, void* buf, size_t count) noexcept {
  return guard(
      [&]() -> ssize_t {
        Cq& cq = *as_cq(f);
        cq.domain->progress();
        return take(cq, buf, count);
      },
      ssize_t{-FI_EOTHER});
}

ssize_t cq_readfrom(fid_cq* f, void* buf, size_t count, fi_addr_t* src) noexcept {
  const ssize_t n = cq_read(f, buf, count);
  // Connected endpoints have no source addresses to give.
  for (ssize_t i = 0; src != nullptr && i < n; ++i)
    src[i] = FI_ADDR_NOTAVAIL;
  return n;
}

ssize_t cq_readerr(fid_cq* f, fi_cq_err_entry* buf, uint64_t flags) noexcept {
  return guard(
      [&]() -> ssize_t {
        Cq& cq = *as_cq(f);
        std::lock_guard lock(cq.mu);
        if (cq.entries.empty() || !cq.entries.front().error) return -FI_EAGAIN;
        const CqEntry e = cq.entries.front();
        if (!(flags & FI_PEEK)) cq.entries.pop_front();
        void* user_data = buf->err_data;
        const std::size_t user_size = buf->err_data_size;
        *buf = fi_cq_err_entry{};
        buf->op_context = e.op_context;
        buf->flags = e.flags;
        buf->len = e.len;
        buf->buf = e.buf;
        buf->data = e.data;
        buf->err = e.err;
        buf->prov_errno = e.prov_errno;
        buf->err_data = user_size > 0 ? user_data : nullptr;
        buf->err_data_size = 0;
        return 1;
      },
      ssize_t{-FI_EOTHER});
}

ssize_t cq_sread(fid_cq* f, void* buf, size_t count, const void*, int timeout) noexcept {
  return guard(
      [&]() -> ssize_t {
        Cq& cq = *as_cq(f);
        const auto deadline = Clock::now() + std::chrono::milliseconds(timeout);
        for (;;) {
          cq.domain->progress();
          const ssize_t r = take(cq, buf, count);
          if (r != -FI_EAGAIN) return r;
          if (timeout >= 0 && Clock::now() >= deadline) return -FI_EAGAIN;
          // fi_cq_signal, before this call or during it, ends one wait with -FI_EAGAIN (the state
          // is kept until a waiter takes it, as libfabric's ofi_cq_sreadfrom does).
          if (cq.signaled.exchange(false)) return -FI_EAGAIN;
          if (cq.domain->auto_progress) {
            std::unique_lock lock(cq.mu);
            auto until = timeout >= 0 ? deadline : Clock::now() + std::chrono::seconds(1);
            cq.cv.wait_until(lock, until,
                             [&] { return !cq.entries.empty() || cq.signaled.load(); });
          } else {
            // Manual progress: waiting means progressing the transport (it blocks in its poll).
            cq.domain->transport->progress(std::chrono::milliseconds(1));
          }
        }
      },
      ssize_t{-FI_EOTHER});
}

ssize_t cq_sreadfrom(fid_cq* f, void* buf, size_t count, fi_addr_t* src, const void* cond,
                     int timeout) noexcept {
  const ssize_t n = cq_sread(f, buf, count, cond, timeout);
  for (ssize_t i = 0; src != nullptr && i < n; ++i)
    src[i] = FI_ADDR_NOTAVAIL;
  return n;
}

int cq_signal(fid_cq* f) noexcept {
  Cq& cq = *as_cq(f);
  {
    std::lock_guard lock(cq.mu);  // not between a waiter's predicate check and its sleep
    cq.signaled = true;
  }
  cq.cv.notify_all();
  return 0;
}

const char* cq_strerror(fid_cq*, int prov_errno, const void*, char* buf, size_t len) noexcept {
  return prov_strerror(prov_errno, buf, len);
}

int cq_close(fid* f) noexcept {
  Cq* cq = reinterpret_cast<Cq*>(f);
  if (cq->refs.load() > 0) return -FI_EBUSY;
  if (cq->wait_fd >= 0) ::close(cq->wait_fd);
  cq->domain->refs--;
  delete cq;
  return 0;
}

// FI_GETWAIT: the eventfd; FI_GETWAITOBJ: which wait object (libfabric's wait sets and ofi_rxm ask
// it before FI_GETWAIT, prov/util/src/util_wait.c ofi_wait_get_fid_fds).
int cq_control(fid* f, int command, void* arg) noexcept {
  Cq* cq = reinterpret_cast<Cq*>(f);
  switch (command) {
    case FI_GETWAIT:
      if (cq->wait_fd < 0) return -FI_ENODATA;
      *static_cast<int*>(arg) = cq->wait_fd;
      return 0;
    case FI_GETWAITOBJ:
      *static_cast<fi_wait_obj*>(arg) = cq->wait_obj;
      return 0;
    default:
      return -FI_ENOSYS;
  }
}

fi_ops g_cq_fid_ops = {
    .size = sizeof(fi_ops),
    .close = cq_close,
    .bind = FI_NO(fi_ops, bind),
    .control = cq_control,
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};
fi_ops_cq g_cq_ops = {sizeof(fi_ops_cq), cq_read,      cq_readfrom, cq_readerr,
                      cq_sread,          cq_sreadfrom, cq_signal,   cq_strerror};

uint64_t cntr_read(fid_cntr* f) noexcept {
  return guard(
      [&]() -> uint64_t {
        Cntr& c = *as_cntr(f);
        c.domain->progress();
        std::lock_guard lock(c.mu);
        return c.value;
      },
      uint64_t{0});
}

uint64_t cntr_readerr(fid_cntr* f) noexcept {
  return guard(
      [&]() -> uint64_t {
        Cntr& c = *as_cntr(f);
        c.domain->progress();
        std::lock_guard lock(c.mu);
        return c.errors;
      },
      uint64_t{0});
}

int cntr_change(fid_cntr* f, uint64_t v, bool error, bool set) noexcept {
  return guard(
      [&]() -> int {
        Cntr& c = *as_cntr(f);
        {
          std::lock_guard lock(c.mu);
          std::uint64_t& x = error ? c.errors : c.value;
          x = set ? v : x + v;
        }
        c.cv.notify_all();
        return 0;
      },
      -FI_EOTHER);
}
int cntr_add(fid_cntr* f, uint64_t v) noexcept {
  return cntr_change(f, v, false, false);
}
int cntr_set(fid_cntr* f, uint64_t v) noexcept {
  return cntr_change(f, v, false, true);
}
int cntr_adderr(fid_cntr* f, uint64_t v) noexcept {
  return cntr_change(f, v, true, false);
}
int cntr_seterr(fid_cntr* f, uint64_t v) noexcept {
  return cntr_change(f, v, true, true);
}

int cntr_wait(fid_cntr* f, uint64_t threshold, int timeout) noexcept {
  return guard(
      [&]() -> int {
        Cntr& c = *as_cntr(f);
        const auto deadline = Clock::now() + std::chrono::milliseconds(timeout);
        for (;;) {
          c.domain->progress();
          std::unique_lock lock(c.mu);
          const std::uint64_t errors_before = c.errors;
          if (c.value >= threshold) return 0;
          if (timeout >= 0 && Clock::now() >= deadline) return -FI_ETIMEDOUT;
          if (c.domain->auto_progress) {
            c.cv.wait_for(lock, std::chrono::milliseconds(10));
          } else {
            lock.unlock();
            c.domain->transport->progress(std::chrono::milliseconds(1));
            lock.lock();
          }
          if (c.errors != errors_before) return -FI_EAVAIL;
        }
      },
      -FI_EOTHER);
}

int cntr_close(fid* f) noexcept {
  Cntr* c = reinterpret_cast<Cntr*>(f);
  if (c->refs.load() > 0) return -FI_EBUSY;
  c->domain->refs--;
  delete c;
  return 0;
}

fi_ops g_cntr_fid_ops = {
    .size = sizeof(fi_ops),
    .close = cntr_close,
    .bind = FI_NO(fi_ops, bind),
    .control = FI_NO(fi_ops, control),  // no wait object to hand out
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};
fi_ops_cntr g_cntr_ops = {sizeof(fi_ops_cntr), cntr_read,   cntr_readerr, cntr_add, cntr_set,
                          cntr_wait,           cntr_adderr, cntr_seterr};

}  // namespace

void Cq::push(const CqEntry& e) {
  bool was_empty = false;
  {
    std::lock_guard lock(mu);
    was_empty = entries.empty();
    entries.push_back(e);
  }
  if (was_empty && wait_fd >= 0) {
    const std::uint64_t one = 1;
    (void)!::write(wait_fd, &one, sizeof one);
  }
  cv.notify_all();
}

void Cntr::add(bool error) {
  {
    std::lock_guard lock(mu);
    ++(error ? errors : value);
  }
  cv.notify_all();
}

int cq_open(fid_domain* domain, fi_cq_attr* attr, fid_cq** out, void* context) noexcept {
  return guard(
      [&]() -> int {
        if (attr == nullptr) return -FI_EINVAL;
        if (attr->format != FI_CQ_FORMAT_UNSPEC && attr->format != FI_CQ_FORMAT_CONTEXT &&
            attr->format != FI_CQ_FORMAT_MSG && attr->format != FI_CQ_FORMAT_DATA &&
            attr->format != FI_CQ_FORMAT_TAGGED) {
          return -FI_ENOSYS;
        }
        if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
            attr->wait_obj != FI_WAIT_FD) {
          return -FI_ENOSYS;
        }
        if (attr->flags & FI_AFFINITY) return -FI_ENOSYS;
        auto cq = std::make_unique<Cq>();
        cq->fid.fid.fclass = FI_CLASS_CQ;
        cq->fid.fid.context = context;
        cq->fid.fid.ops = &g_cq_fid_ops;
        cq->fid.ops = &g_cq_ops;
        cq->domain = reinterpret_cast<Domain*>(domain);
        cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
        // FI_WAIT_UNSPEC is ours to choose: an fd, as libfabric's verbs provider does, so that
        // ofi_rxm and wait sets (FI_GETWAITOBJ, FI_GETWAIT) can poll it.
        cq->wait_obj = attr->wait_obj == FI_WAIT_UNSPEC ? FI_WAIT_FD : attr->wait_obj;
        if (cq->wait_obj == FI_WAIT_FD) {
          cq->wait_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
          if (cq->wait_fd < 0) return -FI_EMFILE;
        }
        cq->domain->refs++;
        *out = &cq.release()->fid;
        return 0;
      },
      -FI_ENOMEM);
}

int cntr_open(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** out, void* context) noexcept {
  return guard(
      [&]() -> int {
        if (attr != nullptr && attr->events != FI_CNTR_EVENTS_COMP) return -FI_ENOSYS;
        if (attr != nullptr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) {
          return -FI_ENOSYS;
        }
        auto c = std::make_unique<Cntr>();
        c->fid.fid.fclass = FI_CLASS_CNTR;
        c->fid.fid.context = context;
        c->fid.fid.ops = &g_cntr_fid_ops;
        c->fid.ops = &g_cntr_ops;
        c->domain = reinterpret_cast<Domain*>(domain);
        c->domain->refs++;
        *out = &c.release()->fid;
        return 0;
      },
      -FI_ENOMEM);
}

// fi_trywait: -FI_EAGAIN if any of the CQs has entries (after progressing their domains), so the
// caller must read instead of blocking on the wait fds; 0 if it may block.
int fabric_trywait(fid_fabric*, fid** fids, int count) noexcept {
  return guard(
      [&]() -> int {
        for (int i = 0; i < count; ++i) {
          if (fids[i]->fclass == FI_CLASS_CQ) {
            Cq* cq = reinterpret_cast<Cq*>(fids[i]);
            cq->domain->progress();
            std::lock_guard lock(cq->mu);
            if (!cq->entries.empty()) return -FI_EAGAIN;
          } else if (fids[i]->fclass == FI_CLASS_EQ) {
            Eq* eq = reinterpret_cast<Eq*>(fids[i]);
            eq->poll_sources();
            std::lock_guard lock(eq->mu);
            if (!eq->events.empty()) return -FI_EAGAIN;
          } else if (fids[i]->fclass != FI_CLASS_CNTR) {
            return -FI_EINVAL;
          }
        }
        return 0;
      },
      -FI_EOTHER);
}

int fi_error_of(std::error_code ec) noexcept {
  if (ec.category() != host::host_category()) return FI_EOTHER;
  switch (static_cast<Errc>(ec.value())) {
    case Errc::retry_exceeded:
      return FI_ETIMEDOUT;
    case Errc::rnr_retry_exceeded:
      return FI_ENORX;
    case Errc::remote_access_error:
    case Errc::local_protection_error:
      return FI_EACCES;
    case Errc::remote_invalid_request:
      return FI_EINVAL;
    case Errc::remote_operational_error:
      return FI_EREMOTEIO;
    case Errc::local_length_error:
      return FI_ETRUNC;
    case Errc::flushed:
      return FI_ECANCELED;
    case Errc::not_connected:
    case Errc::disconnected:
      return FI_ENOTCONN;
    default:
      return FI_EOTHER;
  }
}

int prov_errno_of(std::error_code ec) noexcept {
  if (ec.category() != host::host_category()) return 0;
  switch (static_cast<Errc>(ec.value())) {
    case Errc::remote_invalid_request:
      return 0x61;
    case Errc::remote_access_error:
      return 0x62;
    case Errc::remote_operational_error:
      return 0x63;
    default:
      return 0x1000 + ec.value();
  }
}

const char* prov_strerror(int prov_errno, char* buf, std::size_t len) noexcept {
  static thread_local char local[128];
  if (buf == nullptr || len == 0) {
    buf = local;
    len = sizeof local;
  }
  if (prov_errno >= 0x61 && prov_errno <= 0x63) {
    static const char* const names[] = {"invalid request", "remote access error",
                                        "remote operational error"};
    std::snprintf(buf, len, "NAK 0x%02x (%s)", prov_errno, names[prov_errno - 0x61]);
  } else if (prov_errno >= 0x1000) {
    const std::string m = guard(
        [&] { return host::make_error_code(static_cast<Errc>(prov_errno - 0x1000)).message(); },
        std::string("error"));
    std::snprintf(buf, len, "%s", m.c_str());
  } else if (prov_errno > 0) {
    std::snprintf(buf, len, "CM REJ reason %d", prov_errno);
  } else {
    std::snprintf(buf, len, "no provider error");
  }
  return buf;
}

}  // namespace naa::ofi
