// Domains (one UdpRoce transport each, shared per local address), memory registration (FI_MR_LOCAL,
// FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY; the key is the transport's 4-byte rkey), and
// progress: the transmit queue submission of manual progress and the completion dispatch into CQs
// and counters (docs/host/libfabric.md "Progress").
#include <algorithm>
#include <cstring>

#include "enosys.hpp"
#include "naa_fi.hpp"

namespace naa::ofi {
namespace {

Domain* as_domain(fid* f) {
  return reinterpret_cast<Domain*>(f);
}

int mr_close(fid* f) noexcept {
  return guard(
      [&]() -> int {
        Mr* mr = reinterpret_cast<Mr*>(f);
        (void)mr->domain->transport->deregister_memory(mr->region);
        mr->domain->refs--;
        delete mr;
        return 0;
      },
      -FI_EOTHER);
}

fi_ops g_mr_fid_ops = {
    .size = sizeof(fi_ops),
    .close = mr_close,
    .bind = FI_NO(fi_ops, bind),  // FI_MR_ENDPOINT is not in our mr_mode
    .control = FI_NO(fi_ops, control),
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};

int mr_reg(fid* f, const void* buf, size_t len, uint64_t access, uint64_t offset,
           uint64_t /*requested_key: FI_MR_PROV_KEY*/, uint64_t flags, fid_mr** out,
           void* context) noexcept {
  return guard(
      [&]() -> int {
        if ((flags & ~kOfiMrNoCache) != 0) return -FI_EBADFLAGS;
        if (offset != 0) return -FI_EINVAL;
        Domain* d = as_domain(f);
        host::Access a = host::Access::local_write;
        if (access & FI_REMOTE_WRITE) a = a | host::Access::remote_write;
        if (access & FI_REMOTE_READ) a = a | host::Access::remote_read;
        auto mr = std::make_unique<Mr>();
        mr->fid.fid.fclass = FI_CLASS_MR;
        mr->fid.fid.context = context;
        mr->fid.fid.ops = &g_mr_fid_ops;
        mr->domain = d;
        if (d->transport->register_memory(const_cast<void*>(buf), len, a, mr->region)) {
          return -FI_EINVAL;
        }
        mr->fid.mem_desc = mr.get();  // fi_mr_desc: what the data calls take as desc
        mr->fid.key = mr->region.rkey;
        d->refs++;
        *out = &mr.release()->fid;
        return 0;
      },
      -FI_ENOMEM);
}

int mr_regv(fid* f, const iovec* iov, size_t count, uint64_t access, uint64_t offset, uint64_t key,
            uint64_t flags, fid_mr** out, void* context) noexcept {
  if (count != 1) return -FI_EINVAL;  // mr_iov_limit 1
  return mr_reg(f, iov[0].iov_base, iov[0].iov_len, access, offset, key, flags, out, context);
}

int mr_regattr(fid* f, const fi_mr_attr* attr, uint64_t flags, fid_mr** out) noexcept {
  if (attr == nullptr || attr->iov_count != 1) return -FI_EINVAL;
  return mr_reg(f, attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len, attr->access, attr->offset,
                attr->requested_key, flags, out, attr->context);
}

int domain_close(fid* f) noexcept {
  return guard(
      [&]() -> int {
        Domain* d = as_domain(f);
        if (d->refs.load() > 0) return -FI_EBUSY;
        d->stop_nic();
        for (Ep* ep : d->closed_eps)
          delete ep;
        fi_freeinfo(d->info);
        delete d;
        return 0;
      },
      -FI_EOTHER);
}

// ops_open answers -FI_ENOSYS for every name: ofi_rxm asks for "ofix_flow_ctrl_v1" and, on
// -FI_ENOSYS, does its own flow control (prov/rxm/src/rxm_domain.c, rxm_config_flow_ctrl).
fi_ops g_domain_fid_ops = {
    .size = sizeof(fi_ops),
    .close = domain_close,
    .bind = FI_NO(fi_ops, bind),
    .control = FI_NO(fi_ops, control),
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};
// Address vectors, scalable endpoints, poll sets, shared contexts, atomics and collectives are out
// of scope (docs/host/libfabric.md).
fi_ops_domain g_domain_ops = {
    .size = sizeof(fi_ops_domain),
    .av_open = FI_NO(fi_ops_domain, av_open),
    .cq_open = cq_open,
    .endpoint = ep_open,
    .scalable_ep = FI_NO(fi_ops_domain, scalable_ep),
    .cntr_open = cntr_open,
    .poll_open = FI_NO(fi_ops_domain, poll_open),
    .stx_ctx = FI_NO(fi_ops_domain, stx_ctx),
    .srx_ctx = FI_NO(fi_ops_domain, srx_ctx),
    .query_atomic = FI_NO(fi_ops_domain, query_atomic),
    .query_collective = FI_NO(fi_ops_domain, query_collective),
    .endpoint2 = FI_NO(fi_ops_domain, endpoint2),
};
fi_ops_mr g_mr_ops = {sizeof(fi_ops_mr), mr_reg, mr_regv, mr_regattr};

}  // namespace

void Domain::dispatch(Ep& ep) {
  if (!ep.qp) return;
  std::array<host::WorkCompletion, 32>& wcs = wc_buf;  // not constructed per call (the hot path)
  for (;;) {
    const std::size_t n = ep.qp->poll_cq(wcs);
    for (std::size_t i = 0; i < n; ++i) {
      const host::WorkCompletion& wc = wcs[i];
      auto it = ep.ops.find(wc.wr_id);
      if (it == ep.ops.end()) continue;
      const Op op = it->second;
      ep.ops.erase(it);
      CqEntry e;
      e.op_context = op.context;
      e.flags = op.flags;
      e.len = op.len;
      e.buf = op.buf;
      Cntr* cntr = nullptr;
      if (op.tx) {
        --ep.tx_outstanding;
        if (op.inject_slot >= 0) ep.free_slots.push_back(op.inject_slot);
        cntr = (op.flags & FI_READ)    ? ep.read_cntr
               : (op.flags & FI_WRITE) ? ep.write_cntr
                                       : ep.send_cntr;
      } else {
        --ep.rx_outstanding;
        e.len = wc.byte_len;
        if (wc.imm) {
          e.flags |= FI_REMOTE_CQ_DATA;
          e.data = *wc.imm;
        }
        if (wc.opcode == host::WcOpcode::recv_rdma_with_imm) {
          // The immediate of an RDMA WRITE consumed this receive (FI_RX_CQ_DATA): it names the
          // write, not the receive buffer.
          e.flags = FI_REMOTE_WRITE | FI_RMA | FI_REMOTE_CQ_DATA;
          e.buf = nullptr;
          cntr = ep.remote_write_cntr;
        } else {
          cntr = ep.recv_cntr;
        }
      }
      if (op.bounce) {
        // Several iovecs: a receive's bytes (not a WRITE WITH IMMEDIATE's, which went to the
        // peer-named region) or a read's go from the bounce buffer to the application's iovecs.
        const bool scatter =
            !op.tx ? wc.opcode != host::WcOpcode::recv_rdma_with_imm : (op.flags & FI_READ) != 0;
        const std::size_t bytes = op.tx ? op.len : wc.byte_len;
        finish_bounce(*transport, *op.bounce, scatter ? bytes : 0, !wc.status);
      }
      if (wc.status) {
        e.error = true;
        e.err = fi_error_of(wc.status);
        e.prov_errno = prov_errno_of(wc.status);
        if (!op.tx) e.len = 0;
      }
      if (cntr != nullptr) cntr->add(e.error);
      Cq* cq = op.tx ? ep.tx_cq : ep.rx_cq;
      if (cq != nullptr && (e.error || op.report)) cq->push(e);
    }
    if (n < wcs.size()) break;
  }
}

void finish_bounce(host::Transport& t, Bounce& b, std::size_t len, bool ok) {
  if (ok) {
    std::size_t at = 0;
    for (const iovec& v : b.scatter) {
      if (at >= len) break;
      const std::size_t n = std::min(v.iov_len, len - at);
      std::memcpy(v.iov_base, b.data.data() + at, n);
      at += n;
    }
  }
  (void)t.deregister_memory(b.mr);
}

void Domain::progress() {
  app.called();
  progress_work();
}

// The part of the domain a NIC does whatever the application does (issue 29): with manual data
// progress nobody else reads the socket, so a peer's packets would wait unacknowledged, and its
// retransmissions run out (about 1 s of retries) while the application computes or blocks in
// epoll_wait on a CQ's fd. Once the application has not called in for kNicIdle, this thread
// drives the transport (receive, ACK, retransmit, CM) and dispatches completions into the CQs, so
// their fds wake; while the application calls, it stays parked and adds nothing to the data path.
// It submits the transmit queue too, as a NIC sends what was posted: ofi_rxm posts from its
// connection handling and then waits without reading that CQ, so held sends hung it.
//
// The thread must not compete with an application that calls in: taking the transport's turn
// while the application spins on fi_cq_read puts a thread wake-up and a lock hand-off between
// every datagram and its completion (that cost fi_pingpong 40 % at 64 B when the idle test
// compared nanoseconds with a count of milliseconds, i.e. let the thread drive after 1 ns).
void Domain::nic_main() {
  bool driving = false;
  for (;;) {
    if (!driving) {
      std::unique_lock lock(nic_mu);
      if (nic_stop) return;
      nic_cv.wait_for(lock, kNicIdle);
      if (nic_stop) return;
    } else {
      std::lock_guard lock(nic_mu);
      if (nic_stop) return;
    }
    driving = app.idle_since_last_look();
    if (!driving) continue;          // the application called in within kNicIdle: park again
    transport->progress(kNicSlice);  // returns after the first datagram or timer, or the slice
    progress_work();
  }
}

void Domain::start_nic() {
  if (auto_progress) return;  // the transport's own thread does all of it
  bool on = true;
  if (param_bool("progress_thread", on) && !on) return;
  nic = std::thread([this] { nic_main(); });
}

void Domain::stop_nic() {
  {
    std::lock_guard lock(nic_mu);
    nic_stop = true;
  }
  nic_cv.notify_all();
  if (nic.joinable()) nic.join();
}

void Domain::progress_work() {
  std::lock_guard lock(mu);
  for (Ep* ep : eps) {
    if (!ep->qp) continue;
    // Manual progress: the transmit queue reaches the wire only now (docs/host/libfabric.md).
    while (!ep->unsubmitted.empty()) {
      const host::SendWr wr = ep->unsubmitted.front();
      ep->unsubmitted.pop_front();
      if (const std::error_code ec = ep->qp->post_send(wr)) {
        auto it = ep->ops.find(wr.wr_id);
        if (it == ep->ops.end()) continue;
        CqEntry e;
        e.op_context = it->second.context;
        e.flags = it->second.flags;
        e.error = true;
        e.err = fi_error_of(ec);
        e.prov_errno = prov_errno_of(ec);
        if (it->second.inject_slot >= 0) ep->free_slots.push_back(it->second.inject_slot);
        if (it->second.bounce) finish_bounce(*transport, *it->second.bounce, 0, false);
        ep->ops.erase(it);
        --ep->tx_outstanding;
        if (ep->tx_cq != nullptr) ep->tx_cq->push(e);
      }
    }
    dispatch(*ep);
  }
}

int domain_open(fid_fabric* fabric, fi_info* info, fid_domain** out, void* context) noexcept {
  return guard(
      [&]() -> int {
        if (info == nullptr || info->domain_attr == nullptr) return -FI_EINVAL;
        std::uint32_t ip = 0;
        std::uint16_t port = 0;
        if (info->src_addr != nullptr && !parse_sin(info->src_addr, info->src_addrlen, ip, port)) {
          return -FI_EINVAL;
        }
        auto d = std::make_unique<Domain>();
        d->fid.fid.fclass = FI_CLASS_DOMAIN;
        d->fid.fid.context = context;
        d->fid.fid.ops = &g_domain_fid_ops;
        d->fid.ops = &g_domain_ops;
        d->fid.mr = &g_mr_ops;
        d->fabric = reinterpret_cast<Fabric*>(fabric);
        d->auto_progress = info->domain_attr->data_progress == FI_PROGRESS_AUTO;
        int err = 0;
        std::string detail;
        // The transport's model wins if another domain or passive endpoint opened it first.
        d->transport = transport_for(ip, d->auto_progress, err, detail);
        if (!d->transport) return err;
        d->info = fi_dupinfo(info);
        if (d->info == nullptr) return -FI_ENOMEM;
        d->start_nic();
        *out = &d.release()->fid;
        return 0;
      },
      -FI_ENOMEM);
}

}  // namespace naa::ofi
