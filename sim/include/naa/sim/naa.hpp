// The simulated NAA card: the blocks of ARCHITECTURE.md "The NAA model", wired in the order a
// packet meets them (NetPort -> RxPipe -> CmAgent | Transport -> MrspHandler | KernelEngine ->
// Transport -> TxPipe -> NetPort), with MrTable and Memory beside them. The constructor is the
// one place where the blocks' ports (block_interfaces.hpp) are bound to their providers: the
// binding table of docs/sim/architecture.md.
#pragma once

#include <memory>
#include <ostream>
#include <random>
#include <vector>

#include <systemc>

#include "naa/sim/cm_agent.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/handler_engine.hpp"
#include "naa/sim/kernel_engine.hpp"
#include "naa/sim/kernels.hpp"
#include "naa/sim/memory.hpp"
#include "naa/sim/mr_table.hpp"
#include "naa/sim/mrsp_handler.hpp"
#include "naa/sim/net_port.hpp"
#include "naa/sim/rx_pipe.hpp"
#include "naa/sim/transport.hpp"
#include "naa/sim/tx_pipe.hpp"

namespace naa::sim {

class Naa : public sc_core::sc_module {
 public:
  Naa(sc_core::sc_module_name name, const SimConfig& cfg, const Log& log, PeerTimers& timers,
      boost::asio::io_context& io, KernelRegistry registry);
  ~Naa() override;

  [[nodiscard]] NetPort& net() { return *net_; }
  [[nodiscard]] const KernelEngine& kernels() const { return *kernels_; }
  // For in-process drivers that check results (fabric/broadcast.hpp): the streaming handlers,
  // and NAA memory read untimed.
  [[nodiscard]] const HandlerEngine& handlers() const { return *handlers_; }
  void peek_memory(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const {
    mem_->peek(addr, out, len);
  }
  // The seed of the fault decisions: --seed, or the one drawn from the OS random source.
  [[nodiscard]] std::uint64_t fault_seed() const { return ctx_.fault_seed; }
  // Every block's counters, one `key=value` per line (docs/sim/naa-sim.md).
  void report(std::ostream& os) const;
  // The simulator's own activity (issue 31, docs/performance.md "Cost per packet"): SystemC delta
  // cycles and timed steps, the driver's sc_start calls, and each per datagram (received +
  // transmitted) and per kernel call. Keys `activity.*`: they measure the simulator, not the
  // card, and change when the simulator gets faster (the simulated-time oracle leaves them out).
  // SystemC's counters belong to the whole simulation: with several Naa in one, each reports
  // the total against its own datagrams.
  void report_activity(std::ostream& os, std::uint64_t sc_start_calls) const;

 private:
  class MrTablePorts;  // MrTable behind RemoteAccessCheck and MrRegistration (naa.cpp)
  void bind_ports();
  HandlerRegistry handler_registry();
  [[nodiscard]] std::uint64_t hpu_max_cycles() const;
  // An image a host installed (HandlerEngine's ImageLoader): its handlers on hpu_cores_.
  LoadedImage load_installed_image(std::span<const std::uint8_t> image);

  const SimConfig& cfg_;
  SecretSource rng_;
  std::vector<Qp> qps_;
  PacketPool pool_;
  ModelContext ctx_;
  std::unique_ptr<Memory> mem_;
  std::unique_ptr<MrTable> mr_;
  std::unique_ptr<MrTablePorts> mr_ports_;
  std::unique_ptr<NetPort> net_;
  std::unique_ptr<RxPipe> rx_;
  std::unique_ptr<CmAgent> cm_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<MrspHandler> mrsp_;
  std::unique_ptr<KernelEngine> kernels_;
  std::unique_ptr<HandlerEngine> handlers_;
  std::vector<const class HpuHandler*> hpu_handlers_;          // --handler images, for report()
  std::vector<const class HpuHandler*> builtin_hpu_handlers_;  // the built-ins in C
  std::shared_ptr<class HpuCores> hpu_cores_;  // one core per HPU (--hpus), --hpu's mode
  std::unique_ptr<TxPipe> tx_;
};

}  // namespace naa::sim
