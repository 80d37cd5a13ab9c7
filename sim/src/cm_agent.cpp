#include "naa/sim/cm_agent.hpp"

#include <span>

#include <algorithm>
#include <cstring>

#include "naa/protocol/packet.hpp"

namespace naa::sim {
namespace {

using protocol::CmMad;
constexpr std::size_t kUdPayloadOffset = protocol::kBthSize + protocol::kDethSize;

std::uint32_t random24(SecretSource& rng) {
  return static_cast<std::uint32_t>(rng()) & 0xFFFFFFU;
}

}  // namespace

CmAgent::CmAgent(sc_core::sc_module_name name, ModelContext& ctx)
    : sc_module(name),
      ctx_(ctx),
      in_(64),
      expired_(256),
      errored_(256),
      expiry_(ctx.qps.size(), sc_core::sc_time(0.1, sc_core::SC_SEC)),
      meter_(ctx.cfg) {
  SC_THREAD(thread);
}

void CmAgent::on_peer_timer(std::uint32_t cookie) {
  (void)expired_.try_put(cookie);
}

void CmAgent::on_qp_error(Qp& qp) {
  // At most one entry per QP generation (a QP enters error once), so 256 places never fill.
  (void)errored_.try_put(QpRef{static_cast<std::uint32_t>(&qp - ctx_.qps.data()), qp.generation});
}

std::uint32_t CmAgent::connections() const {
  std::uint32_t n = 0;
  for (const Qp& qp : ctx_.qps)
    n += qp.state != QpState::free ? 1 : 0;
  return n;
}

void CmAgent::thread() {
  for (;;) {
    if (in_.empty() && expired_.empty() && errored_.empty()) {
      sc_core::wait(in_.data_event() | expired_.data_event() | errored_.data_event());
      continue;
    }
    if (!errored_.empty()) {
      const QpRef r = errored_.get();
      Qp& qp = ctx_.qps.at(r.index);
      if (qp.generation == r.generation && qp.state == QpState::error) disconnect_errored(qp);
      continue;
    }
    if (!expired_.empty()) {
      const std::uint32_t idx = expired_.get();
      Qp& qp = ctx_.qps.at(idx);
      if (qp.state == QpState::rtr) {
        ++expired_count_;
        release(qp, "half-open connection expired (no RTU)");
      } else if (qp.state == QpState::error) {
        ++drep_timeouts_;
        release(qp, "no DREP after the QP error");
      }
      continue;
    }
    Packet* p = in_.get();
    meter_.spend(SimConfig::stage_cycles(protocol::kMadSize, ctx_.cfg.width, ctx_.cfg.cm_latency));
    handle(*p);
    ctx_.pool.put(p);
  }
}

void CmAgent::handle(const Packet& p) {
  // RxPipe checked: UD SEND ONLY to QP 1 with the GSI Q_Key and a valid ICRC.
  const std::size_t payload_len =
      p.size - kUdPayloadOffset - protocol::kIcrcSize - ((p.data[1] >> 4) & 3U);
  const auto mad = protocol::decode_cm_mad({p.data.data() + kUdPayloadOffset, payload_len});
  if (!mad) {
    ++decode_errors_;
    protocol_errors->count_protocol_error(mad.error());
    return;
  }
  const auto& h = mad->header;
  if (const auto* req = std::get_if<protocol::CmReq>(&mad->body)) {
    on_req(p, h, *req);
  } else if (const auto* rtu = std::get_if<protocol::CmRtu>(&mad->body)) {
    ++rtus_;
    for (Qp& qp : ctx_.qps) {
      if (qp.state == QpState::rtr && qp.local_comm_id == rtu->remote_comm_id &&
          qp.peer_ip == p.peer_ip) {
        qp.state = QpState::rts;
        ctx_.timers.cancel(*this, static_cast<std::uint32_t>(&qp - ctx_.qps.data()));
        transport->on_established(qp);
      }
    }
  } else if (const auto* dreq = std::get_if<protocol::CmDreq>(&mad->body)) {
    ++dreqs_;
    for (Qp& qp : ctx_.qps) {
      // A connection handed over to another NAA (docs/protocol.md "Peers") still ends with a
      // DREQ from the host that opened it.
      const std::uint32_t cm_peer = qp.handed_over ? qp.cm_peer_ip : qp.peer_ip;
      if (qp.state != QpState::free && qp.local_comm_id == dreq->remote_comm_id &&
          cm_peer == p.peer_ip && qp.qpn == dreq->remote_qpn) {
        release(qp, "DREQ");
      }
    }
    // Always answer a DREQ, even for an unknown connection (PROTOCOL.md 4).
    CmMad out{h, protocol::CmDrep{}};
    auto& drep = std::get<protocol::CmDrep>(out.body);
    drep.local_comm_id = dreq->remote_comm_id;
    drep.remote_comm_id = dreq->local_comm_id;
    std::array<std::uint8_t, protocol::kMadSize> bytes{};
    if (protocol::encode_cm_mad(out, bytes)) {
      ++dreps_;
      send_mad(p.peer_ip, bytes);
    }
  } else if (const auto* rej = std::get_if<protocol::CmRej>(&mad->body)) {
    ++rejs_received_;
    for (Qp& qp : ctx_.qps) {
      if (qp.state != QpState::free && qp.local_comm_id == rej->remote_comm_id &&
          qp.peer_ip == p.peer_ip) {
        release(qp, "REJ from peer");
      }
    }
  } else if (const auto* drep = std::get_if<protocol::CmDrep>(&mad->body)) {
    ++dreps_received_;  // the answer to a DREQ we sent after a QP error
    for (Qp& qp : ctx_.qps) {
      if (qp.state == QpState::error && qp.local_comm_id == drep->remote_comm_id &&
          qp.peer_ip == p.peer_ip) {
        release(qp, "DREP after the QP error");
      }
    }
  } else {
    ++ignored_;  // MRA, REP: the passive side never expects them
  }
}

void CmAgent::on_req(const Packet& p, const protocol::MadHeader& h, const protocol::CmReq& req) {
  ++reqs_;
  // A duplicate REQ (the peer's CM retried) gets the same REP.
  for (Qp& qp : ctx_.qps) {
    if (qp.state != QpState::free && qp.remote_comm_id == req.local_comm_id &&
        qp.peer_ip == p.peer_ip && qp.peer_qpn == req.local_qpn) {
      ++dup_reqs_;
      send_mad(p.peer_ip, qp.rep_mad);
      return;
    }
  }
  if (req.service_id != protocol::rdma_cm_service_id(ctx_.cfg.cm_port)) {
    send_rej(p.peer_ip, h, req.local_comm_id, protocol::kCmRejInvalidServiceId, "");
    return;
  }
  if (req.transport_service_type != protocol::kCmTransportRc) {
    send_rej(p.peer_ip, h, req.local_comm_id, protocol::kCmRejInvalidTransportType, "");
    return;
  }
  const auto mtu = protocol::ib_mtu_bytes(req.path_mtu);
  if (!mtu || *mtu > ctx_.cfg.mtu_max) {
    send_rej(p.peer_ip, h, req.local_comm_id, protocol::kCmRejInvalidMtu, "");
    return;
  }
  const char* refusal = nullptr;
  Qp* slot = admit(p.peer_ip, &refusal);
  if (slot == nullptr) {
    send_rej(p.peer_ip, h, req.local_comm_id, protocol::kCmRejConsumerDefined, refusal);
    return;
  }
  Qp& qp = *slot;
  const auto idx = static_cast<std::uint32_t>(slot - ctx_.qps.data());
  qp.claim(idx);
  qp.state = QpState::rtr;
  qp.half_open_seq = ++half_open_seq_;
  qp.peer_ip = p.peer_ip;
  qp.peer_qpn = req.local_qpn;
  qp.mtu = *mtu;
  qp.ack_timeout = req.primary_local_ack_timeout;
  qp.retry_count = req.retry_count;
  qp.rnr_retry = req.rnr_retry_count;
  // The peer asks to issue req.initiator_depth READs at us; we grant min(asked, own resources).
  const auto responder_resources =
      static_cast<std::uint8_t>(std::min(req.initiator_depth, ctx_.cfg.responder_resources));
  qp.reads_allowed = responder_resources >= 1;
  qp.remote_comm_id = req.local_comm_id;
  qp.local_comm_id = static_cast<std::uint32_t>(ctx_.rng());
  const std::uint32_t host_start_psn = random24(ctx_.rng);
  negotiate_irn(qp, req);
  // PROTOCOL.md 4: the REQ's starting PSN is ours to send with; the REP's is the host's.
  transport->init_qp(qp, req.starting_psn, host_start_psn);

  CmMad out{h, protocol::CmRep{}};
  auto& rep = std::get<protocol::CmRep>(out.body);
  rep.local_comm_id = qp.local_comm_id;
  rep.remote_comm_id = req.local_comm_id;
  rep.local_qpn = qp.qpn;
  rep.starting_psn = host_start_psn;
  rep.responder_resources = responder_resources;
  rep.initiator_depth = std::min(req.responder_resources, ctx_.cfg.responder_resources);
  rep.target_ack_delay = 0;
  rep.failover_accepted = 0;
  rep.end_to_end_flow_control = req.end_to_end_flow_control;
  rep.rnr_retry_count = 7;
  rep.srq = false;
  rep.local_ca_guid = 0x0200000000000000ULL | addresses->local_ip();
  if (qp.irn) {  // docs/protocol.md "IRN: negotiation": the answer, at REP private data offset 0
    (void)protocol::encode_capability_block(
        qp.irn_caps, std::span(rep.private_data).subspan(protocol::kCapabilityRepOffset));
  }
  qp.rep_mad.fill(0);
  if (!protocol::encode_cm_mad(out, qp.rep_mad)) model_fatal(name(), "cannot encode REP");
  ++reps_;
  half_open_peak_ = std::max<std::uint64_t>(half_open_peak_, half_open());
  send_mad(p.peer_ip, qp.rep_mad);

  // Half-open expiry: the peer's CM gives up after max_cm_retries REQs of its response timeout
  // (4.096 us x 2^timeout each); keep the QP a little longer, bounded to [100 ms, 60 s].
  const double per_try = 4.096e-6 * static_cast<double>(1ULL << std::min<unsigned>(
                                                            req.remote_cm_response_timeout, 31));
  double expiry = per_try * (req.max_cm_retries + 1.0) * 2.0;
  expiry = std::clamp(expiry, 0.1, 60.0);
  expiry_.at(idx) = sc_core::sc_time(expiry, sc_core::SC_SEC);
  ctx_.timers.arm(*this, idx, expiry_[idx]);
}

// IRN (docs/protocol.md "IRN: negotiation"): only a REQ that carries our capability block with the
// IRN flag, and only with --irn on. Anything else (every standard peer) gets today's REP, byte for
// byte, and go-back-N. We grant min(offered, --irn-bdp-cap) and adopt the host's timeouts.
void CmAgent::negotiate_irn(Qp& qp, const protocol::CmReq& req) {
  const auto offer =
      protocol::find_capability_block(req.private_data, protocol::kCapabilityReqOffset);
  qp.irn = ctx_.cfg.irn && offer && offer->irn();
  if (!qp.irn) return;
  ++irn_accepted_;
  qp.irn_caps = *offer;
  qp.irn_caps.version = protocol::kCapabilityVersion;
  // IRN, and coalesced ACKs if offered (docs/protocol.md 8.2); other bits are not ours.
  qp.irn_caps.flags =
      protocol::kCapabilityIrn | (offer->flags & protocol::kCapabilityCoalescedAcks);
  qp.irn_caps.bdp_cap = std::min(offer->bdp_cap, ctx_.cfg.irn_bdp_cap);
}

std::uint32_t CmAgent::half_open() const {
  std::uint32_t n = 0;
  for (const Qp& qp : ctx_.qps)
    n += qp.state == QpState::rtr ? 1 : 0;
  return n;
}

// Admission of a new connection under a flood of REQs that never complete (docs/sim/cm_agent.md
// "Half-open connections under a REQ flood"), as SYN-flood defences do for TCP: one address may
// hold at most half of the QPs half-open, so a flood from one source leaves QPs for everyone
// else; and when every QP is taken, the oldest half-open connection of another address makes
// room, so a flood from many sources delays a real client by at most a round trip's worth of
// REQs instead of refusing it for a whole expiry period. Only established connections are never
// displaced: with every QP established a REQ gets REJ 28 "out of QPs".
Qp* CmAgent::admit(std::uint32_t peer_ip, const char** refusal) {
  const std::uint32_t per_peer_limit =
      std::max<std::uint32_t>(1, static_cast<std::uint32_t>(ctx_.qps.size()) / 2);
  std::uint32_t own_half_open = 0;
  Qp* free_slot = nullptr;
  Qp* oldest_other = nullptr;
  for (Qp& qp : ctx_.qps) {
    if (qp.state == QpState::free) {
      if (free_slot == nullptr) free_slot = &qp;
    } else if (qp.state == QpState::rtr) {
      if (qp.peer_ip == peer_ip) {
        ++own_half_open;
      } else if (oldest_other == nullptr || qp.half_open_seq < oldest_other->half_open_seq) {
        oldest_other = &qp;
      }
    }
  }
  if (own_half_open >= per_peer_limit) {
    ++half_open_refused_;
    *refusal = "too many half-open connections from this address";
    return nullptr;
  }
  if (free_slot != nullptr) return free_slot;
  if (oldest_other == nullptr) {
    *refusal = "out of QPs";
    return nullptr;
  }
  ++half_open_evicted_;
  release(*oldest_other, "half-open connection evicted for a new REQ (QPs exhausted)");
  return oldest_other;
}

void CmAgent::disconnect_errored(Qp& qp) {
  ++error_disconnects_;
  if (ctx_.log.enabled(LogLevel::info)) {
    ctx_.log.write(LogLevel::info, name(),
                   "QP " + std::to_string(qp.qpn) + " in error: regions released, DREQ sent");
  }
  // The regions and MR entries go now: the QP can never use them again, and a peer that is gone
  // (the usual cause of an exhausted retry count) would otherwise hold them for ever.
  regions->release(qp);
  calls->release(qp);
  CmMad out{protocol::MadHeader{}, protocol::CmDreq{}};
  out.header.transaction_id = (std::uint64_t{qp.local_comm_id} << 32) | (dreqs_sent_ & 0xFFFFFFFFU);
  auto& dreq = std::get<protocol::CmDreq>(out.body);
  dreq.local_comm_id = qp.local_comm_id;
  dreq.remote_comm_id = qp.remote_comm_id;
  dreq.remote_qpn = qp.peer_qpn;  // must name the receiver's QP, or Linux ignores it
  std::array<std::uint8_t, protocol::kMadSize> bytes{};
  if (!protocol::encode_cm_mad(out, bytes)) model_fatal(name(), "cannot encode DREQ");
  ++dreqs_sent_;
  send_mad(qp.peer_ip, bytes);
  // Free the QP on the DREP, or after the same time a half-open connection gets.
  const auto idx = static_cast<std::uint32_t>(&qp - ctx_.qps.data());
  ctx_.timers.arm(*this, idx, expiry_.at(idx));
}

void CmAgent::established_by_data(Qp& qp) {
  ++established_by_data_;
  qp.state = QpState::rts;
  ctx_.timers.cancel(*this, static_cast<std::uint32_t>(&qp - ctx_.qps.data()));
  transport->on_established(qp);
}

void CmAgent::send_rej(std::uint32_t peer_ip, const protocol::MadHeader& h,
                       std::uint32_t remote_comm_id, std::uint16_t reason, std::string_view why) {
  CmMad out{h, protocol::CmRej{}};
  auto& rej = std::get<protocol::CmRej>(out.body);
  rej.local_comm_id = 0;
  rej.remote_comm_id = remote_comm_id;
  rej.message_rejected = protocol::kCmRejMessageReq;
  rej.reason = reason;
  std::memcpy(rej.private_data.data(), why.data(), std::min(why.size(), rej.private_data.size()));
  std::array<std::uint8_t, protocol::kMadSize> bytes{};
  if (!protocol::encode_cm_mad(out, bytes)) return;
  ++rejs_sent_;
  ++rej_by_reason_[reason & 31U];
  send_mad(peer_ip, bytes);
}

void CmAgent::send_mad(std::uint32_t peer_ip,
                       const std::array<std::uint8_t, protocol::kMadSize>& mad) {
  Packet* p = ctx_.pool.get();
  protocol::PacketHeaders h;
  h.bth.opcode = protocol::opcode::kUdSendOnly;
  h.bth.dest_qpn = protocol::kCmQpn;
  h.bth.psn = ud_psn_;
  ud_psn_ = protocol::psn_add(ud_psn_, 1);
  h.deth = protocol::Deth{protocol::kCmQKey, 0, protocol::kCmQpn};
  const auto n = protocol::encode_packet(h, mad, {p->data.data(), p->data.size()});
  if (!n) {
    ctx_.pool.put(p);
    model_fatal(name(), "cannot encode a CM datagram");
  }
  p->size = *n;
  p->peer_ip = peer_ip;
  p->src_qpn = protocol::kCmQpn;
  to_tx->put(p);
}

void CmAgent::release(Qp& qp, const char* why) {
  if (ctx_.log.enabled(LogLevel::info)) {
    ctx_.log.write(LogLevel::info, name(), "release QP " + std::to_string(qp.qpn) + ": " + why);
  }
  ctx_.timers.cancel(*this, static_cast<std::uint32_t>(&qp - ctx_.qps.data()));
  regions->release(qp);
  calls->release(qp);
  transport->release_qp(qp);
  qp.state = QpState::free;
  ++released_;
}

void CmAgent::report(std::ostream& os) const {
  os << "cm.cycles=" << meter_.busy_cycles() << '\n'
     << "cm.connections=" << connections() << '\n'
     << "cm.req=" << reqs_ << '\n'
     << "cm.rep=" << reps_ << '\n'
     << "cm.irn_accepted=" << irn_accepted_ << '\n'
     << "cm.dup_req=" << dup_reqs_ << '\n'
     << "cm.rtu=" << rtus_ << '\n'
     << "cm.established_by_data=" << established_by_data_ << '\n'
     << "cm.dreq=" << dreqs_ << '\n'
     << "cm.drep=" << dreps_ << '\n'
     << "cm.rej_sent=" << rejs_sent_ << '\n'
     << "cm.rej_received=" << rejs_received_ << '\n'
     << "cm.half_open=" << half_open() << '\n'
     << "cm.half_open_peak=" << half_open_peak_ << '\n'
     << "cm.half_open_expired=" << expired_count_ << '\n'
     << "cm.half_open_evicted=" << half_open_evicted_ << '\n'
     << "cm.half_open_refused=" << half_open_refused_ << '\n'
     << "cm.error_disconnects=" << error_disconnects_ << '\n'
     << "cm.dreq_sent=" << dreqs_sent_ << '\n'
     << "cm.drep_received=" << dreps_received_ << '\n'
     << "cm.drep_timeouts=" << drep_timeouts_ << '\n'
     << "cm.released=" << released_ << '\n'
     << "cm.ignored=" << ignored_ << '\n'
     << "cm.decode_errors=" << decode_errors_ << '\n';
  for (std::size_t r = 0; r < rej_by_reason_.size(); ++r) {
    if (rej_by_reason_[r] != 0)
      os << "cm.rej_sent.reason_" << r << '=' << rej_by_reason_[r] << '\n';
  }
}

}  // namespace naa::sim
