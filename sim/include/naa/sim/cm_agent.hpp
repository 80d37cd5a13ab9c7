// CmAgent (PROTOCOL.md 4 and 8): the passive side of the IB CM on QP 1, as librdmacm's peers
// expect it. REQ -> REP (or REJ 8 for a service ID nobody listens on, REJ 26 for a path MTU above
// --mtu-max, REJ 28 "out of QPs" or "too many half-open connections from this address"), a
// duplicate REQ gets the same REP, RTU (or the first valid data packet) completes the connection,
// DREQ -> DREP (always, even for an unknown connection), a REJ from the peer or the half-open timer
// releases the QP. A QP that Transport put in error (retry exhausted, fatal NAK) loses its regions
// and MR entries at once; the NAA sends a DREQ and frees the QP on the DREP, the peer's own DREQ or
// REJ, or after the half-open expiry time. Under a REQ flood an address holds at most half the QPs
// half-open and, with every QP taken, a new REQ displaces the oldest half-open connection of
// another address (admit()). Cost: cm_latency + ceil(256/W) cycles per MAD.
#pragma once

#include <array>
#include <vector>

#include <systemc>

#include "naa/protocol/cm.hpp"
#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"

namespace naa::sim {

// Provides PacketSink (MADs from RxPipe) and ConnectionEvents (from Transport).
class CmAgent : public sc_core::sc_module,
                public PacketSink,
                public ConnectionEvents,
                public PeerTimerClient {
 public:
  SC_HAS_PROCESS(CmAgent);
  CmAgent(sc_core::sc_module_name name, ModelContext& ctx);

  sc_core::sc_port<PacketSink> to_tx{"to_tx"};                       // TxPipe: REP, REJ, DREQ...
  sc_core::sc_port<QpLifecycle> transport{"transport"};              // Transport: open, release
  sc_core::sc_port<ConnectionResources> regions{"regions"};          // MrspHandler: regions, MRs
  sc_core::sc_port<ConnectionResources> calls{"calls"};              // KernelEngine: queued calls
  sc_core::sc_port<PortAddresses> addresses{"addresses"};            // NetPort: the CA GUID
  sc_core::sc_port<ProtocolErrorCounter> protocol_errors{"errors"};  // RxPipe: bad MADs

  void put(Packet* p) override { in_.put(p); }
  // Transport saw the first valid data packet on a QP still waiting for its RTU.
  void established_by_data(Qp& qp) override;
  // Transport put the QP in error (it already flushed its own queues and timers).
  void on_qp_error(Qp& qp) override;
  void on_peer_timer(std::uint32_t cookie) override;
  [[nodiscard]] std::uint32_t connections() const;
  [[nodiscard]] std::uint32_t half_open() const;  // QPs in RTR: REP sent, no RTU yet
  void report(std::ostream& os) const;

 private:
  void thread();
  void handle(const Packet& p);
  void on_req(const Packet& p, const protocol::MadHeader& h, const protocol::CmReq& req);
  void negotiate_irn(Qp& qp, const protocol::CmReq& req);
  void send_mad(std::uint32_t peer_ip, const std::array<std::uint8_t, protocol::kMadSize>& mad);
  void send_rej(std::uint32_t peer_ip, const protocol::MadHeader& h, std::uint32_t remote_comm_id,
                std::uint16_t reason, std::string_view why);
  void release(Qp& qp, const char* why);
  // A QP for a new REQ from peer_ip (docs/sim/cm_agent.md), or nullptr and why not.
  Qp* admit(std::uint32_t peer_ip, const char** refusal);
  void disconnect_errored(Qp& qp);

  struct QpRef {
    std::uint32_t index = 0;
    std::uint32_t generation = 0;
  };

  ModelContext& ctx_;
  Channel<Packet*> in_;
  Channel<std::uint32_t> expired_;        // QP indices whose half-open (or DREP) timer fired
  Channel<QpRef> errored_;                // QPs Transport put in error
  std::vector<sc_core::sc_time> expiry_;  // per QP: how long to wait for an RTU or a DREP
  CycleMeter meter_;
  std::uint32_t ud_psn_ = 0;
  std::uint64_t half_open_seq_ = 0;  // orders half-open connections by age
  std::uint64_t half_open_peak_ = 0, half_open_evicted_ = 0, half_open_refused_ = 0;
  std::uint64_t reqs_ = 0, reps_ = 0, dup_reqs_ = 0, rtus_ = 0, dreqs_ = 0, dreps_ = 0,
                rejs_sent_ = 0, rejs_received_ = 0, expired_count_ = 0, ignored_ = 0,
                decode_errors_ = 0, established_by_data_ = 0, released_ = 0, dreqs_sent_ = 0,
                dreps_received_ = 0, error_disconnects_ = 0, drep_timeouts_ = 0;
  std::uint64_t irn_accepted_ = 0;  // REQs answered with IRN
  std::array<std::uint64_t, 32> rej_by_reason_{};
};

}  // namespace naa::sim
