// Parameters of the simulated NAA (ARCHITECTURE.md "The NAA model"; PROTOCOL.md 7 for the limits).
// Every block reads its timing from here, so one place documents the cost model: a stage that
// handles N bytes is busy for ceil(N / width) cycles plus its fixed latency (docs/sim/timing.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "naa/impair/fault_spec.hpp"

namespace naa::sim {

class BlockFactory;  // block_factory.hpp: RTL / lockstep implementations of blocks

// A sPIN handler image as the command line named it (naa-sim --handler) and its bytes.
struct HandlerImageFile {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

// Network fault injection at NetPort, one direction (docs/reliability.md): the impairment model
// shared with the host endpoint (naa::impair, docs/adr/0003). Probabilities per datagram, drawn
// from a generator seeded by --seed (or a seed drawn from the OS random source), so a run is
// reproducible for a given seed and datagram sequence. A reordered datagram is overtaken by the
// next `reorder_delay` datagrams (or released after NetPort::kReorderHold of simulated time if
// fewer come).
using FaultSpec = impair::FaultSpec;

struct SimConfig {
  // ---- clock and datapath ----
  double clock_mhz = 250.0;  // NAA core clock
  std::uint32_t width = 64;  // datapath bytes per cycle (W)

  // ---- resources (PROTOCOL.md 7) ----
  std::uint64_t mem_size = 4ULL << 30;  // on-board memory, sparse
  std::uint32_t qps = 16;               // RC QPs
  std::uint32_t mr_entries = 32;        // MR table entries (global)
  std::uint32_t mtu_max = 4096;         // largest path MTU accepted in a CM REQ
  std::uint8_t responder_resources = 16;
  std::uint32_t call_queue_depth = 8;  // WRITE_WITH_IMM receives per QP before RNR
  std::uint8_t rnr_timer_code = 1;     // RNR NAK timer field we send (IBTA table 45: 0.01 ms)
  // IRN (docs/protocol.md "IRN"): accept a host's capability block (--irn on|off) and the largest
  // BDP cap (bitmap size, packets) we grant (--irn-bdp-cap).
  bool irn = true;
  std::uint16_t irn_bdp_cap = 128;

  // ---- service ----
  std::uint16_t cm_port = 12345;  // rdma_cm port: service ID 0x0000000001060000 | port
  // --seed: rkey tags, comm IDs, starting PSNs and fault decisions from a generator seeded with
  // it, for reproducible runs. Unset (the default): secrets come from the OS random source and
  // the fault decisions from a seed drawn from it (docs/sim/naa-sim.md "Secrets and --seed").
  std::optional<std::uint64_t> seed;
  FaultSpec fault_rx;  // --fault-rx: datagrams arriving at NetPort
  FaultSpec fault_tx;  // --fault-tx: datagrams NetPort sends

  // ---- link (docs/sim/net_port.md "Link model") ----
  double link_gbps = 100.0;           // --link-gbps: line rate each way; 0 = no link model
  std::uint64_t link_latency_ns = 0;  // --link-latency-ns: one-way propagation
  // --link-hold-us: wall time the runner waits for the next datagram of a stream before letting
  // simulated time pass the link's next possible arrival (docs/sim/timing.md "Link model").
  std::uint64_t link_hold_us = 20'000;

  // ---- block implementations (docs/sim/rtl.md) ----
  // Other implementations of the blocks that exist as RTL (--mr-table, --kernels: model, RTL or
  // lockstep), supplied by the program; null = the C++ models.
  std::shared_ptr<BlockFactory> blocks;

  // ---- fixed latencies in cycles (documented per block in docs/sim/) ----
  std::uint32_t netport_latency = 8;    // MAC/PCS + UDP offload
  std::uint32_t rxpipe_latency = 4;     // header parse + ICRC
  std::uint32_t cm_latency = 64;        // CM agent (a soft core in hardware)
  std::uint32_t transport_latency = 4;  // per-packet RC state lookup/update
  std::uint32_t mr_latency = 1;         // direct-indexed table
  std::uint32_t mrsp_latency = 32;      // per MRSP message, plus per entry below
  std::uint32_t mrsp_entry_latency = 4;
  std::uint32_t kernel_latency = 32;  // dispatch overhead per call
  // Watchdog: a kernel whose cost exceeds this many cycles is stopped there, its results are
  // discarded (regions keep their contents) and the call answers 0x02 "kernel timeout"
  // (PROTOCOL.md 5.2). 0 = no limit.
  std::uint64_t kernel_timeout_cycles = 0;
  // Idle liveness (docs/sim/transport.md "Idle liveness"): a connected QP that has heard nothing
  // from its peer for this long sends it a zero-length RDMA WRITE with AckReq; if the retries run
  // out the QP goes to error and its regions and MR entries are released. 0 = never.
  std::uint64_t idle_timeout_ms = 60'000;
  std::uint32_t mem_latency = 20;    // DDR access latency
  std::uint32_t mem_width = 64;      // DDR bytes per cycle
  std::uint32_t txpipe_latency = 4;  // header build + ICRC

  // ---- streaming handlers (docs/sim/handler_engine.md, seed 004 sPIN) ----
  std::uint32_t hpus = 8;              // --hpus: handler processing units
  std::uint64_t hpu_mem = 256 * 1024;  // --hpu-mem: handler state + packets waiting for an HPU
  std::uint32_t hpu_width = 8;         // --hpu-width: bytes per cycle of an HPU's cost models
  std::uint64_t hpu_max_cycles = 0;    // --hpu-max-cycles: per invocation, 0 = the watchdog only
  // --builtin-handlers: the built-in handlers as spin/builtins' C images on the HPU cores (true,
  // when builtin_handler_images() has them) or as the C++ oracles of handlers.cpp (false).
  bool builtin_handlers_in_c = true;
  // --handler: sPIN handler images (naa/spin.h) run on the HPU cores (docs/spin.md), in order.
  std::vector<HandlerImageFile> handler_images;

  [[nodiscard]] sc_core::sc_time cycle() const {
    return sc_core::sc_time(1000.0 / clock_mhz, sc_core::SC_NS);
  }
  // Cycles a stage of `latency` cycles is busy for `bytes` bytes at `w` bytes per cycle.
  [[nodiscard]] static std::uint64_t stage_cycles(std::uint64_t bytes, std::uint32_t w,
                                                  std::uint32_t latency) {
    return (bytes + w - 1) / w + latency;
  }
};

}  // namespace naa::sim
