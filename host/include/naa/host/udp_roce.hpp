// UdpRoce: the default Transport backend, a user-space RoCEv2 endpoint on a UDP socket
// (Boost.Asio).
//
// One endpoint owns one IPv4 address and UDP port 4791 on it, like a RoCEv2 NIC port (PROTOCOL.md
// 6). It speaks the IB CM active side (PROTOCOL.md 4), runs RC requester and responder per
// PROTOCOL.md 3, protects host memory with its own MR table (NAK 0x62 for bad remote accesses),
// computes the ICRC of every packet it sends and verifies the ICRC of every packet it receives
// (recovering the sender's IPv4 ID, PROTOCOL.md 2).
//
// Sockets (PROTOCOL.md 1): a receive socket bound to <local-ip>:4791, not connected, with
// IP_MTU_DISCOVER = IP_PMTUDISC_DO (Linux then sends IPv4 ID 0 with DF, which our ICRC assumes),
// IP_PKTINFO and IP_RECVERR; per QP a send-only socket bound to <local-ip>:<roce_udp_source_port(
// qpn)> with the same options, falling back to the 4791 socket (and 4791 in the ICRC) if that port
// is taken. Every datagram goes to port 4791 of the peer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "naa/host/ipv4.hpp"
#include "naa/host/transport.hpp"
#include "naa/impair/fault_spec.hpp"

namespace naa::host {

// Who makes progress (receives packets, runs timers): the caller inside poll/wait calls (manual)
// or a background thread owned by the endpoint (automatic), as in libfabric.
enum class Progress : std::uint8_t { manual, automatic };

// Network fault injection for one direction of the endpoint (docs/reliability.md): the shared
// impairment model of naa::impair (docs/adr/0003), with naa-sim's syntax and seeded decisions.
// Probabilities per datagram. A reordered datagram is overtaken by the next `reorder_delay`
// datagrams in its direction (or released after 1 ms); a corrupted one has one bit flipped, so the
// receiver's ICRC check drops it. Counted in TransportStats::fault_*.
using FaultOptions = impair::FaultSpec;

// Parses "loss=P,dup=P,reorder=P,reorder-delay=N,corrupt=P" (any subset; "none" or "" = no
// fault). False, with the reason in *error, on a bad spec.
[[nodiscard]] inline bool parse_fault_options(std::string_view text, FaultOptions& out,
                                              std::string* error = nullptr) {
  return impair::parse_fault_spec(text, out, error);
}

// ---- Co-simulation seam (docs/adr/0004) ----
// The endpoint's datagram I/O and clock, replaceable so that an in-process co-simulation
// (cosim/) can carry its packets over an in-memory link and run its timers on simulated time.
// Unset (the default): UDP sockets and std::chrono::steady_clock.
class DatagramLink {
 public:
  virtual ~DatagramLink() = default;
  // One datagram (BTH .. ICRC, ICRC written) leaves the endpoint.
  virtual void send(std::span<const std::uint8_t> datagram, std::uint32_t src_ip,
                    std::uint16_t src_port, std::uint32_t dst_ip) = 0;
};
class EndpointClock {
 public:
  virtual ~EndpointClock() = default;
  [[nodiscard]] virtual std::chrono::steady_clock::time_point now() = 0;
  // The endpoint has nothing to do before `until`: let time pass up to it, handing arriving
  // datagrams to deliver_udp_roce_datagram(); may return early once one was delivered. Called
  // from the endpoint's manual progress, never with its lock held.
  virtual void wait_until(std::chrono::steady_clock::time_point until) = 0;
};

enum class RetransmitTimers : std::uint8_t { automatic, measured, constants };
enum class IrnCoalescedAcks : std::uint8_t { automatic, on, off };

struct UdpRoceOptions {
  // Host-order IPv4. Empty: the first 127.0.0.x (x >= 3) whose port 4791 is free.
  std::optional<std::uint32_t> local_ip;
  Progress progress = Progress::automatic;
  // Automatic progress: a caller waiting for a completion (wait_cq) first checks the socket
  // without sleeping for up to this many microseconds (yielding the core between checks) before
  // it blocks; 0 = block at once. A peer's answer that comes within it costs no wake-up (issue 19;
  // docs/host/README.md "Progress"). Counted in TransportStats::progress_polls / _poll_hits.
  std::uint32_t poll_us = 50;
  // Capture every datagram in and out to this pcap file (received frames carry the recovered IPv4
  // ID, so their ICRCs verify in Wireshark). Empty: no capture.
  std::string pcap_path;
  // Receive buffer asked for the 4791 socket (SO_RCVBUFFORCE, then SO_RCVBUF).
  int receive_buffer_bytes = 16 << 20;
  // First QPN handed out (Linux starts at 0x11).
  std::uint32_t first_qpn = 0x11;
  // Share local_ip (required) with other processes' endpoints that set this too, as processes
  // share a RoCE NIC's address (docs/adr/0006): all bind <local_ip>:4791 with SO_REUSEPORT and
  // a classic BPF program steers each datagram to the endpoint owning its destination QPN (CM
  // MADs by comm ID, REQs by listened port). The endpoint takes a slot s (1..255) and hands out
  // QPNs s << 16 | n (first_qpn is ignored) and comm IDs with s in the top byte; listened ports
  // are unique across the address. not_supported (with why) where the kernel lacks
  // SO_ATTACH_REUSEPORT_CBPF. Off: the endpoint holds <local_ip>:4791 alone, as before.
  bool share_address = false;
  // Seed for comm IDs, transaction IDs and starting PSNs; 0 = from std::random_device.
  std::uint64_t seed = 0;
  // Fault injection on received / sent datagrams, decided by a generator seeded with fault_seed
  // (deterministic for a given seed and datagram sequence).
  FaultOptions fault_rx;
  FaultOptions fault_tx;
  std::uint64_t fault_seed = 1;
  // Co-simulation (above): with `link` the endpoint opens no socket (local_ip, default
  // 127.0.0.3, is only its address on the wire) and makes progress manually.
  std::shared_ptr<DatagramLink> link;
  std::shared_ptr<EndpointClock> clock;
  // IRN (docs/protocol.md "IRN"): offer selective repeat in every CM REQ (a capability block
  // after the rdma_cm header), on by default. A peer that answers without the block (Linux rxe,
  // the NAAICE reference, any standard RoCEv2 stack) gets go-back-N, exactly as with irn = false.
  // A connection whose user private data is longer than 40 bytes (56 minus the block) is offered
  // no block: go-back-N, the user's bytes as given. false: never offer (go-back-N everywhere).
  bool irn = true;
  // The BDP cap offered (packets, 1..4096): the bitmap size, the most PSNs in flight. 0: from
  // the path, as the IRN paper sizes it (link rate x RTT): irn_link_gbps x the round trip
  // (irn_rtt_us if set, else the one this endpoint last measured to the same peer, its CM
  // REQ -> REP) / path MTU, rounded up, at most 4096; 128 while no round trip is known.
  std::uint16_t irn_bdp_cap = 128;
  double irn_link_gbps = 100;
  std::uint32_t irn_rtt_us = 0;
  // IRN's two retransmit timeouts (exponents e of 4.096 us x 2^e). RTO_high is the connection's
  // local ACK timeout; RTO_low (used while at most irn_low_threshold packets are in flight, so a
  // lost tail is recovered early) is irn_rto_low, or RTO_high - 2 when 0.
  std::uint8_t irn_rto_low = 0;
  std::uint8_t irn_low_threshold = 3;  // N of the IRN paper
  // Offer coalesced IRN ACKs (capability flag bit 1, docs/protocol.md 8.2): both responders then
  // answer up to 4 in-order packets with one ACK. automatic: on the wall clock, where each ACK is
  // a system call on both sides; not with a `clock` (the co-simulation keeps the paper's ACK per
  // packet). The passive side (udp_roce_listen) grants an offer by the same rule (docs/protocol.md
  // 8.1).
  IrnCoalescedAcks irn_coalesced_acks = IrnCoalescedAcks::automatic;
  // Go-back-N requester: AckReq on every Nth packet and on each message's last (PROTOCOL.md 3;
  // 1..64, others clamped). 64 keeps ACKs, each a system call on the wall clock, rare; 1 asks
  // for an ACK per packet, as RoCE NICs can ("RoCE NICs already support per-packet ACKs", the
  // IRN paper section 5) and as the fabric's paper-scale comparison runs it (docs/fabric.md).
  std::uint32_t ack_request_interval = 64;
  // Retransmit timers (docs/reliability.md "Retransmit timers"). measured: go-back-N's timeout
  // and IRN's RTO_low / RTO_high follow the measured round trip (RFC 6298: smoothed RTT + 4 x
  // its variation, the CM REQ -> REP as a first estimate that may lengthen but not shorten the
  // constant until the data path gives a sample; RTO_high = 2 x RTO_low), never below
  // timer_floor_us (go-back-N: nor below its local ACK timeout, as a spurious expiry resends a
  // window) nor above max(1 s, the configured local ACK timeout / negotiated RTO_high),
  // so longer than the constants on a path slower than they assume. constants:
  // the local ACK timeout and the negotiated RTO_low / RTO_high as they are (IBTA, the IRN
  // paper). automatic (default): measured on the wall clock, constants with a `clock` (the
  // co-simulation keeps the paper's constants in simulated time).
  RetransmitTimers timers = RetransmitTimers::automatic;
  std::uint32_t timer_floor_us = 2000;
  // The fabric (docs/fabric.md "IRN comparison"), none of them on the wire and all off by default:
  // - irn_rto_low_ns / irn_rto_high_ns > 0: IRN's RTO_low / RTO_high as these durations instead
  //   of the negotiated exponents (4.096 us x 2^e cannot carry the IRN paper's 100 / 320 us);
  //   with constant timers only (a `clock`), local to this endpoint's requesters.
  // - gbn_max_unacked_psns > 0: the go-back-N requester's window (most unacknowledged PSNs;
  //   0: PROTOCOL.md 3's 128). The IRN paper's RoCE has no such cap (BDP-FC is IRN's).
  // - wire_timers: an IRN requester's retransmit timer runs only while one of its packets has
  //   left the NIC and is unacknowledged, as a NIC's does: the link reports each departure with
  //   udp_roce_packet_on_wire(); a packet still waiting in the NIC does not time out.
  std::uint32_t irn_rto_low_ns = 0;
  std::uint32_t irn_rto_high_ns = 0;
  std::uint32_t gbn_max_unacked_psns = 0;
  bool wire_timers = false;
};

// Opens the endpoint. On failure returns nullptr and sets ec (address_in_use, no_free_address,
// socket_error) and, if given, a one-line detail.
[[nodiscard]] std::shared_ptr<Transport> open_udp_roce(const UdpRoceOptions& options,
                                                       std::error_code& ec,
                                                       std::string* detail = nullptr);

// Changes the fault injection of a running UdpRoce endpoint (e.g. a link that goes dead mid-call).
// False if `transport` is not a UdpRoce endpoint.
bool set_udp_roce_faults(Transport& transport, const FaultOptions& rx, const FaultOptions& tx);

// For fuzzers and tests: processes `datagram` (BTH .. ICRC) as if it had arrived on the endpoint's
// 4791 socket from src_ip:src_port, on the caller's thread (fault injection does not apply). False
// if `transport` is not a UdpRoce endpoint.
// Co-simulation: `datagram` arrives at an endpoint opened with a DatagramLink from src_ip:src_port,
// through its receive path (fault injection applies), at its clock's now. False if `transport`
// is not a UdpRoce endpoint.
bool deliver_udp_roce_datagram(Transport& transport, std::span<const std::uint8_t> datagram,
                               std::uint32_t src_ip, std::uint16_t src_port);

// Co-simulation with UdpRoceOptions::wire_timers: `datagram`, which the endpoint sent to
// dst_ip, has just left the NIC for the wire. True when this armed a retransmit timer (the
// caller's loop should then ask the endpoint for its next deadline). False otherwise, or if
// `transport` is not a UdpRoce endpoint.
bool udp_roce_packet_on_wire(Transport& transport, std::span<const std::uint8_t> datagram,
                             std::uint32_t dst_ip);

bool inject_udp_roce_datagram(Transport& transport, std::span<const std::uint8_t> datagram,
                              std::uint32_t src_ip, std::uint16_t src_port);

}  // namespace naa::host
