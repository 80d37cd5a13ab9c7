// Domains (one UdpRoce transport each, shared per local address), memory registration (FI_MR_LOCAL,
// FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY; the key is the transport's 4-byte rkey), and
// progress: the transmit queue submission of manual progress and the completion dispatch into CQs
// and counters (docs/host/libfabric.md "Progress").
#include <cstring>

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

fi_ops g_mr_fid_ops = {sizeof(fi_ops), mr_close, nullptr, nullptr, nullptr, nullptr, nullptr};

int mr_reg(fid* f, const void* buf, size_t len, uint64_t access, uint64_t offset,
           uint64_t /*requested_key: FI_MR_PROV_KEY*/, uint64_t flags, fid_mr** out,
           void* context) noexcept {
  return guard(
      [&]() -> int {
        if (flags != 0 || offset != 0) return -FI_EINVAL;
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
        fi_freeinfo(d->info);
        delete d;
        return 0;
      },
      -FI_EOTHER);
}

int no_av(fid_domain*, fi_av_attr*, fid_av**, void*) noexcept {
  return -FI_ENOSYS;
}
int no_sep(fid_domain*, fi_info*, fid_ep**, void*) noexcept {
  return -FI_ENOSYS;
}
int no_poll(fid_domain*, fi_poll_attr*, fid_poll**) noexcept {
  return -FI_ENOSYS;
}
int no_stx(fid_domain*, fi_tx_attr*, fid_stx**, void*) noexcept {
  return -FI_ENOSYS;
}
int no_srx(fid_domain*, fi_rx_attr*, fid_ep**, void*) noexcept {
  return -FI_ENOSYS;
}
int no_atomic(fid_domain*, fi_datatype, fi_op, fi_atomic_attr*, uint64_t) noexcept {
  return -FI_ENOSYS;  // atomics are out of scope (docs/host/libfabric.md)
}
int no_collective(fid_domain*, fi_collective_op, fi_collective_attr*, uint64_t) noexcept {
  return -FI_ENOSYS;
}

fi_ops g_domain_fid_ops = {sizeof(fi_ops), domain_close, nullptr, nullptr,
                           nullptr,        nullptr,      nullptr};
fi_ops_domain g_domain_ops = {
    .size = sizeof(fi_ops_domain),
    .av_open = no_av,
    .cq_open = cq_open,
    .endpoint = ep_open,
    .scalable_ep = no_sep,
    .cntr_open = cntr_open,
    .poll_open = no_poll,
    .stx_ctx = no_stx,
    .srx_ctx = no_srx,
    .query_atomic = no_atomic,
    .query_collective = no_collective,
    .endpoint2 = nullptr,
};
fi_ops_mr g_mr_ops = {sizeof(fi_ops_mr), mr_reg, mr_regv, mr_regattr};

}  // namespace

void Domain::dispatch(Ep& ep) {
  if (!ep.qp) return;
  std::array<host::WorkCompletion, 32> wcs;
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

void Domain::progress() {
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
        *out = &d.release()->fid;
        return 0;
      },
      -FI_ENOMEM);
}

}  // namespace naa::ofi
