// The fabric's network (docs/adr/0005-fabric.md): a deterministic discrete-event model of links,
// switches and the NICs of hosts and NAAs, on one simulated clock in picoseconds.
//
// - Links: full duplex, a rate and a propagation latency per direction; a frame occupies the wire
//   for its Ethernet wire bytes (sim/link_model.hpp's ethernet_wire_bytes) and arrives, last bit,
//   `latency` after it left.
// - Switches: one shared buffer; per egress port 8 priority queues with strict priority; drop-tail
//   (per-queue limit and the shared buffer), RED-style ECN marking of ECT frames (topology.hpp),
//   PFC 802.1Qbb pause/resume per ingress port and priority sent as real MAC Control frames, ECMP
//   over equal-cost shortest paths by a hash of the 5-tuple.
// - The NIC of every host and NAA (the queue between its endpoint and its first link, where a real
//   NIC's QP scheduler, rate limiter and pause logic sit; ADR 0005 "NIC behaviour"): round robin
//   between QPs (UDP source ports), PFC pause reaction, DCQCN reaction point (rate limiter per QP)
//   and notification point (a CNP, BTH opcode 0x81, for an ECN-marked arrival). The endpoints
//   themselves stay standard RoCEv2: host library endpoints (host::UdpRoce with a DatagramLink and
//   an EndpointClock) and NAA models.
//
// The event loop is re-entrant for blocking callers: an endpoint that waits (connect, a call)
// runs the loop from its EndpointClock::wait_until until its time or its next datagram; calls the
// loop makes into endpoints (deliveries, timers) that wait only record their next wake-up.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "naa/fabric/topology.hpp"
#include "naa/host/transport.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/sim/config.hpp"

namespace naa::sim {
class Naa;
}

namespace naa::fabric {

using Ps = std::int64_t;  // simulated time, picoseconds
inline constexpr Ps kPsPerNs = 1000;
inline constexpr Ps kPsPerUs = 1'000'000;

// DCQCN (Zhu et al., SIGCOMM 2015, section 3 and 5; the parameters its evaluation uses).
struct DcqcnConfig {
  double g = 1.0 / 256;                     // alpha gain
  double alpha_timer_us = 55;               // alpha decays every K without a CNP
  double increase_timer_us = 55;            // rate increase timer T
  std::uint64_t byte_counter = 10'000'000;  // rate increase every B bytes sent
  int fast_recovery_steps = 5;              // F
  double rai_gbps = 0.04;                   // additive increase, 40 Mb/s
  double rhai_gbps = 0.2;                   // hyper increase, 200 Mb/s
  double min_gbps = 0.1;                    // the rate never drops below
  double cnp_interval_us = 50;              // NP: at most one CNP per QP per interval (N)
};

struct NetworkConfig {
  std::uint64_t seed = 1;  // ECN marking and ECMP salts
  bool pfc = false;        // overrides topology.switches.pfc.enabled
  bool dcqcn = false;      // NICs send ECT, switches mark, NICs answer with CNPs and limit
  // With DCQCN, ACKs (ACK, NAK, IRN SACK) leave ECN-capable too (as before 2026-11-26); false:
  // Not-ECT, so only data draws CNPs (docs/fabric.md "IRN comparison", settings table).
  bool ecn_acks = true;
  DcqcnConfig dcqcn_params;
  std::string pcap_dir;    // non-empty: one pcap per port, <dir>/<node>-p<port>.pcap
  Ps queue_sample_ps = 0;  // > 0: sample switch queues that often (queue_samples())
  // Every NAA's model configuration (its seed, link model and idle timeout are the fabric's).
  sim::SimConfig naa;
};

struct NetworkStats {
  std::uint64_t frames_sent = 0;      // frames put on a wire (every hop counts: packet-hops)
  std::uint64_t bytes_sent = 0;       // their wire bytes
  std::uint64_t drops = 0;            // switch drops (buffer or queue limit)
  std::uint64_t ecn_marks = 0;        // frames marked CE
  std::uint64_t pause_frames = 0;     // PFC frames sent with quanta > 0
  std::uint64_t resume_frames = 0;    // PFC frames sent with quanta 0
  std::uint64_t pauses_to_hosts = 0;  // XOFF transitions whose upstream is a host's or NAA's NIC
  // Time ingress ports spent in XOFF (from PAUSE to RESUME), summed over ports and priorities:
  // how long PFC held upstream transmitters (congestion spreading's extent).
  std::uint64_t xoff_ns = 0;
  std::uint64_t cnps_sent = 0;
  std::uint64_t cnps_received = 0;     // CNPs a reaction point acted on
  std::uint64_t rate_cuts = 0;         // DCQCN rate decreases
  std::uint64_t max_buffer_bytes = 0;  // highest shared-buffer occupancy of any switch
  std::uint64_t unroutable = 0;        // frames for an address no endpoint has (dropped)
  std::uint64_t nic_superseded = 0;    // queued copies a retransmission replaced (nic.cpp)
};

struct QueueSample {
  Ps t = 0;
  int node = 0;                       // a switch
  std::uint64_t buffer_bytes = 0;     // shared buffer in use
  std::uint64_t max_queue_bytes = 0;  // longest egress queue
};

class Network {
 public:
  Network(const Topology& topo, const NetworkConfig& cfg);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  [[nodiscard]] const Topology& topology() const;
  [[nodiscard]] int node_index(const std::string& name) const;  // -1 if unknown
  [[nodiscard]] std::vector<int> nodes_of(NodeKind kind) const;
  // The line rate of an endpoint's link.
  [[nodiscard]] double endpoint_gbps(int node) const;
  // Propagation latency plus per-hop store-and-forward of `bytes` payload on the shortest path
  // (the ideal FCT's fixed part is computed from it, workload.cpp).
  [[nodiscard]] int hops(int from, int to) const;
  [[nodiscard]] double path_latency_ns(int from, int to) const;

  // A host library endpoint on host `node` (its link, clock, address and manual progress set
  // here). The network outlives it.
  std::shared_ptr<host::Transport> open_host(int node, host::UdpRoceOptions options);

  [[nodiscard]] Ps now() const;
  // Runs the network until `until`, or until `done()` (checked after every event) is true.
  // Returns true if done() stopped it.
  bool run_until(Ps until, const std::function<bool()>& done);
  // `fn` runs at simulated time `at` (not before now).
  void schedule(Ps at, std::function<void()> fn);
  // Called after every datagram delivered to an endpoint of `node` (workloads accept connections
  // and poll completions here).
  void set_delivery_hook(std::function<void(int node)> hook);
  // Drops every pending event (a workload's end: its callbacks refer to state it frees).
  void clear_events();

  [[nodiscard]] const NetworkStats& stats() const;
  [[nodiscard]] const std::vector<QueueSample>& queue_samples() const;
  // The NAA models' statistics (naa-sim's keys), one block per NAA.
  void report_naas(std::ostream& os) const;
  // The NAA model of NAA node `node` (null for any other node), for drivers that check what it
  // holds (broadcast.hpp).
  [[nodiscard]] const sim::Naa* naa_model(int node) const;
  void close_pcaps();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace naa::fabric
