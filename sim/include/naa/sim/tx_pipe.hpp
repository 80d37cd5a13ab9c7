// TxPipe (ARCHITECTURE.md "The NAA model"): takes a packet whose BTH..payload the CmAgent or the
// Transport encoded, picks the UDP source port of its QP, synthesises the IPv4/UDP headers that
// will really be on the wire (make_roce_headers, ID 0, PROTOCOL.md 1), writes the ICRC
// (PROTOCOL.md 2) and hands it to NetPort. Cost: txpipe_latency + ceil(len/W) cycles.
#pragma once

#include <systemc>

#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"

namespace naa::sim {

// Provides PacketSink (encoded packets from CmAgent and Transport).
class TxPipe : public sc_core::sc_module, public PacketSink {
 public:
  SC_HAS_PROCESS(TxPipe);
  TxPipe(sc_core::sc_module_name name, ModelContext& ctx);

  sc_core::sc_port<PortAddresses> addresses{"addresses"};  // NetPort: what the ICRC covers
  sc_core::sc_port<PacketSink> to_net{"to_net"};           // NetPort: the wire

  // Into the stage's FIFO; or, when the stage and NetPort's port stage are idle, through the
  // stage at once (its work reads only the packet; StageQueue::reserve) and on to NetPort with
  // the time the stage would have handed it on: the stage's process does not wake for it.
  void put(Packet* p) override;
  void report(std::ostream& os) const;

 private:
  void thread();
  void finish_icrc(Packet* p);  // the stage's work: the ICRC
  void count(const Packet* p) {
    ++packets_;
    bytes_ += p->size;
  }
  // The stage's cycles for a packet: service() and put()'s crossing use this one formula.
  [[nodiscard]] std::uint64_t stage_cycles(const Packet& p) const {
    return SimConfig::stage_cycles(p.size, ctx_.cfg.width, ctx_.cfg.txpipe_latency);
  }
  static sc_core::sc_time service(void* self, const Packet& p,
                                  sc_core::sc_time start);  // StageQueue
  ModelContext& ctx_;
  StageQueue in_;
  CycleMeter meter_;
  std::uint64_t packets_ = 0, bytes_ = 0;
};

}  // namespace naa::sim
