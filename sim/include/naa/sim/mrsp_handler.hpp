// MrspHandler (PROTOCOL.md 5.1): receives the 0x01 SEND, checks and places the regions at the
// requested NAA addresses (cleared to zeros), programs one MR table entry per region (rkey =
// random tag << 8 | index) and answers 0x02, or 0x00 with a code, as a SEND with SE. A second
// 0x01 on the same connection replaces its regions. Regions and MR entries are released when the
// connection ends. Cost: mrsp_latency + mrsp_entry_latency per entry + ceil(len/W) cycles.
//
// Error codes: 0x03 if the entries exceed the MR entries free to this connection; 0x02 if an
// address is beyond the memory, a region is empty or overlaps another region (of this request or
// of another connection), or the message is not a valid 0x01; 0x01 if address + size runs past
// the end of the memory.
//
// Handler images (docs/protocol.md "Handler images"): the last entry of a 0x01 may be a
// HANDLER_IMAGE region (flags 0x20): placed, advertised (remote write only) but not one of the
// call's regions. A 0x04 install then hands what the host wrote there to the HandlerEngine, which
// checks it; the region is freed and the answer is 0x05 or an error 0x02, 0x04..0x07.
//
// Peers (docs/protocol.md "Peers", mrsp_peer.cpp): a 0x06 opens a requester QP to another NAA
// (no CM exchange) as peer k of the connection, for its handlers' puts, and answers 0x07 with its
// QPN and first PSN; a 0x08 hands the connection's requester end to such a QP of another NAA and
// answers 0x09. Errors 0x08 (bad peer). A connection's peer QPs are released with it.
#pragma once

#include <array>

#include <optional>
#include <systemc>
#include <vector>

#include "naa/protocol/mrsp.hpp"
#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/stream_interfaces.hpp"

namespace naa::sim {

// Provides MessageDelivery (from Transport), RegionDirectory (to KernelEngine) and
// ConnectionResources (to CmAgent: the connection's regions and MR entries).
class MrspHandler : public sc_core::sc_module,
                    public MessageDelivery,
                    public RegionDirectory,
                    public ConnectionResources {
 public:
  SC_HAS_PROCESS(MrspHandler);
  MrspHandler(sc_core::sc_module_name name, ModelContext& ctx);

  sc_core::sc_port<SendQueue> sends{"sends"};             // Transport: the 0x02 / 0x00 answer
  sc_core::sc_port<ReceiveQueue> receives{"receives"};    // Transport: the buffer is free again
  sc_core::sc_port<MrRegistration> mr{"mr"};              // MrTable: one entry per region
  sc_core::sc_port<MemoryScrub> scrub{"scrub"};           // Memory: regions read as zeros
  sc_core::sc_port<HandlerInstall> handlers{"handlers"};  // HandlerEngine: 0x04 install

  // Transport completed a SEND into the QP's receive buffer.
  void deliver(Qp& qp) override;
  [[nodiscard]] const std::vector<Region>& regions(std::uint32_t qpn) const override;
  [[nodiscard]] const PeerBinding* peer(std::uint32_t qpn, std::uint32_t index) const override;
  void release(Qp& qp) override;
  [[nodiscard]] std::size_t regions_held() const;  // over all connections
  void report(std::ostream& os) const;

 private:
  std::vector<Region> placed_scratch_;                         // thread(): see there
  std::vector<protocol::MrspAdvertisementEntry> adv_scratch_;  // thread()
  struct Work {
    std::uint32_t index = 0;
    std::uint32_t generation = 0;
  };
  void thread();
  std::uint8_t place(Qp& qp, std::vector<Region>& out);  // 0 = ok, else error code
  // A 0x04 (docs/protocol.md "Handler images"): 0 or the error code; `fn` the installed one.
  std::uint8_t install(Qp& qp, std::size_t index, const protocol::MrspInstall& m, std::uint8_t& fn);
  void free_image(Qp& qp, std::size_t index);  // the HANDLER_IMAGE region, if any
  // Peers (mrsp_peer.cpp): the answer to a 0x06 or 0x08 in `out`; false if it is not one.
  bool peer_request(Qp& qp, std::size_t index, const protocol::MrspMessage& m,
                    std::vector<std::uint8_t>& out);
  std::uint8_t bind_peer(Qp& qp, std::size_t index, const protocol::MrspPeer& m,
                         protocol::MrspPeerBound& bound);
  std::uint8_t hand_over(Qp& qp, const protocol::MrspHandover& m);
  void release_peer(std::size_t index, std::size_t k);

  ModelContext& ctx_;
  Channel<Work> in_;
  CycleMeter meter_;
  std::vector<std::vector<Region>> regions_;  // per QP index
  // ctx_.qps.size(), fixed from construction (regions_ is sized from it): regions() compares
  // with it instead of dividing the vector's extent by a QP's size (issue 31: 3 lookups a call).
  std::size_t qp_count_ = 0;
  std::vector<std::optional<Region>> images_;  // per QP index: its HANDLER_IMAGE region
  using Peers = std::array<std::optional<PeerBinding>, protocol::kMrspMaxPeers>;
  std::vector<Peers> peers_;  // per QP index
  std::uint64_t peers_bound_ = 0, peers_released_ = 0, handovers_ = 0;
  std::uint64_t requests_ = 0, advertised_ = 0, regions_placed_ = 0, bad_messages_ = 0,
                installs_ = 0, installed_ = 0;
  std::array<std::uint64_t, 9> errors_{};  // by code
};

}  // namespace naa::sim
