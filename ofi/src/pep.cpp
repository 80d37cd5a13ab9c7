// Passive endpoints (fi_passive_ep): fi_listen on a UdpRoce CM port (naa/host/udp_listen.hpp),
// each connection request an FI_CONNREQ event on the bound EQ with its fi_info (handle: the
// request, which fi_accept on a new endpoint or fi_reject answers; ep_cm.cpp), fi_reject as REJ 28
// with private data.
#include <algorithm>
#include <cstring>
#include <memory>

#include "enosys.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa_fi.hpp"

namespace naa::ofi {
namespace {

constexpr std::uint16_t kFirstListenPort = 7471;  // fi_listen on port 0 takes the first free

Pep* as_pep(fid* f) {
  return reinterpret_cast<Pep*>(f);
}

int connreq_close(fid* f) noexcept {
  delete reinterpret_cast<ConnReq*>(f);
  return 0;
}
fi_ops g_connreq_ops = {
    .size = sizeof(fi_ops),
    .close = connreq_close,
    .bind = FI_NO(fi_ops, bind),
    .control = FI_NO(fi_ops, control),
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};

int pep_getname(fid_t f, void* addr, size_t* addrlen) noexcept {
  Pep* pep = as_pep(f);
  return getname_sin(pep->transport->local_ip(), pep->port, addr, addrlen);
}

int pep_listen(fid_pep* f) noexcept {
  return guard(
      [&]() -> int {
        Pep* pep = as_pep(&f->fid);
        if (pep->listening) return 0;
        if (pep->port != 0) {
          if (host::udp_roce_listen(*pep->transport, pep->port)) return -FI_EADDRINUSE;
        } else {
          std::uint16_t port = kFirstListenPort;
          while (host::udp_roce_listen(*pep->transport, port)) {
            if (++port == 0) return -FI_EADDRINUSE;
          }
          pep->port = port;
        }
        pep->listening = true;
        return 0;
      },
      -FI_EOTHER);
}

int pep_reject(fid_pep*, fid_t handle, const void* param, size_t paramlen) noexcept {
  return guard(
      [&]() -> int {
        if (handle == nullptr || handle->fclass != FI_CLASS_CONNREQ) return -FI_EINVAL;
        if (paramlen > kRejectDataSize) return -FI_EINVAL;
        ConnReq* cr = reinterpret_cast<ConnReq*>(handle);
        const auto* bytes = static_cast<const std::uint8_t*>(param);
        const std::error_code ec = host::udp_roce_reject(
            *cr->transport, cr->id, std::span<const std::uint8_t>(bytes, paramlen));
        delete cr;
        return ec ? -FI_EINVAL : 0;
      },
      -FI_EOTHER);
}

fi_ops_cm g_pep_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = FI_NO(fi_ops_cm, setname),
    .getname = pep_getname,
    .getpeer = FI_NO(fi_ops_cm, getpeer),
    .connect = FI_NO(fi_ops_cm, connect),
    .listen = pep_listen,
    .accept = FI_NO(fi_ops_cm, accept),
    .reject = pep_reject,
    .shutdown = FI_NO(fi_ops_cm, shutdown),
    .join = FI_NO(fi_ops_cm, join),
};

int pep_bind(fid* f, fid* b, uint64_t) noexcept {
  return guard(
      [&]() -> int {
        if (b->fclass != FI_CLASS_EQ) return -FI_EINVAL;
        Pep* pep = as_pep(f);
        Eq* eq = reinterpret_cast<Eq*>(b);
        std::lock_guard lock(eq->sources_mu);
        pep->eq = eq;
        eq->peps.push_back(pep);
        return 0;
      },
      -FI_EOTHER);
}

int pep_close(fid* f) noexcept {
  return guard(
      [&]() -> int {
        Pep* pep = as_pep(f);
        if (pep->listening) (void)host::udp_roce_unlisten(*pep->transport, pep->port);
        if (pep->eq != nullptr) {
          std::lock_guard lock(pep->eq->sources_mu);  // not while fi_eq_read looks at it
          auto& v = pep->eq->peps;
          v.erase(std::remove(v.begin(), v.end(), pep), v.end());
        }
        fi_freeinfo(pep->info);
        delete pep;
        return 0;
      },
      -FI_EOTHER);
}

fi_ops g_pep_fid_ops = {
    .size = sizeof(fi_ops),
    .close = pep_close,
    .bind = pep_bind,
    .control = FI_NO(fi_ops, control),
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};
fi_ops_ep g_pep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = FI_NO(fi_ops_ep, cancel),
    .getopt = ep_getopt,
    .setopt = ep_setopt,
    .tx_ctx = FI_NO(fi_ops_ep, tx_ctx),
    .rx_ctx = FI_NO(fi_ops_ep, rx_ctx),
    .rx_size_left = FI_NO(fi_ops_ep, rx_size_left),
    .tx_size_left = FI_NO(fi_ops_ep, tx_size_left),
};

}  // namespace

void route_request(Pep& pep, const host::ConnectRequest& r) {
  if (pep.eq == nullptr || r.cm_port != pep.port) {
    (void)host::udp_roce_reject(*pep.transport, r.id);
    return;
  }
  auto cr = std::make_unique<ConnReq>();
  cr->self.fclass = FI_CLASS_CONNREQ;
  cr->self.ops = &g_connreq_ops;
  cr->transport = pep.transport;
  cr->id = r.id;
  const sockaddr_in dest = make_sin(r.remote_ip, r.remote_port);
  fi_info* info = make_info(pep.info, pep.transport->local_ip(), pep.port, &dest);
  if (info == nullptr) {
    (void)host::udp_roce_reject(*pep.transport, r.id);
    return;
  }
  info->handle = &cr.release()->self;
  pep.eq->push(cm_event(FI_CONNREQ, &pep.fid.fid, info, r.private_data));
}

int pep_open(fid_fabric* fabric, fi_info* info, fid_pep** out, void* context) noexcept {
  return guard(
      [&]() -> int {
        if (info == nullptr) return -FI_EINVAL;
        std::uint32_t ip = default_local_ip();
        std::uint16_t port = 0;
        if (info->src_addr != nullptr && !parse_sin(info->src_addr, info->src_addrlen, ip, port)) {
          return -FI_EINVAL;
        }
        auto pep = std::make_unique<Pep>();
        pep->fid.fid.fclass = FI_CLASS_PEP;
        pep->fid.fid.context = context;
        pep->fid.fid.ops = &g_pep_fid_ops;
        pep->fid.ops = &g_pep_ops;
        pep->fid.cm = &g_pep_cm_ops;
        pep->fabric = reinterpret_cast<Fabric*>(fabric);
        bool auto_progress =
            info->domain_attr != nullptr && info->domain_attr->data_progress == FI_PROGRESS_AUTO;
        int err = 0;
        std::string detail;
        pep->transport = transport_for(ip, auto_progress, err, detail);
        if (!pep->transport) return err;
        pep->port = port;
        pep->info = fi_dupinfo(info);
        if (pep->info == nullptr) return -FI_ENOMEM;
        *out = &pep.release()->fid;
        return 0;
      },
      -FI_ENOMEM);
}

}  // namespace naa::ofi
