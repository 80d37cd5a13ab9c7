// Transport (PROTOCOL.md 3): per-QP RC state.
// Responder: ePSN, MSN, duplicates (re-ACK, never re-execute; a duplicate READ is replayed),
//   out-of-order (one NAK 0x60, then silence until ePSN arrives), opcode sequence and length
//   checks (NAK 0x61), MR checks on every access (NAK 0x62, nothing written), RNR NAK when no
//   receive is available, ACK on AckReq. SEND data lands in the MRSP receive buffer; WRITE data
//   goes to Memory over TLM; a WRITE_WITH_IMM completion posts a call to the KernelEngine.
// Requester (the NAA's own MRSP answers and result write-backs): segmentation at the path MTU,
//   AckReq on the last packet of a message and every 64 packets, at most 128 unacknowledged
//   PSNs, coalesced ACKs, go-back-N on NAK 0x60 or retransmit timeout, RNR waits, retry counters;
//   exhaustion puts the QP in error (counted).
// Idle liveness: a connected QP that heard nothing from its peer for idle_timeout_ms probes it
//   with a zero-length RDMA WRITE (AckReq, next PSN, normal retransmit and retry count); a peer
//   that is gone runs the retries out and the QP goes to error (docs/sim/transport.md).
// Cost: transport_latency + ceil(len/W) cycles per packet in each direction, plus memory time.
#pragma once

#include <array>
#include <string_view>

#include <systemc>

#include "naa/protocol/packet.hpp"
#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/memory_port.hpp"
#include "naa/sim/stream_interfaces.hpp"

namespace naa::sim {

enum class TransportDrop : std::uint8_t {
  unknown_qp,
  wrong_peer,
  qp_error,
  out_of_order,  // after the one NAK 0x60
  mtu_exceeded,  // payload larger than the path MTU (NAK 0x61 too)
  unexpected_response,
  stale_ack,
  irn_opcode,         // an IRN opcode on a go-back-N QP (never acted on)
  irn_beyond_bitmap,  // IRN: PSN at or past ePSN + BDP cap (docs/protocol.md "IRN")
  irn_no_receive,     // IRN: SEND / WRITE_WITH_IMM that finds no receive; the peer's timer resends
  count_
};
inline constexpr std::size_t kTransportDropCount = static_cast<std::size_t>(TransportDrop::count_);

enum class NakSent : std::uint8_t { sequence, invalid_request, remote_access, rnr, count_ };

// Provides PacketSink (RC packets from RxPipe), QpLifecycle (to CmAgent), SendQueue (to
// MrspHandler and KernelEngine) and ReceiveQueue (to MrspHandler).
class Transport : public sc_core::sc_module,
                  public PacketSink,
                  public QpLifecycle,
                  public SendQueue,
                  public ReceiveQueue,
                  public PeerTimerClient {
 public:
  SC_HAS_PROCESS(Transport);
  Transport(sc_core::sc_module_name name, ModelContext& ctx);

  sc_core::sc_port<PacketSink> to_tx{"to_tx"};             // TxPipe: everything we send
  sc_core::sc_port<ConnectionEvents> cm{"cm"};             // CmAgent: RTS by data, QP error
  sc_core::sc_port<MessageDelivery> messages{"messages"};  // MrspHandler: completed SENDs
  sc_core::sc_port<CallQueue> calls{"calls"};              // KernelEngine: WRITE_WITH_IMM
  sc_core::sc_port<RemoteAccessCheck> access{"access"};    // MrTable: every remote access
  MemoryPort mem;                                          // Memory (TLM): payload, READs
  // HandlerEngine: payload of STREAM regions and their calls (docs/sim/handler_engine.md).
  // Optional: unbound (a test harness), every WRITE goes to Memory as before.
  sc_core::sc_port<StreamHandlers, 1, sc_core::SC_ZERO_OR_MORE_BOUND> streams{"streams"};

  void put(Packet* p) override { in_.put(p); }
  // RxPipe hands a datagram over with the time it leaves RxPipe (StageQueue, issue 31).
  [[nodiscard]] bool try_put_at(Packet* p, sc_core::sc_time ready) override {
    return in_.try_put_at(p, ready);
  }
  // A freshly allocated QP: PSN spaces from the CM (send = the REQ's starting PSN, receive = the
  // REP's, PROTOCOL.md 4).
  void init_qp(Qp& qp, std::uint32_t send_psn, std::uint32_t recv_psn) override;
  void release_qp(Qp& qp) override;
  // The CM moved the QP to RTS (RTU or first data): the idle-liveness timer starts.
  void on_established(Qp& qp) override;
  // Queue a message on the QP's requester (MrspHandler, KernelEngine).
  void post_send(Qp& qp, SendWqe wqe) override;
  void post_last_send(Qp& qp, SendWqe wqe) override;
  std::vector<std::uint8_t> take_payload_buffer() override;
  // Peers (transport_peer.cpp, docs/protocol.md "Peers").
  void open_peer(Qp& qp, std::uint32_t send_psn) override;
  void close_peer(Qp& qp) override;
  // The MRSP handler finished with the receive buffer.
  void repost_receive(Qp& qp) override;
  void on_peer_timer(std::uint32_t cookie) override;

  [[nodiscard]] std::uint64_t drops() const { return drops_.total(); }
  void report(std::ostream& os) const;

  // The IRN retransmit timeout to arm for this window now (irn_arm_retransmit; 0: nothing in
  // flight, no timer): protocol::irn_timeout_ns over the unSACKed PSNs (docs/protocol.md 8.4),
  // which it counts only when more than low_threshold are in flight (issue 31). Test sim_blocks
  // compares it with irn_timeout_ns(caps, w.unsacked()) over random windows and SACKs.
  [[nodiscard]] static std::uint64_t irn_retransmit_ns(const protocol::CapabilityBlock& caps,
                                                       const protocol::IrnSendWindow& w) noexcept;

 private:
  void rx_thread();
  void tx_thread();
  [[gnu::noinline]] void handle_fired_timers();  // tx_thread's, when a peer timer fired
  void responder(Qp& qp, Packet* p, const protocol::PacketView& v);
  void requester_rx(Qp& qp, const protocol::PacketView& v);
  void send_ack(Qp& qp, std::uint32_t psn, std::uint8_t syndrome);
  void fatal_nak(Qp& qp, std::uint32_t psn, std::uint8_t syndrome);
  // A READ request the QP may serve (granted reads, the MR allows it); else the fatal NAK is sent.
  bool read_allowed(Qp& qp, std::uint32_t psn, const protocol::Reth& r);
  void acknowledge_through(Qp& qp, std::uint32_t psn);  // completes messages ending <= psn
  void go_back(Qp& qp, std::uint32_t psn);
  void arm_retransmit(Qp& qp);
  void qp_error(Qp& qp, const char* why);
  bool send_next_packet(Qp& qp);    // requester: one packet if the window allows
  bool send_read_response(Qp& qp);  // responder: one READ RESPONSE packet
  void on_idle_timer(Qp& qp);       // probe, or re-arm for the rest of the idle time
  void arm_idle(Qp& qp, sc_core::sc_time after);
  void retry_exhausted(Qp& qp, const char* why);
  void apply_handover(Qp& qp);  // 0x08, once the 0x09 answer is acknowledged
  // IRN (transport_irn.cpp; docs/protocol.md "IRN").
  void irn_init(Qp& qp);
  void irn_responder(Qp& qp, const protocol::PacketView& v);
  void irn_complete(Qp& qp, std::uint32_t psn);
  void irn_execute_read(Qp& qp, const Qp::IrnPending& r);
  void irn_send_read_response(Qp& qp, const SendWqe& w, std::uint32_t psn, std::uint32_t off,
                              bool urgent);
  void irn_send_ack(Qp& qp, std::uint32_t sack_psn);
  void irn_requester_rx(Qp& qp, const protocol::PacketView& v);
  // Whether irn_send_next_packet() would send a packet: a retransmission (only in recovery:
  // take_retransmit() is empty otherwise) or a first transmission within the window. Inline
  // (issue 31): the scheduler's scan skips the call for a QP with nothing to send, which it
  // meets once per nop call (the turn after the write-back's packet).
  [[nodiscard]] static bool irn_has_packet(const Qp& qp) {
    return qp.irn_tx.in_recovery() || (qp.psn_send != qp.psn_tail && qp.irn_tx.can_send_new());
  }
  // Whether the transmit scheduler could send something on this IRN QP now (tx_thread's scan):
  // a READ response, or what irn_has_packet() says.
  [[nodiscard]] static bool irn_may_send(const Qp& qp) {
    return !qp.reads.empty() || irn_has_packet(qp);
  }
  bool irn_send_next_packet(Qp& qp);
  void irn_send_packet(Qp& qp, std::uint32_t psn, bool urgent);  // urgent: AckReq at once
  void irn_put_packet(Qp& qp, std::uint32_t gen, const protocol::PacketHeaders& h,
                      protocol::ByteView payload);
  void irn_on_timeout(Qp& qp);
  void irn_arm_retransmit(Qp& qp);
  [[nodiscard]] std::uint32_t qp_index(const Qp& qp) const {  // inline: per packet (issue 31)
    return static_cast<std::uint32_t>(&qp - ctx_.qps.data());
  }
  // Packets of a message of `len` bytes at this MTU (a zero-length message takes one).
  [[nodiscard]] static std::uint32_t packets_for(std::size_t len, std::uint32_t mtu) {
    return len == 0 ? 1U : static_cast<std::uint32_t>((len + mtu - 1) / mtu);  // inline: per post
  }

  // Peer-timer cookies: QP index << kCookieShift | kind.
  static constexpr std::uint32_t kCookieRetransmit = 0;
  static constexpr std::uint32_t kCookieRnr = 1;
  static constexpr std::uint32_t kCookieIdle = 2;
  static constexpr std::uint32_t kCookieKindMask = 3;
  static constexpr std::uint32_t kCookieShift = 2;
  // Posted payload writes (docs/performance.md): the RX path issues a WRITE's payload to memory
  // and goes on with the next packet; it waits only while the previous write is still in flight.
  // Inline (issue 31): the previous write is nearly always done, and the check is two loads.
  void wait_posted_write() {
    if (write_done_ > sim_now()) wait_for_posted_write();
  }
  void wait_for_posted_write();
  [[nodiscard]] bool post_write(std::uint64_t addr, const std::uint8_t* data, std::uint64_t len);
  void drop(TransportDrop d) { drops_.add(static_cast<std::size_t>(d)); }

  // The receive stage's busy time for a datagram (StageQueue: RxPipe starts it when idle).
  static sc_core::sc_time rx_service(void* self, const Packet& p, sc_core::sc_time start);

  ModelContext& ctx_;
  StageQueue in_;
  tlm::tlm_generic_payload post_trans_;  // post_write's (issue 31: one allocation per write)
  sc_core::sc_event tx_work_;
  // The transmit scheduler's turn made by post_last_send (issue 31): tx_thread was parked in its
  // wait for work and does not wake for the turn; the packet leaves the stage at tx_pending_at_,
  // when tx_thread wakes (tx_work_, timed) and hands it to TxPipe as after irn_put_packet's wait.
  bool tx_parked_ = false;   // tx_thread waits on tx_work_
  bool tx_in_turn_ = false;  // post_last_send's turn: irn_put_packet books instead of waiting
  Packet* tx_pending_ = nullptr;
  sc_core::sc_time tx_pending_at_;
  std::uint64_t tx_turns_at_post_ = 0;  // activity.transport.tx_turns_at_post
  // Whether post_last_send may make the scheduler's turn for `qp`'s WQE that starts at
  // `first_psn`, and makes it (true).
  bool tx_turn_at_post(Qp& qp, std::uint32_t first_psn);
  // A WQE into the QP's send queue, numbered from psn_tail (post_send, post_last_send); returns
  // its first PSN.
  std::uint32_t queue_send(Qp& qp, SendWqe wqe);
  CycleMeter rx_meter_, tx_meter_;
  std::size_t rr_ = 0;  // round-robin position of the tx scheduler
  // One past the highest QP index init_qp() has seen (never lowered): every QP that reaches RTS
  // was initialised there first (the CM's REQ, MRSP's peer QPs), so the scheduler's scan stops
  // here instead of at the table's end (issue 31).
  std::size_t qp_scan_end_ = 0;
  // A datagram RxPipe did not decode (a harness's put()): decoded here (rx_thread).
  [[gnu::noinline]] const protocol::PacketView* decode_fallback(const Packet& p);
  protocol::PacketView fallback_view_;
  // Headers kept between packets (issue 31), each used by one process only: the ACKs' by
  // rx_thread (irn_responder), the data packets' by tx_thread (irn_send_next_packet).
  protocol::PacketHeaders irn_ack_headers_;
  protocol::PacketHeaders irn_data_headers_;
  // irn_arm_retransmit's last timeout (ns, never 0 once set) and its sc_time (ns_time(ns)).
  std::uint64_t irn_rto_ns_ = 0;
  sc_core::sc_time irn_rto_time_ = sc_core::SC_ZERO_TIME;
  std::vector<std::uint32_t> timer_fired_;    // cookies fired, handled by tx_thread
  std::vector<std::uint32_t> fired_scratch_;  // handle_fired_timers' working copy of timer_fired_
  // Payload vectors of completed WQEs for the next posts (keep_payload_buffer).
  static constexpr std::size_t kKeptPayloads = 8;
  static constexpr std::size_t kKeptPayloadBytes = 4096;
  std::vector<std::vector<std::uint8_t>> kept_payloads_;
  void keep_payload_buffer(SendWqe& w);
  std::vector<std::uint8_t> scratch_;
  sc_core::sc_time write_done_ = sc_core::SC_ZERO_TIME;  // completion of the last posted write
  ReasonCounters<kTransportDropCount> drops_;
  ReasonCounters<static_cast<std::size_t>(NakSent::count_)> naks_;
  std::uint64_t rx_packets_ = 0, rx_payload_bytes_ = 0, acks_sent_ = 0, duplicates_ = 0, reads_ = 0,
                tx_packets_ = 0, tx_payload_bytes_ = 0, retransmits_ = 0, timeouts_ = 0,
                acks_received_ = 0, naks_received_ = 0, rnr_received_ = 0, messages_completed_ = 0,
                completion_errors_ = 0, qp_errors_ = 0, idle_probes_ = 0, idle_releases_ = 0;
  std::uint64_t irn_acks_sent_ = 0, irn_sacks_received_ = 0, irn_completions_deferred_ = 0;
  std::uint64_t handovers_ = 0;
};

}  // namespace naa::sim
