// RxPipe (ARCHITECTURE.md "The NAA model"): structural validation (protocol::decode_packet), ICRC
// check with IPv4-ID recovery (PROTOCOL.md 2), steering: QP 1 -> CmAgent, RC QPs -> Transport.
// Every drop is counted by reason. Cost: rxpipe_latency + ceil(len/W) cycles per datagram.
#pragma once

#include <array>
#include <string_view>

#include <systemc>

#include "naa/protocol/result.hpp"
#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"

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
  RxPipe(sc_core::sc_module_name name, ModelContext& ctx);

  sc_core::sc_port<ReceiveTap> tap{"tap"};                    // NetPort's capture
  sc_core::sc_port<PacketSink> to_cm{"to_cm"};                // QP 1: CmAgent
  sc_core::sc_port<PacketSink> to_transport{"to_transport"};  // RC QPs: Transport

  void put(Packet* p) override { in_.put(p); }
  void count_protocol_error(protocol::Error e) override {
    errors_.add(static_cast<std::size_t>(e));
  }
  [[nodiscard]] std::uint64_t drops() const { return errors_.total() + drops_.total(); }
  void report(std::ostream& os) const;

 private:
  void thread();
  ModelContext& ctx_;
  Channel<Packet*> in_;
  CycleMeter meter_;
  std::uint64_t accepted_ = 0, to_cm_ = 0, to_transport_ = 0, nonzero_ip_id_ = 0;
  ReasonCounters<kProtocolErrorSlots> errors_;
  ReasonCounters<kRxDropCount> drops_;
};

}  // namespace naa::sim
