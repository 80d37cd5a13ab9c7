// KernelEngine (PROTOCOL.md 5.2 and 5.3): on a WRITE_WITH_IMM completion, decodes the immediate,
// runs the kernel from the registry over the connection's regions and queues the write-back
// (WRITE ... WRITE_WITH_IMM with SE) on the connection's requester. One lane per QP: calls on a
// connection run in order, different connections run independently. Immediate 0 aborts (no
// kernel, no reply); an unknown function code answers 0x03. Cost per call: kernel_latency + the
// kernel's cost model, plus the memory transfers (loading the regions, storing them back,
// reading the outputs for the write-back). The kernels compute on the regions in the memory
// itself (TLM DMI, MemoryPort::direct); the loads and stores are timed accesses that move no
// bytes (issue 31).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <systemc>

#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/kernels.hpp"
#include "naa/sim/memory_port.hpp"

namespace naa::sim {

// Provides CallQueue (from Transport) and ConnectionResources (to CmAgent: queued calls).
class KernelEngine : public sc_core::sc_module, public CallQueue, public ConnectionResources {
 public:
  SC_HAS_PROCESS(KernelEngine);
  KernelEngine(sc_core::sc_module_name name, ModelContext& ctx, KernelRegistry registry);

  sc_core::sc_port<RegionDirectory> directory{"directory"};  // MrspHandler: the call's regions
  sc_core::sc_port<SendQueue> sends{"sends"};                // Transport: the result write-back
  MemoryPort mem;                                            // Memory (TLM): load, store, read out

  // Is there a free receive for a call on this QP (else the Transport answers RNR)?
  [[nodiscard]] bool can_accept(const Qp& qp) const override;
  void post_call(Qp& qp, std::uint32_t imm) override;
  void release(Qp& qp) override;
  [[nodiscard]] std::uint64_t dispatches() const { return dispatches_; }
  // The kernels it runs (model or RTL): the HandlerEngine computes per packet with them.
  [[nodiscard]] const KernelRegistry& registry() const { return registry_; }
  void report(std::ostream& os) const;

 private:
  struct Call {
    std::uint32_t generation = 0;
    std::uint32_t imm = 0;
    // Accepted by post_call for an idle lane, and due when the kernel latency has passed: the
    // lane's check was made then, and the latency is not waited again (issue 31).
    bool accepted = false;
  };
  void lane(std::size_t index);
  // `index`: the lane's, which is the QP's index in ctx_.qps. Inlined into lane(), its only
  // caller (issue 31: a call and its register saves less per kernel call). `latency_passed`:
  // the call was accepted by post_call and the kernel latency was waited before the lane woke.
  [[gnu::always_inline]] inline void run_call(std::size_t index, Qp& qp, std::uint32_t generation,
                                              std::uint32_t imm, bool latency_passed);

  ModelContext& ctx_;
  KernelRegistry registry_;
  // Per QP, its calls in order: each due when posted, or (accepted) after the kernel latency.
  std::vector<std::unique_ptr<ReadyQueue<Call>>> lanes_;
  // A private copy of a region, for a kernel that must not compute in place (KernelEngine::
  // run_call): grows without zero-filling what the copy overwrites (std::vector would).
  struct LoadBuffer {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::uint64_t size = 0;
    std::span<std::uint8_t> take(std::uint64_t n);  // n bytes, contents undefined
  };
  // Per lane, per region index: those copies, kept from call to call; freed when the lane's
  // connection has gone. Most calls need none: their kernels compute on the memory in place.
  std::vector<std::vector<LoadBuffer>> scratch_;
  // Per lane: run_call's working vectors, kept from call to call (issue 31: three allocations
  // per call before). Lanes run concurrently (each waits inside run_call), so one set per lane.
  // Where a region's result goes (from the directory at the call's start).
  struct WriteBackTarget {
    std::uint64_t naa_address = 0;
    std::uint64_t host_va = 0;
    std::uint32_t host_rkey = 0;
  };
  struct CallVectors {
    std::vector<KernelRegion> regions;
    std::vector<WriteBackTarget> targets;  // per region, in the same order
    std::size_t count = 0;  // the size of both (issue 31: no size arithmetic per call)
  };
  std::vector<CallVectors> call_vectors_;
  CycleMeter meter_;
  std::uint64_t dispatches_ = 0, aborted_ = 0, unknown_fn_ = 0, invalid_args_ = 0,
                bad_immediate_ = 0, stale_ = 0, bytes_processed_ = 0, kernel_cycles_ = 0,
                timeouts_ = 0;
  // Bytes copied into private copies (activity.kernel.private_copy_bytes): 0 while every kernel
  // computes in place. A count of the simulator's work, not of the modelled hardware's.
  std::uint64_t private_copy_bytes_ = 0;
  // Calls post_call accepted (or found stale) for an idle lane, which then did not wake for the
  // check (issue 31; activity.*: outside the simulated-time digest).
  std::uint64_t accepted_at_post_ = 0;
  std::array<std::uint64_t, 128> per_fn_{};
};

}  // namespace naa::sim
