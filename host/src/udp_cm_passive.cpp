// UdpRoce endpoint, the IB CM passive side (PROTOCOL.md 4 and 8, as Linux cm.c/cma.c for a
// listener): REQs for listened rdma_cm ports are held as requests until the application accepts
// (REP, the RC QP at once) or rejects them (REJ 28 with private data). The public face is
// naa/host/udp_listen.hpp; locking as udp_endpoint.hpp says.
#include <algorithm>

#include "irn_qp.hpp"
#include "naa/host/error.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa/protocol/irn.hpp"
#include "timer_rule.hpp"
#include "udp_endpoint.hpp"

namespace naa::host {
namespace detail {

void Endpoint::on_req(std::uint32_t src_ip, std::uint64_t tid, const protocol::CmReq& req) {
  // A retried REQ of a connection we accepted: the REP was lost, send it again (PROTOCOL.md 4).
  for (auto& [qpn, e] : qps_) {
    if (e->passive && e->remote_comm_id == req.local_comm_id && e->params.remote_ip == src_ip) {
      if (e->state == CmState::established) send_mad(src_ip, e->pending_mad);
      return;
    }
  }
  // A retried REQ of a request still held: it is the same request.
  for (auto& [id, r] : requests_) {
    if (r.info.remote_ip == src_ip && r.req.local_comm_id == req.local_comm_id) return;
  }
  const std::optional<std::uint16_t> port = protocol::rdma_cm_port(req.service_id);
  if (!port || std::find(listening_.begin(), listening_.end(), *port) == listening_.end()) {
    // Nobody listens on that service ID (PROTOCOL.md 4, REJ reason 8).
    send_rej(src_ip, 0, req.local_comm_id, tid, protocol::kCmRejMessageReq,
             protocol::kCmRejInvalidServiceId);
    return;
  }
  if (req.transport_service_type != protocol::kCmTransportRc) {
    send_rej(src_ip, 0, req.local_comm_id, tid, protocol::kCmRejMessageReq,
             protocol::kCmRejInvalidTransportType);
    return;
  }
  if (!protocol::ib_mtu_bytes(req.path_mtu)) {
    send_rej(src_ip, 0, req.local_comm_id, tid, protocol::kCmRejMessageReq,
             protocol::kCmRejInvalidMtu);
    return;
  }
  HeldRequest r;
  r.info.id = next_request_id_++;
  r.info.remote_ip = src_ip;
  r.info.cm_port = *port;
  r.info.remote_qpn = req.local_qpn;
  r.info.path_mtu = *protocol::ib_mtu_bytes(req.path_mtu);
  if (auto cma = protocol::decode_rdma_cm_ip_header(req.private_data)) {
    r.info.remote_port = cma->src_port;
  }
  const ByteView user = protocol::rdma_cm_user_data(req);
  r.info.private_data.assign(user.begin(), user.end());
  // An active side that offered IRN put its capability block first (docs/protocol.md "IRN:
  // negotiation"). This passive side runs go-back-N only: its REP carries no block, and the
  // application sees the user's bytes as if no block had been sent (the same 56 bytes).
  if (protocol::find_capability_block(req.private_data, protocol::kCapabilityReqOffset)) {
    auto& pd = r.info.private_data;
    pd.erase(pd.begin(), pd.begin() + protocol::kCapabilityBlockSize);
    pd.resize(user.size(), 0);
  }
  r.req = req;
  r.tid = tid;
  requests_.emplace(r.info.id, std::move(r));
  cv_.notify_all();
}

std::error_code Endpoint::listen(std::uint16_t cm_port, bool on) {
  std::lock_guard lock(mu_);
  auto it = std::find(listening_.begin(), listening_.end(), cm_port);
  if (on) {
    if (it != listening_.end()) return Errc::address_in_use;
    // A shared address: the port is the address's, and the group's program steers its REQs here.
    if (share_) {
      if (auto ec = share_->listen(cm_port, true)) return ec;
    }
    listening_.push_back(cm_port);
    return {};
  }
  if (it == listening_.end()) return Errc::invalid_argument;
  listening_.erase(it);
  if (share_) (void)share_->listen(cm_port, false);
  // Requests still held for the port are refused as if nobody had listened.
  for (auto r = requests_.begin(); r != requests_.end();) {
    if (r->second.info.cm_port == cm_port) {
      send_rej(r->second.info.remote_ip, 0, r->second.req.local_comm_id, r->second.tid,
               protocol::kCmRejMessageReq, protocol::kCmRejInvalidServiceId);
      r = requests_.erase(r);
    } else {
      ++r;
    }
  }
  return {};
}

std::optional<ConnectRequest> Endpoint::next_request(std::chrono::nanoseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      auto find = [&]() -> HeldRequest* {
        for (auto& [id, r] : requests_) {
          if (!r.handed_out) return &r;
        }
        return nullptr;
      };
      if (opts_.progress == Progress::automatic) {
        wake_progress_thread();  // the thread, not this caller, drives this wait
        cv_.wait_until(lock, deadline, [&] { return find() != nullptr || stopping_; });
      }
      if (HeldRequest* r = find()) {
        r->handed_out = true;
        return r->info;
      }
      if (Clock::now() >= deadline || stopping_) return std::nullopt;
    }
    progress(std::min<std::chrono::nanoseconds>(deadline - Clock::now(), milliseconds(50)));
  }
}

std::unique_ptr<QueuePair> Endpoint::accept(std::uint64_t id, const AcceptParams& params,
                                            std::error_code& ec, std::string* detail) {
  ec.clear();
  std::unique_lock lock(mu_);
  auto it = requests_.find(id);
  if (it == requests_.end() || params.private_data.size() > 196 || params.rnr_retry_count > 7) {
    ec = Errc::invalid_argument;
    if (detail != nullptr) {
      *detail = it == requests_.end() ? "no such connection request"
                                      : "REP private data is at most 196 bytes";
    }
    return nullptr;
  }
  const HeldRequest r = std::move(it->second);
  requests_.erase(it);
  const protocol::CmReq& req = r.req;
  const std::uint32_t qpn = take_qpn();
  auto e = std::make_unique<QpEntry>();
  e->qpn = qpn;
  e->passive = true;
  e->params.remote_ip = r.info.remote_ip;
  e->params.cm_port = r.info.cm_port;
  e->params.path_mtu = r.info.path_mtu;
  // The REQ's ACK timeout and retry counts are adopted (PROTOCOL.md 4).
  e->params.local_ack_timeout = req.primary_local_ack_timeout;
  e->params.retry_count = req.retry_count;
  e->params.rnr_retry_count = req.rnr_retry_count;
  e->params.responder_resources = std::min(req.initiator_depth, params.responder_resources);
  e->params.initiator_depth = std::min(req.responder_resources, params.initiator_depth);
  do {
    e->local_comm_id = comm_id_candidate();
  } while (e->local_comm_id == 0 || find_by_comm_id(e->local_comm_id) != nullptr);
  e->remote_comm_id = req.local_comm_id;
  e->remote_qpn = req.local_qpn;
  e->tid = r.tid;
  e->recv_psn = static_cast<std::uint32_t>(rng_()) & protocol::kMax24;
  RcConfig cfg;
  cfg.qpn = qpn;
  cfg.remote_qpn = req.local_qpn;
  cfg.remote_ip = r.info.remote_ip;
  cfg.send_psn = req.starting_psn;  // PROTOCOL.md 4, PSN rule: the REQ's PSN is ours to send
  cfg.recv_psn = e->recv_psn;       // and the REP's is what the active side sends with
  cfg.mtu = r.info.path_mtu;
  cfg.local_ack_timeout = req.primary_local_ack_timeout;
  cfg.retry_count = req.retry_count;
  cfg.rnr_retry = req.rnr_retry_count;
  cfg.max_reads_outstanding = e->params.initiator_depth;
  // IRN (docs/protocol.md "IRN: negotiation"), as the NAA's CM agent answers: only a REQ with our
  // capability block and the IRN flag, and only with UdpRoceOptions::irn; we grant
  // min(offered, irn_bdp_cap) and adopt the active side's timeouts. Coalesced ACKs, when offered,
  // by the rule the active side offers them with (irn_coalesced_acks on, or automatic on the wall
  // clock): they cut an ofi_rxm pingpong's ACKs by 4.4x. (Until the provider kept closed
  // endpoints valid, granting them by default made ofi_rxm's teardown corrupt the heap in 2 of
  // ~90 runs: docs/host/libfabric.md "Closed endpoints".) Anything else: go-back-N and the REP
  // as before, byte for byte.
  const auto offer =
      protocol::find_capability_block(req.private_data, protocol::kCapabilityReqOffset);
  const bool irn = opts_.irn && offer && offer->irn();
  protocol::CapabilityBlock caps;
  apply_timer_rule(opts_, cfg);
  if (irn) {
    caps = *offer;
    caps.version = protocol::kCapabilityVersion;
    caps.flags = protocol::kCapabilityIrn;
    const bool coalesce = opts_.irn_coalesced_acks == IrnCoalescedAcks::on ||
                          (opts_.irn_coalesced_acks == IrnCoalescedAcks::automatic && !opts_.clock);
    if (offer->coalesced_acks() && coalesce) {
      caps.flags |= protocol::kCapabilityCoalescedAcks;
    }
    caps.bdp_cap = std::min(offer->bdp_cap, opts_.irn_bdp_cap);
    e->rc = std::make_unique<IrnQp>(cfg, caps, mrs_, *this, rc_counters_);
  } else {
    e->rc = std::make_unique<RcQp>(cfg, mrs_, *this, rc_counters_);
  }
  e->state = CmState::established;
  protocol::CmRep rep;
  rep.local_comm_id = e->local_comm_id;
  rep.remote_comm_id = req.local_comm_id;
  rep.local_qpn = qpn;
  rep.starting_psn = e->recv_psn;
  rep.responder_resources = e->params.responder_resources;
  rep.initiator_depth = e->params.initiator_depth;
  rep.target_ack_delay = 0;
  rep.end_to_end_flow_control = true;
  rep.rnr_retry_count = params.rnr_retry_count;
  const protocol::MacAddress mac = protocol::mac_for_ipv4(ip_);
  rep.local_ca_guid = (std::uint64_t{mac[0]} << 56) | (std::uint64_t{mac[1]} << 48) |
                      (std::uint64_t{mac[2]} << 40) | (0xFFFEULL << 24) |
                      (std::uint64_t{mac[3]} << 16) | (std::uint64_t{mac[4]} << 8) | mac[5];
  std::size_t user_at = 0;
  if (irn) {
    (void)protocol::encode_capability_block(
        caps, std::span(rep.private_data).subspan(protocol::kCapabilityRepOffset));
    user_at = protocol::kCapabilityRepOffset + protocol::kCapabilityBlockSize;
  }
  std::copy_n(params.private_data.begin(),
              std::min(params.private_data.size(), rep.private_data.size() - user_at),
              rep.private_data.begin() + static_cast<std::ptrdiff_t>(user_at));
  e->pending_mad.header.transaction_id = r.tid;
  e->pending_mad.body = rep;
  QpEntry& ref = *e;
  qps_.emplace(qpn, std::move(e));
  send_mad(ref.params.remote_ip, ref.pending_mad);
  auto qp = std::make_unique<UdpQp>(shared_from_this(), qpn, ref.remote_qpn, ref.params.path_mtu);
  finish_handler(lock);
  return qp;
}

std::error_code Endpoint::reject(std::uint64_t id, std::span<const std::uint8_t> private_data) {
  std::lock_guard lock(mu_);
  auto it = requests_.find(id);
  if (it == requests_.end() || private_data.size() > 148) return Errc::invalid_argument;
  protocol::CmRej rej;
  rej.local_comm_id = 0;
  rej.remote_comm_id = it->second.req.local_comm_id;
  rej.message_rejected = protocol::kCmRejMessageReq;
  rej.reason = protocol::kCmRejConsumerDefined;  // the private data says why (PROTOCOL.md 4)
  std::copy(private_data.begin(), private_data.end(), rej.private_data.begin());
  protocol::CmMad mad;
  mad.header.transaction_id = it->second.tid;
  mad.body = rej;
  send_mad(it->second.info.remote_ip, mad);
  requests_.erase(it);
  return {};
}

}  // namespace detail

namespace {
detail::Endpoint* as_udp(Transport& transport) {
  return dynamic_cast<detail::Endpoint*>(&transport);
}
}  // namespace

std::error_code udp_roce_listen(Transport& transport, std::uint16_t cm_port) {
  auto* ep = as_udp(transport);
  return ep == nullptr ? make_error_code(Errc::invalid_argument) : ep->listen(cm_port, true);
}

std::error_code udp_roce_unlisten(Transport& transport, std::uint16_t cm_port) {
  auto* ep = as_udp(transport);
  return ep == nullptr ? make_error_code(Errc::invalid_argument) : ep->listen(cm_port, false);
}

std::optional<ConnectRequest> udp_roce_next_request(Transport& transport,
                                                    std::chrono::nanoseconds timeout) {
  auto* ep = as_udp(transport);
  if (ep == nullptr) return std::nullopt;
  return ep->next_request(timeout);
}

std::unique_ptr<QueuePair> udp_roce_accept(Transport& transport, std::uint64_t id,
                                           const AcceptParams& params, std::error_code& ec,
                                           std::string* detail) {
  auto* ep = as_udp(transport);
  if (ep == nullptr) {
    ec = Errc::invalid_argument;
    return nullptr;
  }
  return ep->accept(id, params, ec, detail);
}

std::error_code udp_roce_reject(Transport& transport, std::uint64_t id,
                                std::span<const std::uint8_t> private_data) {
  auto* ep = as_udp(transport);
  return ep == nullptr ? make_error_code(Errc::invalid_argument) : ep->reject(id, private_data);
}

}  // namespace naa::host
