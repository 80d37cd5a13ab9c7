// UdpRoce endpoint, the IB CM active side (PROTOCOL.md 4 and 8; as Linux's cm.c and cma.c for
// an active side): REQ with the rdma_cm private-data header, REP -> RTU and the RC QP, REJ, MRA,
// DREQ/DREP both ways, and the blocking connect() and disconnect(). Retries run from the endpoint
// timers (udp_roce.cpp). Locking: udp_endpoint.hpp.
#include <algorithm>
#include <span>
#include <string>

#include "naa/host/error.hpp"
#include "timer_rule.hpp"
#include "udp_endpoint.hpp"

namespace naa::host::detail {
namespace {

constexpr std::uint8_t kCmResponseTimeout = 20;  // as Linux CMA_CM_RESPONSE_TIMEOUT
constexpr std::uint8_t kMaxCmRetries = 15;       // as Linux CMA_MAX_CM_RETRIES

std::string printable(ByteView bytes) {
  std::string s;
  for (std::uint8_t c : bytes) {
    if (c == 0) break;
    s.push_back(c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '.');
  }
  return s;
}

// IRN is offered when the endpoint's options and the connection's ask for it (the default: both
// do) and the user's private data leaves room for the block (docs/protocol.md "IRN:
// negotiation"): 56 - 16 = 40 bytes. Longer private data gets a REQ without the block, i.e.
// go-back-N, rather than a refused connect.
bool offers_irn(const UdpRoceOptions& opts, const ConnectParams& p) {
  return opts.irn && p.irn && p.private_data.size() <= 56 - protocol::kCapabilityBlockSize;
}

}  // namespace

protocol::CmMad Endpoint::make_req(const QpEntry& e) const {
  const ConnectParams& p = e.params;
  protocol::CmReq req;
  req.local_comm_id = e.local_comm_id;
  req.service_id = protocol::rdma_cm_service_id(p.cm_port);
  // A node GUID in EUI-64 form from our locally administered MAC (02:00:a:b:c:d).
  const protocol::MacAddress mac = protocol::mac_for_ipv4(ip_);
  req.local_ca_guid = (std::uint64_t{mac[0]} << 56) | (std::uint64_t{mac[1]} << 48) |
                      (std::uint64_t{mac[2]} << 40) | (0xFFFEULL << 24) |
                      (std::uint64_t{mac[3]} << 16) | (std::uint64_t{mac[4]} << 8) | mac[5];
  req.local_qpn = e.qpn;
  req.responder_resources = p.responder_resources;
  req.initiator_depth = p.initiator_depth;
  req.remote_cm_response_timeout = kCmResponseTimeout;
  req.transport_service_type = protocol::kCmTransportRc;
  req.end_to_end_flow_control = true;
  req.starting_psn = e.recv_psn;  // the PSN the NAA will send with (PROTOCOL.md 4, PSN rule)
  req.local_cm_response_timeout = kCmResponseTimeout;
  req.retry_count = p.retry_count;
  req.pkey = protocol::kDefaultPkey;
  req.path_mtu = protocol::ib_mtu_enum(p.path_mtu).value_or(5);
  req.rnr_retry_count = p.rnr_retry_count;
  req.max_cm_retries = kMaxCmRetries;
  req.primary_local_lid = 0xFFFF;  // permissive LID: RoCE has no LIDs
  req.primary_remote_lid = 0xFFFF;
  req.primary_local_gid = protocol::ipv4_mapped_gid(ip_);
  req.primary_remote_gid = protocol::ipv4_mapped_gid(p.remote_ip);
  req.primary_hop_limit = 64;
  req.primary_subnet_local = true;
  req.primary_local_ack_timeout = p.local_ack_timeout;
  // rdma_cm private data: the 36-byte IP header, then the user's bytes.
  protocol::RdmaCmIpHeader cma;
  cma.src_port = static_cast<std::uint16_t>(32768 + (e.local_comm_id % 28232));  // ephemeral
  cma.src_ip = ip_;
  cma.dst_ip = p.remote_ip;
  (void)protocol::encode_rdma_cm_ip_header(cma, req.private_data);
  const std::size_t user =
      std::min(p.private_data.size(), req.private_data.size() - protocol::kRdmaCmIpHeaderSize);
  std::size_t user_at = protocol::kRdmaCmIpHeaderSize;
  if (offers_irn(
          opts_,
          p)) {  // docs/protocol.md "IRN: negotiation": the block first, the user's bytes after
    protocol::CapabilityBlock offer;
    offer.bdp_cap = opts_.irn_bdp_cap;
    if (offer.bdp_cap == 0) {  // from the path: link rate x RTT (configured, else measured)
      const auto known = path_rtt_.find(p.remote_ip);
      if (opts_.irn_rtt_us != 0) {
        offer.bdp_cap = bdp_cap_packets(opts_.irn_link_gbps,
                                        std::chrono::microseconds(opts_.irn_rtt_us), p.path_mtu);
      } else if (known != path_rtt_.end()) {
        offer.bdp_cap = bdp_cap_packets(opts_.irn_link_gbps, known->second, p.path_mtu);
      } else {
        offer.bdp_cap = protocol::kIrnDefaultBdpCap;
      }
    }
    // RTO_high is the connection's local ACK timeout; RTO_low the option, or a quarter of
    // RTO_high (at least 2^1).
    offer.rto_high = std::clamp<std::uint8_t>(p.local_ack_timeout, 3, 31);
    offer.rto_low = opts_.irn_rto_low != 0
                        ? std::min<std::uint8_t>(opts_.irn_rto_low, offer.rto_high)
                        : static_cast<std::uint8_t>(offer.rto_high - 2);
    offer.low_threshold = opts_.irn_low_threshold;
    if (opts_.irn_coalesced_acks == IrnCoalescedAcks::on ||
        (opts_.irn_coalesced_acks == IrnCoalescedAcks::automatic && !opts_.clock)) {
      offer.flags |= protocol::kCapabilityCoalescedAcks;
    }
    (void)protocol::encode_capability_block(
        offer, std::span(req.private_data).subspan(protocol::kCapabilityReqOffset));
    user_at += protocol::kCapabilityBlockSize;
  }
  std::copy_n(p.private_data.begin(), std::min(user, req.private_data.size() - user_at),
              req.private_data.begin() + user_at);
  protocol::CmMad mad;
  mad.header.transaction_id = e.tid;
  mad.body = req;
  return mad;
}

void Endpoint::send_mad(std::uint32_t dst_ip, const protocol::CmMad& mad) {
  std::array<std::uint8_t, protocol::kMadSize> bytes{};
  if (!protocol::encode_cm_mad(mad, bytes)) {
    ++stats_.dropped_other;
    return;
  }
  protocol::PacketHeaders h;
  h.bth.opcode = protocol::opcode::kUdSendOnly;
  h.bth.dest_qpn = kCmQpn;
  h.bth.psn = cm_psn_;
  cm_psn_ = protocol::psn_add(cm_psn_, 1);
  h.deth = protocol::Deth{protocol::kCmQKey, 0, kCmQpn};
  send_packet(kCmQpn, dst_ip, h, bytes);
}

void Endpoint::send_rtu(const QpEntry& e) {
  protocol::CmRtu rtu;
  rtu.local_comm_id = e.local_comm_id;
  rtu.remote_comm_id = e.remote_comm_id;
  protocol::CmMad mad;
  mad.header.transaction_id = e.tid;
  mad.body = rtu;
  send_mad(e.params.remote_ip, mad);
}

void Endpoint::send_rej(std::uint32_t dst_ip, std::uint32_t local_comm_id,
                        std::uint32_t remote_comm_id, std::uint64_t tid, std::uint8_t message,
                        std::uint16_t reason) {
  protocol::CmRej rej;
  rej.local_comm_id = local_comm_id;
  rej.remote_comm_id = remote_comm_id;
  rej.message_rejected = message;
  rej.reason = reason;
  protocol::CmMad mad;
  mad.header.transaction_id = tid;
  mad.body = rej;
  send_mad(dst_ip, mad);
}

void Endpoint::fail_connect(QpEntry& e, std::error_code ec, std::string detail) {
  if (e.state != CmState::connecting) return;
  e.state = CmState::closed;
  e.error = ec;
  e.detail = std::move(detail);
  cv_.notify_all();
}

QpEntry* Endpoint::find_by_comm_id(std::uint32_t local_comm_id) {
  for (auto& [qpn, e] : qps_) {
    if (e->local_comm_id == local_comm_id) return e.get();
  }
  return nullptr;
}

void Endpoint::on_cm(std::uint32_t src_ip, ByteView bytes, Clock::time_point now) {
  auto decoded = protocol::decode_cm_mad(bytes);
  if (!decoded) {
    ++stats_.dropped_malformed;
    return;
  }
  const protocol::CmMad& mad = *decoded;
  const std::uint64_t tid = mad.header.transaction_id;
  if (const auto* rep = std::get_if<protocol::CmRep>(&mad.body)) {
    QpEntry* e = find_by_comm_id(rep->remote_comm_id);
    if (e == nullptr || e->params.remote_ip != src_ip) {
      // A REP for an attempt we gave up on: tell the NAA, so it frees the QP (as Linux does).
      send_rej(src_ip, rep->remote_comm_id, rep->local_comm_id, tid, protocol::kCmRejMessageRep,
               protocol::kCmRejInvalidCommId);
      return;
    }
    if (e->state == CmState::connecting) {
      if (rep->local_qpn == 0) {
        fail_connect(*e, Errc::connection_rejected, "REP names QPN 0");
        return;
      }
      e->remote_comm_id = rep->local_comm_id;
      e->remote_qpn = rep->local_qpn;
      RcConfig cfg;
      cfg.qpn = e->qpn;
      cfg.remote_qpn = rep->local_qpn;
      cfg.remote_ip = src_ip;
      cfg.send_psn = rep->starting_psn;  // PROTOCOL.md 4: the REP's PSN is what we start with
      cfg.recv_psn = e->recv_psn;
      cfg.mtu = e->params.path_mtu;
      cfg.local_ack_timeout = e->params.local_ack_timeout;
      cfg.retry_count = e->params.retry_count;
      cfg.rnr_retry = rep->rnr_retry_count;  // the passive side's wish, as Linux applies it
      cfg.max_reads_outstanding = std::min(e->params.initiator_depth, rep->responder_resources);
      apply_timer_rule(opts_, cfg);
      if (e->reqs_sent == 1) {
        cfg.initial_rtt = now - (e->deadline - e->params.timeout);
        path_rtt_[src_ip] = cfg.initial_rtt;
      }
      const auto answer =
          protocol::find_capability_block(rep->private_data, protocol::kCapabilityRepOffset);
      if (offers_irn(opts_, e->params) && answer && answer->irn()) {
        e->rc = std::make_unique<IrnQp>(cfg, *answer, mrs_, *this, rc_counters_);
      } else {
        e->rc = std::make_unique<RcQp>(cfg, mrs_, *this, rc_counters_);
      }
      e->state = CmState::established;
      if (e->params.reply_private_data != nullptr) {
        // The capability block is the library's, not the application's: a host peer's own REP
        // data follows it (docs/protocol.md "IRN: negotiation"), as the passive side strips it
        // from the REQ's (udp_cm_passive.cpp).
        const std::size_t skip =
            offers_irn(opts_, e->params) && answer
                ? protocol::kCapabilityRepOffset + protocol::kCapabilityBlockSize
                : 0;
        e->params.reply_private_data->assign(
            rep->private_data.begin() + static_cast<std::ptrdiff_t>(skip), rep->private_data.end());
      }
      send_rtu(*e);
      cv_.notify_all();
    } else if (e->state == CmState::established && e->remote_comm_id == rep->local_comm_id) {
      send_rtu(*e);  // our RTU was lost: the NAA repeats its REP
    }
    return;
  }
  if (const auto* rej = std::get_if<protocol::CmRej>(&mad.body)) {
    QpEntry* e = find_by_comm_id(rej->remote_comm_id);
    if (e == nullptr || e->state != CmState::connecting) return;
    std::string detail = "connection to " + format_ipv4(src_ip) + " CM port " +
                         std::to_string(e->params.cm_port) + " rejected: REJ reason " +
                         std::to_string(rej->reason) + " (" +
                         std::string(protocol::cm_rej_reason_name(rej->reason)) + ")";
    if (e->params.reply_private_data != nullptr) {
      e->params.reply_private_data->assign(rej->private_data.begin(), rej->private_data.end());
    }
    const std::string why = printable(rej->private_data);
    if (!why.empty()) detail += ": " + why;
    fail_connect(*e,
                 rej->reason == protocol::kCmRejInvalidServiceId ? Errc::connection_refused
                                                                 : Errc::connection_rejected,
                 detail);
    return;
  }
  if (const auto* mra = std::get_if<protocol::CmMra>(&mad.body)) {
    QpEntry* e = find_by_comm_id(mra->remote_comm_id);
    if (e == nullptr || e->state != CmState::connecting) return;
    // The NAA needs more time: hold the REQ retries for its service timeout (IBTA 12.6.6).
    const auto wait =
        std::chrono::nanoseconds(protocol::local_ack_timeout_ns(mra->service_timeout));
    e->next_send =
        std::min(e->deadline, now + std::max<std::chrono::nanoseconds>(wait, e->interval));
    arm_timer();
    return;
  }
  if (const auto* dreq = std::get_if<protocol::CmDreq>(&mad.body)) {
    // Always answer a DREQ, even for a connection we do not know (PROTOCOL.md 4).
    protocol::CmDrep drep;
    drep.local_comm_id = dreq->remote_comm_id;
    drep.remote_comm_id = dreq->local_comm_id;
    protocol::CmMad reply;
    reply.header.transaction_id = tid;
    reply.body = drep;
    send_mad(src_ip, reply);
    QpEntry* e = find_by_comm_id(dreq->remote_comm_id);
    if (e != nullptr && e->state == CmState::established) {
      e->state = CmState::closed;
      e->rc->to_error(make_error_code(Errc::flushed));
      e->error = Errc::disconnected;
      e->detail = "the NAA closed the connection (DREQ)";
      cv_.notify_all();
    }
    return;
  }
  if (const auto* drep = std::get_if<protocol::CmDrep>(&mad.body)) {
    QpEntry* e = find_by_comm_id(drep->remote_comm_id);
    if (e != nullptr && e->state == CmState::disconnecting) {
      e->state = CmState::closed;
      cv_.notify_all();
    }
    return;
  }
  if (const auto* req = std::get_if<protocol::CmReq>(&mad.body)) {
    on_req(src_ip, tid, *req);  // the passive side, udp_cm_passive.cpp
    return;
  }
  // RTU: not expected by an active side; ignore.
}

std::unique_ptr<QueuePair> Endpoint::connect(const ConnectParams& params, std::error_code& ec,
                                             std::string* detail) {
  ec.clear();
  auto fail = [&](Errc e, std::string text) -> std::unique_ptr<QueuePair> {
    ec = e;
    if (detail != nullptr) *detail = std::move(text);
    return nullptr;
  };
  if (!protocol::ib_mtu_enum(params.path_mtu)) {
    return fail(Errc::invalid_argument, "path MTU must be 256, 512, 1024, 2048 or 4096");
  }
  if (params.retry_count > 7 || params.rnr_retry_count > 7 || params.local_ack_timeout > 31) {
    return fail(Errc::invalid_argument, "retry counts are 3-bit, the ACK timeout 5-bit");
  }
  if (params.private_data.size() > 56) {
    return fail(Errc::invalid_argument, "at most 56 bytes of CM private data");
  }
  std::uint32_t qpn = 0;
  {
    std::unique_lock lock(mu_);
    qpn = take_qpn();
    auto e = std::make_unique<QpEntry>();
    e->qpn = qpn;
    e->params = params;
    do {
      e->local_comm_id = comm_id_candidate();
    } while (e->local_comm_id == 0 || find_by_comm_id(e->local_comm_id) != nullptr);
    e->tid = (rng_() & 0xFFFFFFFF00000000ULL) | e->local_comm_id;
    e->recv_psn = static_cast<std::uint32_t>(rng_()) & protocol::kMax24;
    const Clock::time_point now = this->now();
    e->deadline = now + params.timeout;
    e->interval =
        std::clamp<milliseconds>(params.timeout / 8, milliseconds(50), milliseconds(1000));
    e->pending_mad = make_req(*e);
    QpEntry& ref = *e;
    qps_.emplace(qpn, std::move(e));
    send_mad(params.remote_ip, ref.pending_mad);
    ref.reqs_sent = 1;
    ref.next_send = now + ref.interval;
    arm_timer();
  }
  // Wait for REP (-> established), REJ, unreachable or the deadline (timers fail the attempt).
  for (;;) {
    {
      std::unique_lock lock(mu_);
      QpEntry& e = *qps_.at(qpn);
      if (opts_.progress == Progress::automatic) {
        wake_progress_thread();  // the thread, not this caller, drives this wait
        cv_.wait(lock, [&] { return e.state != CmState::connecting; });
      }
      if (e.state == CmState::established) {
        return std::make_unique<UdpQp>(shared_from_this(), qpn, e.remote_qpn, e.params.path_mtu);
      }
      if (e.state != CmState::connecting) {
        ec = e.error;
        if (detail != nullptr) *detail = e.detail;
        qps_.erase(qpn);
        send_sockets_.erase(qpn);
        return nullptr;
      }
    }
    progress(milliseconds(50));
  }
}

std::error_code Endpoint::disconnect(std::uint32_t qpn, milliseconds timeout, bool wait) {
  {
    std::unique_lock lock(mu_);
    auto it = qps_.find(qpn);
    if (it == qps_.end()) return {};
    QpEntry& e = *it->second;
    if (e.state != CmState::established) return {};
    protocol::CmDreq dreq;
    dreq.local_comm_id = e.local_comm_id;
    dreq.remote_comm_id = e.remote_comm_id;
    dreq.remote_qpn = e.remote_qpn;  // must name the NAA's QP, or Linux ignores it
    e.pending_mad.header.transaction_id = (rng_() & 0xFFFFFFFF00000000ULL) | e.local_comm_id;
    e.pending_mad.body = dreq;
    send_mad(e.params.remote_ip, e.pending_mad);
    e.rc->to_error(make_error_code(Errc::flushed));
    e.error = Errc::disconnected;
    e.detail = "disconnected by the host";
    if (!wait || timeout.count() <= 0) {
      e.state = CmState::closed;
      finish_handler(lock);
      return {};
    }
    e.state = CmState::disconnecting;
    const Clock::time_point now = this->now();
    e.deadline = now + timeout;
    // Ten DREQs within the timeout, not three: a DREQ that never arrives leaves the NAA holding the
    // QP and its regions (an idle RC QP has no timer), and at 10% loss three tries all fail once
    // in a thousand disconnects (found by testbench/reliability).
    e.interval = std::max<milliseconds>(timeout / 10, milliseconds(10));
    e.next_send = now + e.interval;
    arm_timer();
  }
  for (;;) {
    {
      std::unique_lock lock(mu_);
      QpEntry& e = *qps_.at(qpn);
      if (opts_.progress == Progress::automatic) {
        wake_progress_thread();  // the thread, not this caller, drives this wait
        cv_.wait(lock, [&] { return e.state != CmState::disconnecting; });
      }
      if (e.state != CmState::disconnecting) return {};
    }
    progress(milliseconds(50));
  }
}

}  // namespace naa::host::detail
