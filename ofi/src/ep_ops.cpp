// The data operations of an endpoint: fi_send/recv/inject/sendmsg/senddata, fi_write/writedata/
// read and their msg, vector and inject forms, over one RC QP. The transmit queue is bounded
// (tx_attr->size): a post while that many operations are queued or in flight answers -FI_EAGAIN
// and changes nothing, as the GNI provider's transmit descriptors do. With manual progress a post
// only queues; the CQ and counter reads submit (Domain::progress).
#include <algorithm>
#include <cstring>

#include "naa_fi.hpp"

namespace naa::ofi {
namespace {

Ep* as_ep(fid_ep* f) {
  return reinterpret_cast<Ep*>(f);
}

struct Tx {
  host::WrOpcode opcode = host::WrOpcode::send;
  const void* buf = nullptr;
  std::size_t len = 0;
  void* desc = nullptr;
  std::uint64_t remote_addr = 0;
  std::uint64_t key = 0;
  std::uint64_t data = 0;
  void* context = nullptr;
  std::uint64_t flags = 0;  // completion flags
  bool inject = false;
  bool completion = false;  // FI_COMPLETION asked for (selective completion)
  std::shared_ptr<Bounce> bounce;
};

std::size_t iov_bytes(const iovec* iov, std::size_t count) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count; ++i)
    n += iov[i].iov_len;
  return n;
}

// A registered bounce buffer for `count` iovecs: gathered now (gather) or scattered into them at
// completion. nullptr if the transport refuses the registration.
std::shared_ptr<Bounce> make_bounce(Ep& ep, const iovec* iov, std::size_t count, bool gather) {
  auto b = std::make_shared<Bounce>();
  b->data.resize(std::max<std::size_t>(iov_bytes(iov, count), 1));
  if (gather) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (iov[i].iov_len > 0) std::memcpy(b->data.data() + at, iov[i].iov_base, iov[i].iov_len);
      at += iov[i].iov_len;
    }
  } else {
    b->scatter.assign(iov, iov + count);
  }
  if (ep.domain->transport->register_memory(b->data.data(), b->data.size(),
                                            host::Access::local_write, b->mr)) {
    return nullptr;
  }
  return b;
}

// The SGE of [buf, buf + len) in the MR `desc` (FI_MR_LOCAL), or false if it lies outside.
bool local_sge(const void* buf, std::size_t len, void* desc, host::Sge& sge) {
  sge.addr = reinterpret_cast<std::uint64_t>(buf);
  sge.length = static_cast<std::uint32_t>(len);
  sge.lkey = 0;
  if (len == 0) return true;
  if (desc == nullptr) return false;
  const host::MemoryRegion& r = static_cast<Mr*>(desc)->region;
  const auto base = reinterpret_cast<std::uint64_t>(r.addr);
  if (sge.addr < base || sge.addr + len > base + r.length) return false;
  sge.lkey = r.lkey;
  return true;
}

ssize_t post_tx(Ep& ep, const Tx& t) {
  if (t.len > kMaxMsgSize) return -FI_EMSGSIZE;
  if (t.key > 0xFFFFFFFFULL) return -FI_EINVAL;  // 4-byte keys (mr_key_size)
  if (t.inject && t.len > kInjectSize) return -FI_EMSGSIZE;
  Domain& d = *ep.domain;
  std::lock_guard lock(d.mu);
  if (ep.state.load() != EpState::connected || !ep.qp) return -FI_ENOTCONN;
  if (ep.tx_outstanding >= ep.tx_size) return -FI_EAGAIN;  // the bounded transmit queue
  host::SendWr wr;
  int slot = -1;
  if (t.inject) {
    slot = ep.free_slots.back();
    ep.free_slots.pop_back();
    std::uint8_t* p = ep.inject_buf.data() + static_cast<std::size_t>(slot) * kInjectSize;
    if (t.len > 0) std::memcpy(p, t.buf, t.len);
    wr.sge = {reinterpret_cast<std::uint64_t>(p), static_cast<std::uint32_t>(t.len),
              ep.inject_mr.lkey};
  } else if (t.bounce) {
    wr.sge = {reinterpret_cast<std::uint64_t>(t.bounce->data.data()),
              static_cast<std::uint32_t>(t.len), t.bounce->mr.lkey};
  } else if (!local_sge(t.buf, t.len, t.desc, wr.sge)) {
    return -FI_EINVAL;
  }
  wr.wr_id = ep.next_wr_id++;
  wr.opcode = t.opcode;
  wr.remote_addr = t.remote_addr;
  wr.rkey = static_cast<std::uint32_t>(t.key);
  wr.imm = static_cast<std::uint32_t>(t.data);
  wr.signaled = true;  // always: the queue slot is freed by the completion
  // SE on every message the peer's receive completes for (PROTOCOL.md 5.1, 5.2 ask it of a host
  // talking to an NAA; libfabric has no flag for it, and SE only wakes solicited-armed waiters).
  wr.solicited = t.opcode != host::WrOpcode::rdma_write && t.opcode != host::WrOpcode::rdma_read;
  Op op;
  op.context = t.context;
  op.flags = t.flags;
  op.len = t.len;
  op.buf = const_cast<void*>(t.buf);
  op.tx = true;
  op.report = !t.inject && (!ep.tx_selective || t.completion);
  op.inject_slot = slot;
  op.bounce = t.bounce;
  ep.ops.emplace(wr.wr_id, op);
  ++ep.tx_outstanding;
  if (!d.auto_progress) {
    ep.unsubmitted.push_back(wr);
    return 0;
  }
  if (const std::error_code ec = ep.qp->post_send(wr)) {
    ep.ops.erase(wr.wr_id);
    --ep.tx_outstanding;
    if (slot >= 0) ep.free_slots.push_back(slot);
    return -fi_error_of(ec);
  }
  return 0;
}

ssize_t post_rx(Ep& ep, void* buf, std::size_t len, void* desc, void* context,
                std::shared_ptr<Bounce> bounce = nullptr) {
  if (len > kMaxMsgSize) return -FI_EMSGSIZE;
  Domain& d = *ep.domain;
  std::lock_guard lock(d.mu);
  if (ep.rx_outstanding >= ep.rx_size) return -FI_EAGAIN;
  host::RecvWr wr;
  if (bounce) {
    wr.sge = {reinterpret_cast<std::uint64_t>(bounce->data.data()), static_cast<std::uint32_t>(len),
              bounce->mr.lkey};
  } else if (!local_sge(buf, len, desc, wr.sge)) {
    return -FI_EINVAL;
  }
  wr.wr_id = ep.next_wr_id++;
  Op op;
  op.context = context;
  op.flags = FI_RECV | FI_MSG;
  op.len = len;
  op.buf = buf;
  op.tx = false;
  op.report = true;
  op.bounce = std::move(bounce);
  ep.ops.emplace(wr.wr_id, op);
  ++ep.rx_outstanding;
  if (!ep.qp) {
    ep.unposted.push_back(wr);  // posted when the connection is up (fi_enable, then fi_connect)
    return 0;
  }
  if (const std::error_code ec = ep.qp->post_recv(wr)) {
    ep.ops.erase(wr.wr_id);
    --ep.rx_outstanding;
    return -fi_error_of(ec);
  }
  return 0;
}

bool default_completion(const Ep& ep) {
  return ep.info != nullptr && ep.info->tx_attr != nullptr &&
         (ep.info->tx_attr->op_flags & FI_COMPLETION) != 0;
}

template <class F>
ssize_t call(F&& f) noexcept {
  return guard(std::forward<F>(f), ssize_t{-FI_ENOMEM});
}

// Up to kIovLimit iovecs: one passes through as it is, several go through a bounce buffer (an
// inject gathers into its slot directly). The bounce registration is released here if the post
// fails, else at the completion (Domain::dispatch).
ssize_t post_tx_iov(Ep& ep, Tx t, const iovec* iov, void** desc, std::size_t count) {
  if (count > kIovLimit) return -FI_EINVAL;
  if (count <= 1) {
    t.buf = count == 1 ? iov[0].iov_base : nullptr;
    t.len = count == 1 ? iov[0].iov_len : 0;
    t.desc = count == 1 && desc != nullptr ? desc[0] : nullptr;
    return post_tx(ep, t);
  }
  t.len = iov_bytes(iov, count);
  if (t.len > kMaxMsgSize) return -FI_EMSGSIZE;
  if (t.inject) {
    if (t.len > kInjectSize) return -FI_EMSGSIZE;
    std::vector<std::uint8_t> gathered;
    gathered.reserve(t.len);
    for (std::size_t i = 0; i < count; ++i) {
      const auto* p = static_cast<const std::uint8_t*>(iov[i].iov_base);
      gathered.insert(gathered.end(), p, p + iov[i].iov_len);
    }
    t.buf = gathered.data();
    return post_tx(ep, t);
  }
  const bool read = t.opcode == host::WrOpcode::rdma_read;
  t.bounce = make_bounce(ep, iov, count, !read);
  if (!t.bounce) return -FI_ENOMEM;
  t.buf = iov[0].iov_base;
  const ssize_t r = post_tx(ep, t);
  if (r != 0) (void)ep.domain->transport->deregister_memory(t.bounce->mr);
  return r;
}

ssize_t post_rx_iov(Ep& ep, const iovec* iov, void** desc, std::size_t count, void* context) {
  if (count > kIovLimit) return -FI_EINVAL;
  if (count <= 1) {
    return post_rx(ep, count == 1 ? iov[0].iov_base : nullptr, count == 1 ? iov[0].iov_len : 0,
                   count == 1 && desc != nullptr ? desc[0] : nullptr, context);
  }
  const std::size_t len = iov_bytes(iov, count);
  if (len > kMaxMsgSize) return -FI_EMSGSIZE;
  auto b = make_bounce(ep, iov, count, false);
  if (!b) return -FI_ENOMEM;
  const host::MemoryRegion mr = b->mr;
  const ssize_t r = post_rx(ep, iov[0].iov_base, len, nullptr, context, std::move(b));
  if (r != 0) (void)ep.domain->transport->deregister_memory(mr);
  return r;
}

Tx make_tx(host::WrOpcode opcode, std::uint64_t data, void* context, bool inject, bool completion) {
  Tx t;
  t.opcode = opcode;
  t.data = data;
  t.context = context;
  t.flags = opcode == host::WrOpcode::send || opcode == host::WrOpcode::send_with_imm
                ? FI_SEND | FI_MSG
                : FI_RMA | (opcode == host::WrOpcode::rdma_read ? FI_READ : FI_WRITE);
  t.inject = inject;
  t.completion = completion;
  return t;
}

ssize_t send_common(fid_ep* f, const void* buf, size_t len, void* desc, uint64_t data,
                    bool has_data, void* context, bool inject, bool completion) {
  Tx t;
  t.opcode = has_data ? host::WrOpcode::send_with_imm : host::WrOpcode::send;
  t.buf = buf;
  t.len = len;
  t.desc = desc;
  t.data = data;
  t.context = context;
  t.flags = FI_SEND | FI_MSG;
  t.inject = inject;
  t.completion = completion;
  return post_tx(*as_ep(f), t);
}

ssize_t rma_common(fid_ep* f, host::WrOpcode opcode, const void* buf, size_t len, void* desc,
                   uint64_t addr, uint64_t key, uint64_t data, void* context, bool inject,
                   bool completion) {
  Tx t;
  t.opcode = opcode;
  t.buf = buf;
  t.len = len;
  t.desc = desc;
  t.remote_addr = addr;
  t.key = key;
  t.data = data;
  t.context = context;
  t.flags = FI_RMA | (opcode == host::WrOpcode::rdma_read ? FI_READ : FI_WRITE);
  t.inject = inject;
  t.completion = completion;
  return post_tx(*as_ep(f), t);
}

ssize_t m_recv(fid_ep* f, void* buf, size_t len, void* desc, fi_addr_t, void* ctx) noexcept {
  return call([&] { return post_rx(*as_ep(f), buf, len, desc, ctx); });
}
ssize_t m_recvv(fid_ep* f, const iovec* iov, void** desc, size_t count, fi_addr_t,
                void* ctx) noexcept {
  return call([&] { return post_rx_iov(*as_ep(f), iov, desc, count, ctx); });
}
ssize_t m_recvmsg(fid_ep* f, const fi_msg* msg, uint64_t) noexcept {
  return call([&] {
    return post_rx_iov(*as_ep(f), msg->msg_iov, msg->desc, msg->iov_count, msg->context);
  });
}
ssize_t m_send(fid_ep* f, const void* buf, size_t len, void* desc, fi_addr_t, void* ctx) noexcept {
  return call([&] {
    return send_common(f, buf, len, desc, 0, false, ctx, false, default_completion(*as_ep(f)));
  });
}
ssize_t m_sendv(fid_ep* f, const iovec* iov, void** desc, size_t count, fi_addr_t,
                void* ctx) noexcept {
  return call([&] {
    const Tx t = make_tx(host::WrOpcode::send, 0, ctx, false, default_completion(*as_ep(f)));
    return post_tx_iov(*as_ep(f), t, iov, desc, count);
  });
}
ssize_t m_sendmsg(fid_ep* f, const fi_msg* msg, uint64_t flags) noexcept {
  return call([&] {
    const bool imm = (flags & FI_REMOTE_CQ_DATA) != 0;
    const Tx t = make_tx(imm ? host::WrOpcode::send_with_imm : host::WrOpcode::send, msg->data,
                         msg->context, (flags & FI_INJECT) != 0, (flags & FI_COMPLETION) != 0);
    return post_tx_iov(*as_ep(f), t, msg->msg_iov, msg->desc, msg->iov_count);
  });
}
ssize_t m_inject(fid_ep* f, const void* buf, size_t len, fi_addr_t) noexcept {
  return call([&] { return send_common(f, buf, len, nullptr, 0, false, nullptr, true, false); });
}
ssize_t m_senddata(fid_ep* f, const void* buf, size_t len, void* desc, uint64_t data, fi_addr_t,
                   void* ctx) noexcept {
  return call([&] {
    return send_common(f, buf, len, desc, data, true, ctx, false, default_completion(*as_ep(f)));
  });
}
ssize_t m_injectdata(fid_ep* f, const void* buf, size_t len, uint64_t data, fi_addr_t) noexcept {
  return call([&] { return send_common(f, buf, len, nullptr, data, true, nullptr, true, false); });
}

ssize_t r_read(fid_ep* f, void* buf, size_t len, void* desc, fi_addr_t, uint64_t addr, uint64_t key,
               void* ctx) noexcept {
  return call([&] {
    return rma_common(f, host::WrOpcode::rdma_read, buf, len, desc, addr, key, 0, ctx, false,
                      default_completion(*as_ep(f)));
  });
}
ssize_t r_readv(fid_ep* f, const iovec* iov, void** desc, size_t count, fi_addr_t, uint64_t addr,
                uint64_t key, void* ctx) noexcept {
  return call([&] {
    Tx t = make_tx(host::WrOpcode::rdma_read, 0, ctx, false, default_completion(*as_ep(f)));
    t.remote_addr = addr;
    t.key = key;
    return post_tx_iov(*as_ep(f), t, iov, desc, count);
  });
}
ssize_t r_readmsg(fid_ep* f, const fi_msg_rma* m, uint64_t flags) noexcept {
  if (m->rma_iov_count != 1) return -FI_EINVAL;  // rma_iov_limit 1
  return call([&] {
    Tx t = make_tx(host::WrOpcode::rdma_read, 0, m->context, false, (flags & FI_COMPLETION) != 0);
    t.remote_addr = m->rma_iov[0].addr;
    t.key = m->rma_iov[0].key;
    return post_tx_iov(*as_ep(f), t, m->msg_iov, m->desc, m->iov_count);
  });
}
ssize_t r_write(fid_ep* f, const void* buf, size_t len, void* desc, fi_addr_t, uint64_t addr,
                uint64_t key, void* ctx) noexcept {
  return call([&] {
    return rma_common(f, host::WrOpcode::rdma_write, buf, len, desc, addr, key, 0, ctx, false,
                      default_completion(*as_ep(f)));
  });
}
ssize_t r_writev(fid_ep* f, const iovec* iov, void** desc, size_t count, fi_addr_t, uint64_t addr,
                 uint64_t key, void* ctx) noexcept {
  return call([&] {
    Tx t = make_tx(host::WrOpcode::rdma_write, 0, ctx, false, default_completion(*as_ep(f)));
    t.remote_addr = addr;
    t.key = key;
    return post_tx_iov(*as_ep(f), t, iov, desc, count);
  });
}
ssize_t r_writemsg(fid_ep* f, const fi_msg_rma* m, uint64_t flags) noexcept {
  if (m->rma_iov_count != 1) return -FI_EINVAL;  // rma_iov_limit 1
  return call([&] {
    const bool imm = (flags & FI_REMOTE_CQ_DATA) != 0;
    Tx t = make_tx(imm ? host::WrOpcode::rdma_write_with_imm : host::WrOpcode::rdma_write, m->data,
                   m->context, (flags & FI_INJECT) != 0, (flags & FI_COMPLETION) != 0);
    t.remote_addr = m->rma_iov[0].addr;
    t.key = m->rma_iov[0].key;
    return post_tx_iov(*as_ep(f), t, m->msg_iov, m->desc, m->iov_count);
  });
}
ssize_t r_inject(fid_ep* f, const void* buf, size_t len, fi_addr_t, uint64_t addr,
                 uint64_t key) noexcept {
  return call([&] {
    return rma_common(f, host::WrOpcode::rdma_write, buf, len, nullptr, addr, key, 0, nullptr, true,
                      false);
  });
}
// fi_writedata: RDMA WRITE WITH IMMEDIATE; the peer's receive completes with FI_REMOTE_CQ_DATA.
ssize_t r_writedata(fid_ep* f, const void* buf, size_t len, void* desc, uint64_t data, fi_addr_t,
                    uint64_t addr, uint64_t key, void* ctx) noexcept {
  return call([&] {
    return rma_common(f, host::WrOpcode::rdma_write_with_imm, buf, len, desc, addr, key, data, ctx,
                      false, default_completion(*as_ep(f)));
  });
}
ssize_t r_injectdata(fid_ep* f, const void* buf, size_t len, uint64_t data, fi_addr_t,
                     uint64_t addr, uint64_t key) noexcept {
  return call([&] {
    return rma_common(f, host::WrOpcode::rdma_write_with_imm, buf, len, nullptr, addr, key, data,
                      nullptr, true, false);
  });
}

}  // namespace

// fi_cancel (fi_endpoint(3)): takes back the oldest posted receive with this context that no
// message has reached yet and reports it as an error completion, err FI_ECANCELED, on the
// receive CQ (and the receive counter's errors). A receive a multi-packet message is filling, or
// one the QP has completed but not yet dispatched, completes as it would have: the next match is
// tried, and -FI_ENOENT if none is left. Transmits are on the wire at once (manual progress: at
// the next progress) and are not cancelled. IRN connections cannot take a receive back (its SENDs
// name their receive by position): -FI_ENOSYS.
ssize_t ep_cancel(fid_t f, void* context) noexcept {
  return guard(
      [&]() -> ssize_t {
        if (f == nullptr || f->fclass != FI_CLASS_EP) return -FI_EINVAL;
        if (context == nullptr) return -FI_ENOENT;  // posted without a context: not cancellable
        Ep& ep = *reinterpret_cast<Ep*>(f);
        Domain& d = *ep.domain;
        std::lock_guard lock(d.mu);
        bool unsupported = false;
        for (auto it = ep.ops.begin(); it != ep.ops.end(); ++it) {
          if (it->second.tx || it->second.context != context) continue;
          const std::uint64_t wr_id = it->first;
          auto queued = std::find_if(ep.unposted.begin(), ep.unposted.end(),
                                     [&](const host::RecvWr& w) { return w.wr_id == wr_id; });
          if (queued != ep.unposted.end()) {
            ep.unposted.erase(queued);
          } else if (!ep.qp) {
            continue;
          } else if (const std::error_code ec = ep.qp->cancel_recv(wr_id)) {
            if (ec == host::Errc::not_supported) unsupported = true;
            continue;
          }
          const Op op = it->second;
          ep.ops.erase(it);
          --ep.rx_outstanding;
          if (op.bounce) finish_bounce(*d.transport, *op.bounce, 0, false);
          CqEntry e;
          e.op_context = op.context;
          e.flags = op.flags;
          e.buf = op.buf;
          e.error = true;
          e.err = FI_ECANCELED;
          if (ep.recv_cntr != nullptr) ep.recv_cntr->add(true);
          if (ep.rx_cq != nullptr) ep.rx_cq->push(e);
          return 0;
        }
        return unsupported ? -FI_ENOSYS : -FI_ENOENT;
      },
      ssize_t{-FI_EOTHER});
}

fi_ops_msg g_msg_ops = {sizeof(fi_ops_msg), m_recv,   m_recvv,    m_recvmsg,   m_send, m_sendv,
                        m_sendmsg,          m_inject, m_senddata, m_injectdata};
fi_ops_rma g_rma_ops = {sizeof(fi_ops_rma), r_read,     r_readv,  r_readmsg,   r_write,
                        r_writev,           r_writemsg, r_inject, r_writedata, r_injectdata};

}  // namespace naa::ofi
