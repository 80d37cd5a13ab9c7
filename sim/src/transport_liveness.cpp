// Transport: idle liveness (docs/sim/transport.md "Idle liveness"). A connected QP that has heard
// nothing from its peer for SimConfig::idle_timeout_ms probes it with a zero-length RDMA WRITE;
// a peer that is gone runs the probe's retries out and the QP goes to error like any other.
#include "naa/sim/transport.hpp"

namespace naa::sim {

void Transport::on_established(Qp& qp) {
  qp.last_heard = sim_now();
  if (ctx_.cfg.idle_timeout_ms != 0) {
    arm_idle(qp, sc_core::sc_time(static_cast<double>(ctx_.cfg.idle_timeout_ms), sc_core::SC_MS));
  }
}

void Transport::arm_idle(Qp& qp, sc_core::sc_time after) {
  ctx_.timers.arm(*this, qp_index(qp) << kCookieShift | kCookieIdle, after);
}

// The idle timer is armed once per idle period, not per packet (arming is not free, and the
// receive path runs at line rate): when it fires, the time since the last packet from the peer
// decides between a probe and a new timer for the rest of the period.
void Transport::on_idle_timer(Qp& qp) {
  if (qp.handed_over) return;  // its peer QP has no responder state for us (transport_peer.cpp)
  const sc_core::sc_time timeout(static_cast<double>(ctx_.cfg.idle_timeout_ms), sc_core::SC_MS);
  const sc_core::sc_time idle = sim_now() - qp.last_heard;
  if (idle < timeout) {
    arm_idle(qp, timeout - idle);
    return;
  }
  arm_idle(qp, timeout);
  // Something unacknowledged is outstanding: the retransmit timer and retry count already ask
  // the peer (and put the QP in error if it is gone).
  if (qp.psn_una != qp.psn_tail) return;
  // A zero-length RDMA WRITE ONLY with AckReq: legal towards any RC responder whatever its
  // memory registrations (IBTA: no R_Key check at DMA length 0), executed as a no-op and ACKed.
  // It takes the QP's next PSN and the normal retransmit timer and retry count.
  SendWqe probe;
  probe.op = SendWqe::Op::write;
  probe.probe = true;
  ++idle_probes_;
  if (ctx_.log.enabled(LogLevel::info)) {
    ctx_.log.write(LogLevel::info, name(),
                   "QP " + std::to_string(qp.qpn) + " idle: liveness probe (zero-length WRITE)");
  }
  post_send(qp, std::move(probe));
}

void Transport::retry_exhausted(Qp& qp, const char* why) {
  ++completion_errors_;
  // The oldest unacknowledged message was our liveness probe: the peer is gone.
  if (!qp.sq.empty() && qp.sq.front().probe) ++idle_releases_;
  qp_error(qp, why);
}

}  // namespace naa::sim
