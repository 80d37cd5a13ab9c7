// Endpoints' life and bindings, and their side of connection management over the UdpRoce CM
// (naa/host/udp_listen.hpp): fi_accept of a passive endpoint's request (REP; pep.cpp has
// fi_listen, FI_CONNREQ and fi_reject), fi_connect (REQ; the blocking UdpRoce connect runs on a
// connector thread and reports FI_CONNECTED or a FI_ECONNREFUSED error to the EQ), fi_shutdown
// (DREQ).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "enosys.hpp"
#include "naa/host/error.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa_fi.hpp"

namespace naa::ofi {
namespace {

using host::Errc;
using std::chrono::milliseconds;

Ep* as_ep(fid* f) {
  return reinterpret_cast<Ep*>(f);
}
Pep* as_pep(fid* f) {
  return reinterpret_cast<Pep*>(f);
}

milliseconds connect_timeout() {
  int ms = 0;
  return milliseconds(param_int("connect_timeout_ms", ms) && ms > 0 ? ms : 5000);
}

// The QP is up: hand it to the endpoint, post the receives queued before, and (automatic
// progress) let the transport's thread deliver completions into our CQs and counters.
void attach_qp(Ep& ep, std::unique_ptr<host::QueuePair> qp) {
  Domain* d = ep.domain;
  std::lock_guard lock(d->mu);
  ep.qp = std::move(qp);
  while (!ep.unposted.empty()) {
    (void)ep.qp->post_recv(ep.unposted.front());
    ep.unposted.pop_front();
  }
  if (d->auto_progress) {
    Ep* self = &ep;
    ep.qp->set_completion_callback([d, self] {
      std::lock_guard l(d->mu);
      if (std::find(d->eps.begin(), d->eps.end(), self) != d->eps.end()) d->dispatch(*self);
    });
  }
  ep.state = EpState::connected;
}

void run_connect(Ep* ep, host::ConnectParams params) {
  std::vector<std::uint8_t> reply;
  params.reply_private_data = &reply;
  std::error_code ec;
  std::string detail;
  auto qp = ep->domain->transport->connect(params, ec, &detail);
  if (qp) {
    attach_qp(*ep, std::move(qp));
    if (ep->eq != nullptr) ep->eq->push(cm_event(FI_CONNECTED, &ep->fid.fid, nullptr, reply));
    return;
  }
  ep->state = EpState::idle;
  if (ep->eq == nullptr) return;
  EqEvent e;
  e.error = true;
  e.err.fid = &ep->fid.fid;
  e.err.context = ep->fid.fid.context;
  e.err.err = ec == Errc::cm_timeout ? FI_ETIMEDOUT : FI_ECONNREFUSED;
  // prov_errno: the REJ reason ("... REJ reason N (...)" in the detail), else the host code.
  const auto at = detail.find("REJ reason ");
  e.err.prov_errno =
      at != std::string::npos ? std::atoi(detail.c_str() + at + 11) : prov_errno_of(ec);
  e.err_data = reply;  // the REJ's private data
  ep->eq->push(std::move(e));
}

int ep_connect(fid_ep* f, const void* addr, const void* param, size_t paramlen) noexcept {
  return guard(
      [&]() -> int {
        Ep* ep = as_ep(&f->fid);
        std::uint32_t ip = 0;
        std::uint16_t port = 0;
        if (!parse_sin(addr, sizeof(sockaddr_in), ip, port) ||
            paramlen > connect_data_size(*ep->domain->transport)) {
          return -FI_EINVAL;
        }
        if (ep->eq == nullptr || !ep->enabled) return -FI_EOPBADSTATE;
        EpState idle = EpState::idle;
        if (!ep->state.compare_exchange_strong(idle, EpState::connecting)) return -FI_EISCONN;
        if (ep->connector.joinable()) ep->connector.join();
        host::ConnectParams p;
        p.remote_ip = ip;
        p.cm_port = port;
        p.timeout = connect_timeout();
        const auto* bytes = static_cast<const std::uint8_t*>(param);
        if (paramlen > 0) p.private_data.assign(bytes, bytes + paramlen);
        ep->peer_ip = ip;
        ep->peer_port = port;
        ep->connector = std::thread(run_connect, ep, std::move(p));
        return 0;
      },
      -FI_ENOMEM);
}

int ep_accept(fid_ep* f, const void* param, size_t paramlen) noexcept {
  return guard(
      [&]() -> int {
        Ep* ep = as_ep(&f->fid);
        if (ep->connreq == nullptr || paramlen > kAcceptDataSize) return -FI_EINVAL;
        if (ep->connreq->transport != ep->domain->transport) return -FI_EINVAL;
        if (!ep->enabled) return -FI_EOPBADSTATE;
        host::AcceptParams a;
        const auto* bytes = static_cast<const std::uint8_t*>(param);
        if (paramlen > 0) a.private_data.assign(bytes, bytes + paramlen);
        std::error_code ec;
        auto qp = host::udp_roce_accept(*ep->domain->transport, ep->connreq->id, a, ec);
        delete ep->connreq;
        ep->connreq = nullptr;
        if (!qp) return -FI_ECONNABORTED;
        attach_qp(*ep, std::move(qp));
        if (ep->eq != nullptr) ep->eq->push(cm_event(FI_CONNECTED, &ep->fid.fid, nullptr, {}));
        return 0;
      },
      -FI_ENOMEM);
}

int ep_shutdown(fid_ep* f, uint64_t) noexcept {
  return guard(
      [&]() -> int {
        Ep* ep = as_ep(&f->fid);
        host::QueuePair* qp = nullptr;
        {
          std::lock_guard lock(ep->domain->mu);
          ep->shutdown_reported = true;
          if (ep->state.load() != EpState::connected) return 0;
          ep->state = EpState::shut;
          qp = ep->qp.get();
        }
        // DREQ without waiting for the DREP (outside our locks: it may run transport handlers).
        (void)qp->disconnect(milliseconds(0));
        return 0;
      },
      -FI_EOTHER);
}

int ep_getname(fid_t f, void* addr, size_t* addrlen) noexcept {
  return getname_sin(as_ep(f)->domain->transport->local_ip(), 0, addr, addrlen);
}

int ep_getpeer(fid_ep* f, void* addr, size_t* addrlen) noexcept {
  Ep* ep = as_ep(&f->fid);
  return getname_sin(ep->peer_ip, ep->peer_port, addr, addrlen);
}

fi_ops_cm g_ep_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = FI_NO(fi_ops_cm, setname),
    .getname = ep_getname,
    .getpeer = ep_getpeer,
    .connect = ep_connect,
    .listen = FI_NO(fi_ops_cm, listen),
    .accept = ep_accept,
    .reject = FI_NO(fi_ops_cm, reject),
    .shutdown = ep_shutdown,
    .join = FI_NO(fi_ops_cm, join),
};

int ep_bind(fid* f, fid* b, uint64_t flags) noexcept {
  return guard(
      [&]() -> int {
        Ep* ep = as_ep(f);
        switch (b->fclass) {
          case FI_CLASS_EQ: {
            Eq* eq = reinterpret_cast<Eq*>(b);
            std::lock_guard lock(eq->sources_mu);
            ep->eq = eq;
            eq->eps.push_back(ep);
            return 0;
          }
          case FI_CLASS_CQ: {
            Cq* cq = reinterpret_cast<Cq*>(b);
            if (!(flags & (FI_TRANSMIT | FI_RECV))) return -FI_EINVAL;
            // The progress thread dispatches completions into the bound CQs and counters under
            // Domain::mu (counters may be bound to an endpoint already connected).
            std::lock_guard lock(ep->domain->mu);
            // A CQ or counter bound in place of another releases that one (fi_close of it is no
            // longer busy).
            if (flags & FI_TRANSMIT) {
              if (ep->tx_cq != nullptr) ep->tx_cq->refs--;
              ep->tx_cq = cq;
              ep->tx_selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
              cq->refs++;
            }
            if (flags & FI_RECV) {
              if (ep->rx_cq != nullptr) ep->rx_cq->refs--;
              ep->rx_cq = cq;
              ep->rx_selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
              cq->refs++;
            }
            return 0;
          }
          case FI_CLASS_CNTR: {
            Cntr* c = reinterpret_cast<Cntr*>(b);
            if (flags & FI_REMOTE_READ) return -FI_ENOSYS;  // the responder reports no READs
            std::lock_guard lock(ep->domain->mu);
            Cntr** slots[] = {&ep->send_cntr, &ep->recv_cntr, &ep->read_cntr, &ep->write_cntr,
                              &ep->remote_write_cntr};
            const std::uint64_t bits[] = {FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_WRITE};
            bool any = false;
            for (int i = 0; i < 5; ++i) {
              if (flags & bits[i]) {
                if (*slots[i] != nullptr) (*slots[i])->refs--;
                *slots[i] = c;
                c->refs++;
                any = true;
              }
            }
            return any ? 0 : -FI_EINVAL;
          }
          default:
            return -FI_EINVAL;
        }
      },
      -FI_EOTHER);
}

int ep_control(fid* f, int command, void*) noexcept {
  Ep* ep = as_ep(f);
  if (command != FI_ENABLE) return -FI_ENOSYS;
  if (ep->tx_cq == nullptr && ep->rx_cq == nullptr && ep->send_cntr == nullptr &&
      ep->recv_cntr == nullptr) {
    return -FI_ENOCQ;
  }
  ep->enabled = true;
  return 0;
}

void unbind_ref(Cq* cq) {
  if (cq != nullptr) cq->refs--;
}
void unbind_ref(Cntr* c) {
  if (c != nullptr) c->refs--;
}

int ep_close(fid* f) noexcept {
  return guard(
      [&]() -> int {
        Ep* ep = as_ep(f);
        if (ep->connector.joinable()) ep->connector.join();
        Domain* d = ep->domain;
        std::unique_ptr<host::QueuePair> qp;
        {
          std::lock_guard lock(d->mu);
          d->eps.erase(std::remove(d->eps.begin(), d->eps.end(), ep), d->eps.end());
          // What the QP completed goes to the CQs, readable after the close as verbs keeps it
          // (ofi_rxm reads the CQ after closing on FI_SHUTDOWN; libfabric.md "Closed endpoints").
          d->dispatch(*ep);
          qp = std::move(ep->qp);
        }
        if (qp) qp->set_completion_callback({});
        qp.reset();  // DREQ if still connected, then the QP is released
        (void)d->transport->deregister_memory(ep->inject_mr);
        for (auto& [wr_id, op] : ep->ops) {
          if (op.bounce) finish_bounce(*d->transport, *op.bounce, 0, false);
        }
        if (ep->eq != nullptr) {
          std::lock_guard lock(ep->eq->sources_mu);  // not while fi_eq_read looks at it
          auto& v = ep->eq->eps;
          v.erase(std::remove(v.begin(), v.end(), ep), v.end());
        }
        unbind_ref(ep->tx_cq);
        unbind_ref(ep->rx_cq);
        for (Cntr* c :
             {ep->send_cntr, ep->recv_cntr, ep->read_cntr, ep->write_cntr, ep->remote_write_cntr}) {
          unbind_ref(c);
        }
        delete std::exchange(ep->connreq, nullptr);
        fi_freeinfo(std::exchange(ep->info, nullptr));
        // The fid stays valid until the domain closes, answering -FI_EOPBADSTATE: ofi_rxm calls
        // fi_recv on a msg endpoint it has closed (enosys.cpp close_ops says why).
        close_ops(ep->fid);
        ep->ops.clear();
        std::vector<std::uint8_t>().swap(ep->inject_buf);
        {
          std::lock_guard lock(d->mu);
          d->closed_eps.push_back(ep);
        }
        d->refs--;
        return 0;
      },
      -FI_EOTHER);
}

ssize_t rx_size_left(fid_ep* f) noexcept {
  return guard(
      [&] {
        Ep* ep = as_ep(&f->fid);
        std::lock_guard lock(ep->domain->mu);
        return static_cast<ssize_t>(ep->rx_size - ep->rx_outstanding);
      },
      ssize_t{-FI_EOTHER});
}
ssize_t tx_size_left(fid_ep* f) noexcept {
  return guard(
      [&] {
        Ep* ep = as_ep(&f->fid);
        std::lock_guard lock(ep->domain->mu);
        return static_cast<ssize_t>(ep->tx_size - ep->tx_outstanding);
      },
      ssize_t{-FI_EOTHER});
}

fi_ops g_ep_fid_ops = {
    .size = sizeof(fi_ops),
    .close = ep_close,
    .bind = ep_bind,
    .control = ep_control,
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};
fi_ops_ep g_ep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = ep_cancel,
    .getopt = ep_getopt,
    .setopt = ep_setopt,
    .tx_ctx = FI_NO(fi_ops_ep, tx_ctx),  // scalable endpoints only
    .rx_ctx = FI_NO(fi_ops_ep, rx_ctx),
    .rx_size_left = rx_size_left,
    .tx_size_left = tx_size_left,
};

}  // namespace

int getname_sin(std::uint32_t ip, std::uint16_t port, void* addr, size_t* addrlen) noexcept {
  const sockaddr_in sin = make_sin(ip, port);
  const size_t have = *addrlen;
  *addrlen = sizeof sin;
  if (addr == nullptr || have < sizeof sin) return -FI_ETOOSMALL;
  std::memcpy(addr, &sin, sizeof sin);
  return 0;
}

EqEvent cm_event(std::uint32_t event, fid* f, fi_info* info, const std::vector<std::uint8_t>& d) {
  EqEvent e;
  e.event = event;
  fi_eq_cm_entry entry{};
  entry.fid = f;
  entry.info = info;
  e.data.resize(sizeof entry + d.size());
  std::memcpy(e.data.data(), &entry, sizeof entry);
  if (!d.empty()) std::memcpy(e.data.data() + sizeof entry, d.data(), d.size());
  return e;
}

// FI_OPT_CM_DATA_SIZE (size_t): the private data a connect carries (56, 40 with IRN; the smallest
// of connect, accept and reject: what the verbs provider reports, and what ofi_rxm checks its
// connect data against, prov/rxm/src/rxm_conn.c rxm_init_connect_data). Setting it to at most that
// is accepted and changes nothing.
namespace {
const host::Transport& transport_of(fid_t f) {
  if (f->fclass == FI_CLASS_PEP) return *as_pep(f)->transport;
  return *as_ep(f)->domain->transport;
}
}  // namespace

int ep_getopt(fid_t f, int level, int optname, void* optval, size_t* optlen) noexcept {
  if (level != FI_OPT_ENDPOINT) return -FI_ENOPROTOOPT;
  if (optname != FI_OPT_CM_DATA_SIZE) return -FI_ENOPROTOOPT;
  if (optval == nullptr || optlen == nullptr || *optlen < sizeof(std::size_t)) return -FI_ETOOSMALL;
  *static_cast<std::size_t*>(optval) = connect_data_size(transport_of(f));
  *optlen = sizeof(std::size_t);
  return 0;
}
int ep_setopt(fid_t f, int level, int optname, const void* optval, size_t optlen) noexcept {
  if (level != FI_OPT_ENDPOINT) return -FI_ENOPROTOOPT;
  if (optname != FI_OPT_CM_DATA_SIZE) return -FI_ENOPROTOOPT;
  if (optval == nullptr || optlen != sizeof(std::size_t)) return -FI_EINVAL;
  return *static_cast<const std::size_t*>(optval) <= connect_data_size(transport_of(f))
             ? 0
             : -FI_EINVAL;
}

int ep_open(fid_domain* domain, fi_info* info, fid_ep** out, void* context) noexcept {
  return guard(
      [&]() -> int {
        if (info == nullptr || (info->ep_attr != nullptr && info->ep_attr->type != FI_EP_MSG &&
                                info->ep_attr->type != FI_EP_UNSPEC)) {
          return -FI_EINVAL;
        }
        Domain* d = reinterpret_cast<Domain*>(domain);
        auto ep = std::make_unique<Ep>();
        ep->fid.fid.fclass = FI_CLASS_EP;
        ep->fid.fid.context = context;
        ep->fid.fid.ops = &g_ep_fid_ops;
        ep->fid.ops = &g_ep_ops;
        ep->fid.cm = &g_ep_cm_ops;
        ep->fid.msg = &g_msg_ops;
        ep->fid.rma = &g_rma_ops;
        ep->fid.tagged = &g_no_tagged_ops;
        ep->fid.atomic = &g_no_atomic_ops;
        ep->fid.collective = &g_no_collective_ops;
        ep->domain = d;
        if (info->tx_attr != nullptr && info->tx_attr->size != 0) {
          ep->tx_size = std::min(info->tx_attr->size, kMaxQueueSize);
        }
        if (info->rx_attr != nullptr && info->rx_attr->size != 0) {
          ep->rx_size = std::min(info->rx_attr->size, kMaxQueueSize);
        }
        ep->inject_buf.resize(ep->tx_size * kInjectSize);
        if (d->transport->register_memory(ep->inject_buf.data(), ep->inject_buf.size(),
                                          host::Access::local_write, ep->inject_mr)) {
          return -FI_ENOMEM;
        }
        for (int i = static_cast<int>(ep->tx_size) - 1; i >= 0; --i)
          ep->free_slots.push_back(i);
        if (info->handle != nullptr && info->handle->fclass == FI_CLASS_CONNREQ) {
          // The connection request becomes this endpoint's (fi_accept or fi_close frees it).
          ep->connreq = reinterpret_cast<ConnReq*>(info->handle);
          std::uint32_t ip = 0;
          std::uint16_t port = 0;
          if (parse_sin(info->dest_addr, info->dest_addrlen, ip, port)) {
            ep->peer_ip = ip;
            ep->peer_port = port;
          }
        }
        ep->info = fi_dupinfo(info);
        if (ep->info == nullptr) return -FI_ENOMEM;
        ep->info->handle = nullptr;
        {
          std::lock_guard lock(d->mu);
          d->eps.push_back(ep.get());
        }
        d->refs++;
        *out = &ep.release()->fid;
        return 0;
      },
      -FI_ENOMEM);
}

}  // namespace naa::ofi
