// HandlerEngine (docs/sim/handler_engine.md, the sPIN model of seed 004): streaming handlers that
// run while a call's input still arrives. A connection opts in with the MRSP STREAM flag
// (docs/protocol.md "Streaming regions"): the payload of every RDMA WRITE into one of its STREAM
// INPUT regions goes to a pool of handler processing units (HPUs) packet by packet instead of to
// Memory; a header handler runs once per message before its payload handlers, payload handlers
// run in parallel on the HPUs in any order, and a completion handler runs once per call (at the
// WRITE_WITH_IMM) after all of them, before the NAA's reply. A connection without a STREAM region
// never reaches this block: its calls run store-and-forward in the KernelEngine as before.
//
// Limits (seed B.2.1): --hpus N HPUs, --hpu-mem bytes of HPU memory (the handler state the
// descriptor asks for, plus the packets waiting for an HPU), the watchdog (--kernel-timeout-cycles,
// or --hpu-max-cycles per invocation). When no HPU is free and HPU memory is full the Transport
// RNR-NAKs the packet (flow control: nothing is lost, the host retries) and the call's completion
// handler sees flow_control_triggered.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <systemc>

#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/kernels.hpp"
#include "naa/sim/memory_port.hpp"
#include "naa/sim/stream_interfaces.hpp"

namespace naa::sim {

// Handler return codes (seed B.3-B.5; docs/spin.md "Return codes"). success is a header
// handler's PROCESS_DATA; proceed (a header handler's only) deposits the message as a plain RDMA
// WRITE and runs no further handler of it; drop from a header handler discards the message. The
// PENDING variants mean their plain codes (the NAA answers every call).
enum class HandlerRc : std::uint8_t { success, drop, fail, segv, proceed };

// Return codes a streaming call answers with (PROTOCOL.md 5.2: 0x10-0x7F are kernel-specific;
// docs/protocol.md "Streaming regions"). The watchdog answers 0x02 kernel timeout as for kernels.
// The handlers need each message's header packet first (a user header, a header handler's DROP
// or PROCEED) but the connection delivers packets out of order (IRN, docs/spin.md).
inline constexpr std::uint32_t kRcHandlerUnordered = 0x7C;
inline constexpr std::uint32_t kRcHandlerMemory = 0x7D;  // descriptor state > --hpu-mem
inline constexpr std::uint32_t kRcHandlerSegv = 0x7E;    // an access outside the call's regions
inline constexpr std::uint32_t kRcHandlerFail = 0x7F;    // a handler returned FAIL

// One invocation's view of the world: the constants of seed 3 (PTL_MY_HPU, PTL_NUM_HPUS), the HPU
// memory shared by the connection's handlers, the descriptor's argument, the kernel of the same
// function code (the Verilated one in rtl mode) and the actions. Actions are recorded and applied
// by the engine after the handler's cycles, all or none: one outside the call's regions fails the
// call (SEGV) and nothing of that invocation is written.
class HandlerContext {
 public:
  struct Action {
    // peer_device, peer_host (docs/spin.md "Puts to other nodes"): to the NAA region of the
    // connection's peer `peer`, at `offset` of it; peer_host reads `length` bytes at `offset`
    // of `region`.
    enum class Kind : std::uint8_t {
      deposit,
      reply,
      write_back,
      peer_device,
      peer_host
    } kind = Kind::deposit;
    std::size_t region = 0;
    std::uint64_t offset = 0;
    std::vector<std::uint8_t> bytes;  // deposit, reply, peer_device
    std::uint64_t length = 0;         // write_back, peer_host
    std::uint32_t peer = 0;           // peer_device, peer_host
  };
  std::uint32_t hpu = 0;
  std::uint32_t hpus = 1;
  std::uint32_t width = 8;  // HPU bytes per cycle (--hpu-width), for cost models
  std::uint64_t arg = 0;    // the descriptor's 64-bit argument (its host VA field)
  std::span<std::uint8_t> state;
  std::span<const Region> regions;  // the call's regions in 0x01 order
  const Kernel* kernel = nullptr;
  // Counts the runs of `kernel` for the engine's statistics (handler.kernel_runs.<name>): tests
  // of the RTL kernels account for every run they must have done (testbench/support/naa_sim.cpp).
  std::uint64_t* kernel_runs = nullptr;
  std::vector<Action> actions;
  // The connection's counters (seed B.6, naa/spin.h PtlHandlerCT*): Portals 4 counting events,
  // kept across the connection's calls. Null for a context without a connection.
  struct CtEvent {
    std::uint64_t success = 0, failure = 0;
  };
  static constexpr std::size_t kCounters = 4;
  std::array<CtEvent, kCounters>* counters = nullptr;
  // DMA from NAA memory (seed B.6 PtlHandlerDMAFromHostB): `out.size()` bytes at `offset` of
  // region `region`, after every earlier invocation's deposits reached memory (this invocation's
  // own are applied after it ends, all or none); false, reading nothing, outside the region. The
  // engine sets it; the read takes the memory's simulated time.
  std::function<bool(std::size_t region, std::uint64_t offset, std::span<std::uint8_t> out)> read;

  // Writes bytes into NAA memory at `offset` of region `region`.
  void deposit(std::size_t region, std::uint64_t offset, std::span<const std::uint8_t> bytes);
  // One RDMA WRITE from HPU memory (at most one MTU) to the host address of OUTPUT region
  // `region` + offset (seed 3: messages from HPU memory carry a single packet).
  void reply(std::size_t region, std::uint64_t offset, std::span<const std::uint8_t> bytes);
  // The first `length` bytes of OUTPUT region `region`, from NAA memory to its host address
  // (the normal send queue). The last action of a completion handler carries the reply immediate.
  void write_back(std::size_t region, std::uint64_t length);
  // One RDMA WRITE of `bytes` (at most the peer QP's MTU) from HPU memory to `offset` of the
  // region of the connection's peer `peer` (PtlHandlerPutFromDevicePeer).
  void put_peer(std::uint32_t peer, std::uint64_t offset, std::span<const std::uint8_t> bytes);
  // `length` bytes at `offset` of region `region`, from NAA memory to the same offset of peer
  // `peer`'s region (PtlHandlerPutFromHostPeer).
  void put_peer_from_region(std::size_t region, std::uint64_t length, std::uint32_t peer,
                            std::uint64_t offset);
  // The index of the i-th non-internal region with all of `flags`, or regions.size().
  [[nodiscard]] std::size_t find(std::uint8_t flags, std::size_t i = 0) const;
};

struct HandlerRun {
  HandlerRc rc = HandlerRc::success;
  std::uint64_t cycles = 0;
};

// A message's header packet (seed B.3 ptl_header_t, 3.2.1): the first packet of one RDMA WRITE
// into a STREAM region; user_header is its first Handler::user_header_bytes() bytes (fewer if
// the packet is shorter).
struct HeaderArgs {
  std::size_t region = 0;    // the STREAM region, index in 0x01 order
  std::uint64_t offset = 0;  // of the message's first byte in the region
  std::uint32_t length = 0;  // bytes of the header packet, user header included
  std::span<const std::uint8_t> user_header;
};

// A payload packet (seed B.4 ptl_payload_t): its bytes and where they belong.
struct PayloadArgs {
  std::size_t region = 0;    // the STREAM region, index in 0x01 order
  std::uint64_t offset = 0;  // of the first byte in the region
  std::span<const std::uint8_t> data;
};

// What the completion handler learns (seed B.5).
struct CompletionArgs {
  bool flow_control_triggered = false;
  std::uint64_t dropped_bytes = 0;
  std::uint64_t bytes = 0;  // payload bytes the payload handlers processed
};

class Handler {
 public:
  virtual ~Handler() = default;
  [[nodiscard]] virtual std::uint8_t function_code() const = 0;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // HPU memory the handler needs for `hpus` HPUs and `packets` packets (checked against the
  // descriptor's size and --hpu-mem).
  [[nodiscard]] virtual std::uint64_t state_bytes(std::uint32_t hpus,
                                                  std::uint32_t packets) const = 0;
  // Once per message, before any payload handler of the message.
  virtual HandlerRun header(HandlerContext& ctx, const HeaderArgs& h) const;
  // The user header's size (seed 3.2.1): the first bytes of each message, which the header
  // handler gets and the payload handlers do not.
  [[nodiscard]] virtual std::uint32_t user_header_bytes() const { return 0; }
  virtual HandlerRun payload(HandlerContext& ctx, const PayloadArgs& p) const = 0;
  virtual HandlerRun completion(HandlerContext& ctx, const CompletionArgs& c) const = 0;
};

class HandlerRegistry {
 public:
  void register_handler(std::unique_ptr<Handler> h);
  [[nodiscard]] const Handler* find(std::uint8_t fn) const;
  // add1, add2, sum_u64, crc32 and unpack_strided (docs/sim/handler_engine.md).
  [[nodiscard]] static HandlerRegistry with_builtins();

 private:
  std::vector<std::unique_ptr<Handler>> by_fn_ = std::vector<std::unique_ptr<Handler>>(128);
};

// What an ImageLoader makes of a handler image (docs/protocol.md "Handler images").
struct LoadedImage {
  std::unique_ptr<Handler> handler;  // null if refused
  std::uint8_t mrsp_error = 0;       // why (an MRSP error code)
  std::string message;
};
// Builds the handlers of an image the host installed (the Naa gives one that runs them on its
// HPU cores, hpu_handler.hpp).
using ImageLoader = std::function<LoadedImage(std::span<const std::uint8_t> image)>;

// Provides StreamHandlers (from Transport), HandlerInstall (from MrspHandler) and
// ConnectionResources (to CmAgent: per-call state).
class HandlerEngine : public sc_core::sc_module,
                      public StreamHandlers,
                      public HandlerInstall,
                      public ConnectionResources {
 public:
  SC_HAS_PROCESS(HandlerEngine);
  // `kernels`: the registry the KernelEngine runs (model or RTL), for handlers that compute
  // per packet with the kernel of their function code. Must outlive the engine.
  HandlerEngine(sc_core::sc_module_name name, ModelContext& ctx, HandlerRegistry registry,
                const KernelRegistry& kernels);

  sc_core::sc_port<RegionDirectory> directory{"directory"};  // MrspHandler: regions, descriptor
  sc_core::sc_port<SendQueue> sends{"sends"};                // Transport: replies, the result
  MemoryPort mem;                                            // Memory (TLM): deposits, write-back

  [[nodiscard]] bool streams(const Qp& qp, std::uint64_t va) const override;
  [[nodiscard]] bool can_take(Qp& qp, std::size_t len) override;
  void take(Qp& qp, std::uint64_t va, std::span<const std::uint8_t> payload,
            bool message_start) override;
  [[nodiscard]] bool owns_calls(const Qp& qp) const override;
  void complete(Qp& qp, std::uint32_t imm) override;
  void release(Qp& qp) override;
  [[nodiscard]] std::uint8_t install(Qp& qp, std::uint8_t fn, std::uint64_t address,
                                     std::uint32_t image_bytes, std::uint32_t state_bytes,
                                     std::uint64_t state_limit) override;
  void uninstall(Qp& qp) override;
  // Without a loader every install is refused with 0x07 (bad image).
  void set_image_loader(ImageLoader loader) { loader_ = std::move(loader); }
  void report(std::ostream& os) const;
  // Streaming calls ended (answered or not), and the simulated time (ps) the last one ended: the
  // broadcast's "holds the message" (fabric/broadcast.hpp).
  [[nodiscard]] std::uint64_t calls_ended() const { return calls_ended_; }
  [[nodiscard]] std::uint64_t last_call_end_ps() const { return last_call_end_ps_; }

 private:
  // A connection's installed image (per QP index; valid for the QP generation it was made in).
  struct Installed {
    std::uint32_t generation = 0;
    std::shared_ptr<const Handler> handler;
    std::vector<std::uint8_t> state;  // each call's initial handler state
  };
  // The connection's installed handlers if it has an image, else the built-in or --handler set
  // of the function code (null if none). Shared: an uninstall while one runs must not free it.
  [[nodiscard]] std::shared_ptr<const Handler> handler_of(const Qp& qp, std::uint8_t fn) const;
  struct Descriptor {
    std::uint8_t fn = 0;
    std::uint64_t arg = 0;
    std::uint64_t state_size = 0;
  };
  enum class TaskKind : std::uint8_t { payload, completion };
  struct Task {
    TaskKind kind = TaskKind::payload;
    std::uint32_t qp_index = 0;
    std::uint32_t generation = 0;
    std::uint64_t va = 0;
    bool message_start = false;
    // Header tasks of the call taken before this one (a header task: its own number). A payload
    // waits only for those, which are ahead of it in the queue: waiting for a later message's
    // header, queued behind it, could fill every HPU with waiting payloads (a deadlock).
    std::uint32_t headers_before = 0;
    std::uint32_t imm = 0;
    std::vector<std::uint8_t> data;
    sc_core::sc_time handed_over;
  };
  // What the header handler decided for its message (seed B.3).
  enum class MessageFate : std::uint8_t { process, drop, proceed };
  // One call in progress on a connection (reset after its completion).
  struct CallState {
    std::uint32_t generation = 0;
    std::uint32_t outstanding = 0;  // payload tasks queued or running
    std::uint32_t headers_taken = 0;
    std::set<std::uint32_t> headers_pending;  // numbers of the header tasks not yet ended
    bool flow_control = false;
    std::uint64_t dropped = 0, bytes = 0;
    std::uint32_t rc = 0;                                  // first error
    std::set<std::pair<std::size_t, std::uint64_t>> seen;  // (region, offset): duplicates
    std::map<std::uint32_t, MessageFate> fates;            // by message number, if not process
    std::vector<std::uint8_t> state;                       // HPU memory of the handler
    std::uint32_t peers_used = 0;  // bit k: peer k got a put (its message ends with the call)
    std::unique_ptr<sc_core::sc_event> changed = std::make_unique<sc_core::sc_event>();
  };
  [[nodiscard]] std::optional<Descriptor> descriptor(const Qp& qp) const;
  void hpu(std::uint32_t index);
  void run_payload(std::uint32_t hpu, Task& t);
  void run_completion(std::uint32_t hpu, Task& t);
  // The header handler of t's message; what becomes of the message (a failure fails the call).
  MessageFate run_header(HandlerContext& hc, CallState& call, Qp& qp, const Task& t,
                         const Handler& h, const HeaderArgs& args,
                         const std::vector<Region>& regions, CycleMeter& meter);
  // An invocation's context: the descriptor's argument, the call's state and regions, the
  // connection's counters, DMA reads timed on `meter`.
  HandlerContext context(std::uint32_t hpu_index, std::uint32_t qp_index, std::uint32_t generation,
                         const Descriptor& d, const std::vector<Region>& regions, CallState& call,
                         CycleMeter& meter);
  // Checks and applies an invocation's actions; false (nothing applied) on an access outside.
  bool apply(Qp& qp, std::uint32_t generation, const std::vector<Region>& regions,
             std::vector<HandlerContext::Action>& actions, bool with_imm, std::uint32_t imm,
             CycleMeter& meter);
  // Peers (handler_engine_peer.cpp): a peer action's check, its WRITE on the peer QP, and the
  // end of the call's message on every peer that got a put.
  [[nodiscard]] bool peer_action_ok(const Qp& qp, const std::vector<Region>& regions,
                                    const HandlerContext::Action& a) const;
  void post_peer_put(Qp& qp, std::uint32_t generation, const std::vector<Region>& regions,
                     HandlerContext::Action& a, CycleMeter& meter);
  void end_peer_messages(Qp& qp, CallState& call);
  HandlerRun watchdog(HandlerRun run, CallState& call);
  // HandlerContext::read over the call's regions, timed on `meter`.
  [[nodiscard]] std::function<bool(std::size_t, std::uint64_t, std::span<std::uint8_t>)> dma_reader(
      const std::vector<Region>& regions, CycleMeter& meter);
  void fail(CallState& call, std::uint32_t rc);
  CallState& call_of(std::uint32_t qp_index, std::uint32_t generation);
  [[nodiscard]] std::uint64_t buffered_bytes() const;
  // Deposits are posted DMA writes (seed B.6 nonblocking DMA): the HPU goes on, one DMA process
  // writes them to Memory in order. A write-back waits until every earlier deposit is in memory.
  struct Deposit {
    std::uint64_t addr = 0;
    std::vector<std::uint8_t> bytes;
    std::uint32_t qp_index = 0, generation = 0;  // a connection that ended writes nothing more
  };
  void dma_thread();
  void wait_deposits();
  // Until the first `count` deposits ever posted are in memory (not those posted since).
  void wait_deposits_through(std::uint64_t count);
  std::deque<Deposit> dma_;
  std::uint64_t deposits_pushed_ = 0, deposits_done_ = 0;
  sc_core::sc_event deposit_done_;
  bool dma_busy_ = false;
  sc_core::sc_event dma_work_, dma_idle_;
  std::unique_ptr<CycleMeter> dma_meter_;

  ModelContext& ctx_;
  HandlerRegistry registry_;
  ImageLoader loader_;
  std::vector<Installed> installed_;  // per QP index
  // Per QP index: owns_calls()'s answer for the connection's regions, until uninstall() says
  // they change (handler_engine.cpp; issue 31).
  struct StreamSummary {
    bool valid = false;
    std::uint32_t generation = 0;
    bool owns_calls = false;
  };
  mutable std::vector<StreamSummary> stream_summary_;
  [[nodiscard]] bool regions_own_calls(const Qp& qp) const;
  // The connection's counters (seed B.6), per QP index, for the generation they were made in.
  struct Counters {
    std::uint32_t generation = 0;
    std::array<HandlerContext::CtEvent, HandlerContext::kCounters> events{};
  };
  std::vector<Counters> counters_;
  std::unique_ptr<CycleMeter> install_meter_;
  std::uint64_t images_installed_ = 0, images_refused_ = 0;
  const KernelRegistry& kernels_;
  std::deque<Task> queue_;
  sc_core::sc_event work_;
  std::uint32_t idle_hpus_ = 0;
  std::uint64_t queued_bytes_ = 0;
  std::vector<CallState> calls_;                     // per QP index
  std::vector<std::unique_ptr<CycleMeter>> meters_;  // per HPU
  std::vector<std::uint8_t> scratch_;
  std::uint64_t headers_ = 0, payloads_ = 0, completions_ = 0, duplicates_ = 0, rnr_ = 0, held_ = 0,
                dropped_packets_ = 0, segv_ = 0, failed_ = 0, timeouts_ = 0, memory_exceeded_ = 0,
                dma_reads_ = 0, replies_ = 0, deposits_ = 0, handler_cycles_ = 0,
                flow_control_calls_ = 0, completions_saw_flow_control_ = 0, mismatched_fn_ = 0,
                dropped_messages_ = 0, proceeded_messages_ = 0, proceeded_packets_ = 0,
                unordered_ = 0;
  std::uint64_t peer_puts_ = 0, peer_bytes_ = 0, peer_ends_ = 0, unanswered_calls_ = 0,
                peer_blocked_ = 0, peer_max_outstanding_ = 0;
  std::uint64_t calls_ended_ = 0, last_call_end_ps_ = 0;
  std::array<std::uint64_t, 256> kernel_runs_{};  // per function code (HandlerContext)
  // Simulated time of the first payload handler's start and of its packet's hand-over by the
  // Transport (item "starts within 2 cycles"), and the largest such delay with an HPU idle.
  std::uint64_t first_start_ps_ = 0, first_handover_ps_ = 0, max_idle_start_delay_cycles_ = 0;
  bool first_seen_ = false;
};

}  // namespace naa::sim
