// Transport, peers (docs/protocol.md "Peers"): the requester QP an NAA opens for a peer without a
// CM exchange (MRSP 0x06), and the hand-over of a connection's requester end to such a QP of
// another NAA (0x08), applied once our 0x09 answer is acknowledged, so that the host's ACK of it
// still reaches us from the host. From then on the connection's peer is the other NAA's QP and
// its responder expects that QP's PSNs; it sends no idle probe (that QP has no responder state
// for us), and its calls are answered to nobody (HandlerEngine).
#include "naa/sim/transport.hpp"

namespace naa::sim {

void Transport::open_peer(Qp& qp, std::uint32_t send_psn) {
  init_qp(qp, send_psn, 0);
  qp.peer_requester = true;
  qp.last_heard = sim_now();
}

void Transport::close_peer(Qp& qp) {
  release_qp(qp);
  qp.peer_requester = false;
}

void Transport::apply_handover(Qp& qp) {
  const Qp::Handover h = *qp.handover_pending;
  qp.handover_pending.reset();
  qp.cm_peer_ip = qp.peer_ip;
  qp.peer_ip = h.peer_ip;
  qp.peer_qpn = h.peer_qpn;
  qp.epsn = h.psn;
  qp.nak_sequence_sent = false;
  qp.in_message = Qp::InMessage::none;
  qp.handed_over = true;
  qp.last_heard = sim_now();
  ++handovers_;
}

}  // namespace naa::sim
