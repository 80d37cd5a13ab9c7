// RxPipe (ARCHITECTURE.md "The NAA model"): structural validation (protocol::decode_packet), ICRC
// check with IPv4-ID recovery (PROTOCOL.md 2), steering: QP 1 -> CmAgent, RC QPs -> Transport.
// Every drop is counted by reason. Cost: rxpipe_latency + ceil(len/W) cycles per datagram.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string_view>

#include <systemc>

#include "naa/protocol/result.hpp"
#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/rx_checks.hpp"

namespace naa::sim {

// Drop reasons of RxPipe beyond protocol::Error (which covers structure and ICRC).
enum class RxDrop : std::uint8_t {
  cm_not_ud,    // something other than UD SEND ONLY addressed to QP 1
  cm_bad_qkey,  // UD to QP 1 without the GSI Q_Key
  not_rc,       // UD/CNP to another QP
  cnp,          // congestion notification (we do no congestion control)
  count_
};
inline constexpr std::size_t kRxDropCount = static_cast<std::size_t>(RxDrop::count_);
inline constexpr std::size_t kProtocolErrorSlots = 17;  // protocol::Error values are 1..16

// A validated packet on its way to CmAgent or Transport.
struct RxPacket {
  Packet* packet = nullptr;
};

// Provides PacketSink (datagrams from NetPort) and ProtocolErrorCounter.
class RxPipe : public sc_core::sc_module, public PacketSink, public ProtocolErrorCounter {
 public:
  SC_HAS_PROCESS(RxPipe);
  // checks: the ICRC and structural checks as another implementation (BlockFactory::
  // make_rx_checks: RTL or lockstep); nullptr = the protocol library (the C++ model).
  RxPipe(sc_core::sc_module_name name, ModelContext& ctx,
         std::unique_ptr<RxChecksIf> checks = nullptr);

  sc_core::sc_port<ReceiveTap> tap{"tap"};                    // NetPort's capture
  sc_core::sc_port<PacketSink> to_cm{"to_cm"};                // QP 1: CmAgent
  sc_core::sc_port<PacketSink> to_transport{"to_transport"};  // RC QPs: Transport

  void put(Packet* p) override { in_.put(p); }
  // NetPort hands a datagram over with the time it leaves the port stage, if the stage would
  // take it at once. Without a capture and with the model's checks, RxPipe's work reads only the
  // datagram: when it and the Transport's stage are idle, a datagram for the Transport crosses
  // RxPipe here (issue 31).
  [[nodiscard]] bool try_put_at(Packet* p, sc_core::sc_time ready) override;
  void count_protocol_error(protocol::Error e) override {
    errors_.add(static_cast<std::size_t>(e));
  }
  [[nodiscard]] std::uint64_t drops() const { return errors_.total() + drops_.total(); }
  void report(std::ostream& os) const;

 private:
  void thread();
  // With the model's checks: whether `p` goes to the Transport (ICRC, structure, an RC QP); if
  // so, sets its IPv4 ID and decode as thread() does.
  [[nodiscard]] bool passes_to_transport(Packet& p) const;
  // The stage's busy time for a datagram (StageQueue).
  static sc_core::sc_time service(void* self, const Packet& p, sc_core::sc_time start);
  // The stage's cycles for a datagram: service() and try_put_at()'s crossing use this formula.
  [[nodiscard]] std::uint64_t stage_cycles(const Packet& p) const {
    return SimConfig::stage_cycles(p.size, ctx_.cfg.width, ctx_.cfg.rxpipe_latency);
  }
  // The checks' verdicts: the block's (checks_) if there is one, else the protocol library's.
  using Verdict = std::optional<protocol::Error>;  // nullopt: passed
  [[nodiscard]] Verdict icrc_verdict(const Packet& p, const protocol::Ipv4UdpHeaders& h,
                                     bool model_ok);
  [[nodiscard]] Verdict parse_verdict(const Packet& p, Verdict model);
  ModelContext& ctx_;
  std::unique_ptr<RxChecksIf> checks_;
  // With checks_: datagrams where the block and the protocol library disagreed on pass/drop (the
  // block's verdict counts; a block that passes what decode_packet refuses is dropped anyway,
  // as the rest of the model needs decode_packet's view).
  std::uint64_t check_disagreements_ = 0;
  std::uint64_t check_cycles_ = 0;
  StageQueue in_;
  CycleMeter meter_;
  std::uint64_t accepted_ = 0, to_cm_ = 0, to_transport_ = 0, nonzero_ip_id_ = 0;
  // Every packet that entered, and those too short to hold a BTH and ICRC: the rest go through
  // the checks (the RTL's, in rtl or lockstep mode; tests compare rtl.rx_pipe.packets with it).
  std::uint64_t packets_ = 0, runts_ = 0;
  ReasonCounters<kProtocolErrorSlots> errors_;
  ReasonCounters<kRxDropCount> drops_;
};

}  // namespace naa::sim
