// The verbs-shaped transport interface (ARCHITECTURE.md "The host library").
//
// It mirrors the part of libibverbs/librdmacm an NAA host needs, so that a Verbs backend can
// implement it one call per verb: register memory (ibv_reg_mr), connect/disconnect (rdma_connect /
// rdma_disconnect, the IB CM active side), post send / RDMA WRITE / WRITE_WITH_IMM / READ
// (ibv_post_send), post receive (ibv_post_recv), poll the completion queue (ibv_poll_cq) or wait on
// it (ibv_get_cq_event). One completion queue per queue pair (send and receive completions share
// it), as the NAAICE host library uses it.
//
// Errors follow rdma-core: a work request the backend cannot accept is refused at post time with
// an error code; everything that happens on the wire comes back as a WorkCompletion status;
// operations a backend lacks answer Errc::not_supported instead of crashing.
//
// Thread safety: every member function of Transport and QueuePair may be called from any thread
// concurrently, unless its comment says otherwise. Memory named by a posted work request must stay
// valid (and, for sends, unchanged) until its completion, as with verbs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "naa/host/error.hpp"

namespace naa::host {

// Memory access rights (ibv_access_flags). Local read is always allowed.
enum class Access : std::uint32_t {
  none = 0,
  local_write = 1U << 0,
  remote_write = 1U << 1,
  remote_read = 1U << 2,
};
[[nodiscard]] constexpr Access operator|(Access a, Access b) noexcept {
  return static_cast<Access>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
[[nodiscard]] constexpr bool has_access(Access set, Access wanted) noexcept {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(wanted)) ==
         static_cast<std::uint32_t>(wanted);
}

// A registered memory region (ibv_mr). lkey names it in local work requests, rkey in remote ones.
struct MemoryRegion {
  void* addr = nullptr;
  std::size_t length = 0;
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  Access access = Access::none;
};

// One scatter/gather element (ibv_sge). length 0 means "no data".
struct Sge {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  std::uint32_t lkey = 0;
};

enum class WrOpcode : std::uint8_t {
  send,
  send_with_imm,
  rdma_write,
  rdma_write_with_imm,
  rdma_read
};

// ibv_send_wr with one SGE.
struct SendWr {
  std::uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::send;
  Sge sge{};
  std::uint64_t remote_addr = 0;  // RDMA WRITE / READ
  std::uint32_t rkey = 0;         // RDMA WRITE / READ
  std::uint32_t imm = 0;   // the 32-bit ImmDt value (big-endian on the wire), *_with_imm only
  bool signaled = true;    // produce a completion on success (errors always complete)
  bool solicited = false;  // BTH SE on the last packet
};

// ibv_recv_wr with one SGE.
struct RecvWr {
  std::uint64_t wr_id = 0;
  Sge sge{};
};

enum class WcOpcode : std::uint8_t { send, rdma_write, rdma_read, recv, recv_rdma_with_imm };

// ibv_wc. status is empty on success, otherwise an naa::host::Errc.
struct WorkCompletion {
  std::uint64_t wr_id = 0;
  std::error_code status;
  WcOpcode opcode = WcOpcode::send;
  std::uint32_t byte_len = 0;  // receives: message length (WRITE_WITH_IMM: its DMA length)
  std::optional<std::uint32_t> imm;
  bool solicited = false;  // the message had the SE bit
  std::uint32_t qp_num = 0;
};

// What the IB CM REQ carries (PROTOCOL.md 4 and 8). Defaults are what naa-sim expects on loopback.
struct ConnectParams {
  std::uint32_t remote_ip = 0;  // host-order IPv4 of the NAA
  std::uint16_t cm_port = 12345;
  std::chrono::milliseconds timeout{5000};  // the whole connect, REQ retries included
  std::uint32_t path_mtu = 4096;            // 256..4096
  std::uint8_t local_ack_timeout = 15;      // 4.096 us x 2^15 = 134 ms; 0 = never retransmit
  std::uint8_t retry_count = 7;             // 0..7
  std::uint8_t rnr_retry_count = 7;         // 0..7, 7 = infinite
  std::uint8_t responder_resources = 16;    // RDMA READs the NAA may have outstanding on us
  std::uint8_t initiator_depth = 16;        // RDMA READs we may have outstanding on the NAA
  std::vector<std::uint8_t> private_data;   // user part after the rdma_cm header (<= 56 bytes)
  // UdpRoce: offer IRN on this connection if the endpoint does (UdpRoceOptions::irn); false:
  // go-back-N whatever the endpoint's default (docs/protocol.md 8.1).
  bool irn = true;
  // Out, if set (UdpRoce): the private data of the REP that accepted or the REJ that refused.
  std::vector<std::uint8_t>* reply_private_data = nullptr;
};

// One RC connection (ibv_qp + its ibv_cq + the rdma_cm_id).
class QueuePair {
 public:
  QueuePair() = default;
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;
  // Destroying a connected QP disconnects it (DREQ) without waiting for the DREP.
  virtual ~QueuePair() = default;

  [[nodiscard]] virtual std::uint32_t qp_num() const noexcept = 0;
  [[nodiscard]] virtual std::uint32_t remote_qp_num() const noexcept = 0;
  [[nodiscard]] virtual std::uint32_t path_mtu() const noexcept = 0;
  // Empty while the QP works; the error that moved it to the error state afterwards.
  [[nodiscard]] virtual std::error_code error() const = 0;

  // Refused (nothing is sent, no completion) with invalid_argument, local_protection_error (the
  // SGE is outside its lkey's region or lacks local access) or not_connected.
  [[nodiscard]] virtual std::error_code post_send(const SendWr& wr) = 0;
  [[nodiscard]] virtual std::error_code post_recv(const RecvWr& wr) = 0;
  // Takes back the posted receive `wr_id` that no message has started to fill (for libfabric's
  // fi_cancel; ibverbs has none). Nothing is completed: the caller reports the cancel. Errors:
  // invalid_argument if no such receive is posted (or it already completed), busy if a
  // multi-packet message is being received into it (it will complete), not_supported where the
  // QP cannot (ibverbs; IRN, whose SENDs name their receive by position, docs/protocol.md "IRN").
  [[nodiscard]] virtual std::error_code cancel_recv(std::uint64_t wr_id) {
    (void)wr_id;
    return make_error_code(Errc::not_supported);
  }

  // Takes up to out.size() completions, oldest first; returns how many. In manual progress mode
  // this also makes progress (receives packets, runs timers) without blocking.
  [[nodiscard]] virtual std::size_t poll_cq(std::span<WorkCompletion> out) = 0;
  // Like poll_cq, but blocks until at least one completion is there or the timeout passes
  // (returns 0 then).
  [[nodiscard]] virtual std::size_t wait_cq(std::span<WorkCompletion> out,
                                            std::chrono::nanoseconds timeout) = 0;
  // Called (with no lock held, on whichever thread made the progress) whenever completions were
  // added. For automatic progress: the callback usually polls the CQ. Not thread-safe against
  // concurrent progress: set it before posting work.
  virtual void set_completion_callback(std::function<void()> callback) = 0;

  // DREQ, then waits up to `timeout` for the DREP. Outstanding work requests are flushed.
  // Idempotent.
  virtual std::error_code disconnect(std::chrono::milliseconds timeout) = 0;
};

// Drop and traffic counters of an endpoint (never silent: PROTOCOL.md 2 and ARCHITECTURE.md).
struct TransportStats {
  std::uint64_t packets_sent = 0;
  std::uint64_t packets_received = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t timeouts = 0;  // retransmit timer expiries
  // UdpRoce measured retransmit timers (UdpRoceOptions::timers; docs/reliability.md
  // "Retransmit timers"): round-trip samples taken, and the latest timeout armed from them (ns;
  // 0 = none yet: the configured constants apply).
  std::uint64_t rtt_samples = 0;
  std::uint64_t measured_timeout_ns = 0;
  std::uint64_t seq_naks_received = 0;
  std::uint64_t rnr_naks_received = 0;
  std::uint64_t seq_naks_sent = 0;
  std::uint64_t rnr_naks_sent = 0;
  std::uint64_t duplicates_received = 0;
  std::uint64_t dropped_bad_icrc = 0;
  std::uint64_t dropped_malformed = 0;     // does not decode as a RoCEv2 packet
  std::uint64_t dropped_unknown_qp = 0;    // destination QP not ours or not connected
  std::uint64_t dropped_out_of_order = 0;  // after a sequence NAK, until ePSN arrives
  std::uint64_t dropped_other = 0;
  std::uint64_t icmp_errors = 0;
  // Automatic progress (UdpRoce; docs/host/README.md "Progress"): turns at receiving and timers
  // taken by a caller waiting in wait_cq, by the progress thread, and how often a caller first had
  // to wake the thread out of its wait.
  std::uint64_t progress_caller_turns = 0, progress_thread_turns = 0;
  std::uint64_t progress_thread_interrupts = 0;
  // UdpRoceOptions::poll_us: short polls before a waiting caller sleeps, and those that found a
  // datagram.
  std::uint64_t progress_polls = 0, progress_poll_hits = 0;
  // Poll hits read at once by the waiting caller (not through the io_context).
  std::uint64_t progress_direct_reads = 0;
  // UdpRoce: system calls that sent datagrams (sendto, or sendmmsg for what one receive pass,
  // post_send or timer pass produced).
  std::uint64_t send_system_calls = 0;
  // UdpRoce: datagrams that left in UDP GSO sends (toward a loopback address: a run of equal-size
  // datagrams as one send the kernel cuts up; docs/performance-cost.md item 23).
  std::uint64_t gso_datagrams = 0;
  // UdpRoce: datagrams that arrived coalesced (UDP_GRO: a peer's GSO send on loopback handed
  // over as one buffer and cut into its datagrams here; docs/performance-cost.md item 38).
  std::uint64_t gro_datagrams = 0;
  // Injected faults (UdpRoceOptions::fault_rx / fault_tx; docs/reliability.md).
  std::uint64_t fault_rx_loss = 0, fault_rx_dup = 0, fault_rx_reorder = 0, fault_rx_corrupt = 0;
  std::uint64_t fault_tx_loss = 0, fault_tx_dup = 0, fault_tx_reorder = 0, fault_tx_corrupt = 0;
};

class Transport {
 public:
  Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  virtual ~Transport() = default;

  // A short description ("udp-roce 127.0.0.3:4791").
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual std::uint32_t local_ip() const noexcept = 0;

  // Registers [addr, addr + length). length 0 is allowed (a region nothing can be written to).
  [[nodiscard]] virtual std::error_code register_memory(void* addr, std::size_t length,
                                                        Access access, MemoryRegion& out) = 0;
  // Invalidates the lkey and rkey; remote accesses with the rkey get NAK 0x62 afterwards.
  virtual std::error_code deregister_memory(const MemoryRegion& mr) = 0;
  // Bytes peers have written into this region so far (RDMA WRITE payload and receives), so that
  // callers can report how much a call returned.
  [[nodiscard]] virtual std::uint64_t remote_bytes_written(const MemoryRegion& mr) const = 0;
  // False for backends that cannot see RDMA WRITEs into host memory (Verbs): remote_bytes_written
  // then counts received SENDs only, and Session reports the reply WRITE_WITH_IMM's DMA length
  // instead, as the NAAICE host library does.
  [[nodiscard]] virtual bool observes_remote_writes() const noexcept { return true; }

  // IB CM active side: REQ, wait for REP (retrying the REQ), RTU. On failure returns nullptr, sets
  // ec (naa_unreachable, cm_timeout, connection_refused, connection_rejected, ...) and, if given,
  // a one-line detail.
  [[nodiscard]] virtual std::unique_ptr<QueuePair> connect(const ConnectParams& params,
                                                           std::error_code& ec,
                                                           std::string* detail = nullptr) = 0;

  // Manual progress: receives and processes packets and timers for up to `timeout` (returns after
  // the first batch of work). A no-op returning at once in automatic mode.
  virtual void progress(std::chrono::nanoseconds timeout) = 0;

  [[nodiscard]] virtual TransportStats stats() const = 0;
};

}  // namespace naa::host
