// Verbs: the Transport backend for real RDMA devices (a RoCE NIC, or Linux Soft-RoCE), on
// rdma-core's libibverbs and librdmacm.
//
// The same Transport interface as UdpRoce, one verb per call: register_memory is ibv_reg_mr,
// connect is rdma_resolve_addr + rdma_resolve_route + rdma_create_qp + rdma_connect (the kernel's
// IB CM then speaks PROTOCOL.md 4 on the wire), post_send/post_recv are
// ibv_post_send/ibv_post_recv, poll_cq is ibv_poll_cq and wait_cq arms the CQ (ibv_req_notify_cq)
// and sleeps on its completion channel. The device, not this library, runs RC (PROTOCOL.md 3) and
// computes the ICRC.
//
// Built when Debian's libibverbs-dev and librdmacm-dev were found (CMake option NAA_WITH_VERBS);
// otherwise open_verbs() answers Errc::not_supported and verbs_built() is false.
//
// Differences from UdpRoce that callers can see (docs/real-nic.md):
// - The device is chosen by the local address (or, without one, by the route to the NAA); memory
//   registered on the transport can be used only with QPs on that device.
// - The path MTU is the route's (the port's active MTU, from the netdev MTU: 1024 at Ethernet MTU
//   1500); ConnectParams::path_mtu is an upper bound: connect() fails with invalid_argument if the
//   route's MTU is larger, because rdma_cm gives no way to ask for less.
// - remote_bytes_written() counts only received SENDs: RDMA WRITEs into host memory are invisible
//   to verbs (observes_remote_writes() is false), so Session's CallResult::bytes_received is the
//   DMA length of the NAA's reply WRITE_WITH_IMM (the last output region's write), as the NAAICE
//   library reports it.
// - stats() mixes per-transport counts (bytes posted and completed) with the device's port
//   counters (hw_counters, rxe names), which are device-wide deltas since open_verbs().
// - Progress is made by the device; Progress::manual and progress() change nothing, and the
//   completion callback runs inside wait_cq when the completion channel fires.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "naa/host/transport.hpp"

namespace naa::host {

struct VerbsOptions {
  // Host-order IPv4 of the local RDMA port (its IPv4-mapped GID is the source GID). Empty: the
  // source address of the route to remote_ip.
  std::optional<std::uint32_t> local_ip;
  // Host-order IPv4 of the NAA; used to pick the device when local_ip is empty.
  std::optional<std::uint32_t> remote_ip;
  // Address and route resolution (rdma_resolve_addr / rdma_resolve_route), each.
  std::chrono::milliseconds resolve_timeout{2000};
  // Work queue depths per QP (clamped to the device's limits); the CQ holds both.
  std::uint32_t max_send_wr = 512;
  std::uint32_t max_recv_wr = 256;
  // Arm the CQ for solicited completions only (ibv_req_notify_cq(cq, 1)), as the NAAICE host
  // library does: wait_cq then wakes only for receives whose message had the SE bit (and for
  // errors), which makes a missing SE from the peer visible as slow calls.
  bool solicited_only = false;
};

// True if this build has the Verbs backend.
[[nodiscard]] bool verbs_built() noexcept;

// Opens the device that owns the local address (or routes to the NAA) and a protection domain on
// it. On failure returns nullptr and sets ec (not_supported: no Verbs in this build or no RDMA
// device with that address; naa_unreachable: no route; invalid_argument; socket_error: a verbs
// call failed, the detail names it) and, if given, a one-line detail.
[[nodiscard]] std::shared_ptr<Transport> open_verbs(const VerbsOptions& options,
                                                    std::error_code& ec,
                                                    std::string* detail = nullptr);

// The backends a program can choose at run time (naa-call --transport, NAA_TRANSPORT for the C
// API).
enum class TransportKind : std::uint8_t { udp, verbs };

[[nodiscard]] constexpr std::optional<TransportKind> parse_transport_kind(
    std::string_view text) noexcept {
  if (text == "udp" || text == "udp-roce") return TransportKind::udp;
  if (text == "verbs" || text == "rdma") return TransportKind::verbs;
  return std::nullopt;
}

}  // namespace naa::host
