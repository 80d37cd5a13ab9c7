// Internals of naa::fabric::Network shared by network.cpp (event loop, links, switches), nic.cpp
// (the endpoints' NICs: QP scheduler, PFC reaction, DCQCN) and frames.cpp (wire formats, pcaps).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "endpoint_node.hpp"
#include "naa/fabric/network.hpp"
#include "naa/protocol/pcap.hpp"

namespace naa::fabric {

inline constexpr int kPriorities = 8;
// RoCE traffic (data, ACKs, CM) travels in priority 3, the lossless class when PFC is on; CNPs in
// priority 6, strictly above it and never paused (as RoCE deployments configure them).
inline constexpr std::uint8_t kDataPriority = 3;
inline constexpr std::uint8_t kCnpPriority = 6;
// IP ECN codepoints (RFC 3168).
inline constexpr std::uint8_t kEcnNotEct = 0, kEcnEct0 = 2, kEcnCe = 3;
// One PFC pause quantum is 512 bit times (802.1Qbb).
inline constexpr std::uint16_t kPauseQuanta = 0xFFFF;

struct Frame {
  enum class Type : std::uint8_t { roce, pfc };
  Type type = Type::roce;
  std::uint8_t priority = kDataPriority;
  std::uint8_t ecn = kEcnNotEct;
  std::uint32_t src_ip = 0, dst_ip = 0;
  std::uint16_t src_port = 0;
  std::vector<std::uint8_t> datagram;  // roce: BTH .. ICRC
  // pfc: the class-enable vector and the 8 quanta
  std::uint16_t pfc_classes = 0;
  std::array<std::uint16_t, kPriorities> pfc_quanta{};
  int ingress_port = -1;  // in a switch: the port it arrived on (PFC accounting)
  // Ethernet bytes on the wire, computed once: the datagram is complete before a frame is queued.
  [[nodiscard]] std::uint32_t wire_bytes() const {
    if (wire_ == 0) wire_ = compute_wire_bytes();
    return wire_;
  }

 private:
  [[nodiscard]] std::uint32_t compute_wire_bytes() const;
  mutable std::uint32_t wire_ = 0;
};
using FramePtr = std::unique_ptr<Frame>;

struct Port {
  int node = -1;
  int peer = -1;  // the port at the other end of the link
  double gbps = 0;
  Ps latency = 0;
  std::array<std::deque<FramePtr>, kPriorities> queue;
  std::array<std::uint64_t, kPriorities> queue_bytes{};
  std::deque<FramePtr> control;  // PFC frames: sent before anything else
  Ps busy_until = 0;
  Ps tx_at = -1;                               // the pending transmit attempt (arm_tx), -1: none
  std::array<Ps, kPriorities> paused_until{};  // the peer paused this transmitter
  // As a switch's ingress port: bytes buffered that arrived here, per priority, and PFC state.
  std::array<std::uint64_t, kPriorities> ingress_bytes{};
  std::array<bool, kPriorities> xoff{};
  std::array<std::uint32_t, kPriorities> xoff_epoch{};
  std::array<Ps, kPriorities> xoff_since{};     // when XOFF began (NetworkStats::xoff_ns)
  std::uint64_t xoff_bytes = 0, xon_bytes = 0;  // PFC thresholds of this ingress port
  std::unique_ptr<protocol::PcapWriter> pcap;
  [[nodiscard]] Ps serialisation(std::uint32_t wire_bytes) const {
    return static_cast<Ps>(static_cast<double>(wire_bytes) * 8000.0 / gbps + 0.5);
  }
};

// DCQCN reaction point state and the queue of one QP (UDP source port) at a NIC.
struct NicFlow {
  // The QP's packets waiting for the wire: first its retransmissions (the first `retransmits`
  // frames, oldest PSN first), then its first transmissions in the order handed over. A NIC's
  // send engine resends from the PSN its transport rewound to before it goes on with new ones.
  std::deque<FramePtr> frames;
  std::size_t retransmits = 0;
  bool sent_any = false;
  std::uint32_t highest_psn = 0;  // the newest PSN the endpoint handed over (sent_any)
  bool in_rr = false;
  bool limited = false;  // DCQCN has cut its rate and it has not recovered to line rate
  double rc = 0, rt = 0, alpha = 1;
  Ps next_allowed = 0;
  Ps last_alpha = 0, last_increase = 0;
  std::uint64_t bytes_since_increase = 0;
  int timer_steps = 0, byte_steps = 0;
  bool cnp_since_alpha = false;
};

class EndpointNode;  // nic.cpp: the host or NAA behind a NIC
class NaaEndpoint;   // naa_node.cpp

struct Nic {
  std::map<std::uint16_t, NicFlow> flows;
  std::deque<std::uint16_t> rr;       // flows with frames, in turn
  std::deque<FramePtr> short_frames;  // ACKs, NAKs, SACKs: ahead of the round robin
  // Learned from what the endpoint sends: (peer IP, our UDP source port) -> the peer's QPN, so a
  // CNP can name the sender's QP (the NP knows it from its QP context on a real NIC).
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint32_t> peer_qpn;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Ps> last_cnp;  // (sender IP, our QPN)
  std::unique_ptr<EndpointNode> endpoint;
  Ps wake_at = -1;  // the earliest wake-up scheduled for the endpoint
};

struct NodeState {
  int index = 0;
  std::vector<int> ports;  // global port indices
  // Switches: per destination endpoint (index into Impl::endpoints), the equal-cost egress ports.
  std::vector<std::vector<int>> routes;
  std::uint64_t buffer_used = 0;
  std::uint64_t buffer_limit = 0;
  std::uint64_t salt = 0;
  std::unique_ptr<Nic> nic;  // hosts and NAAs
};

// The event queue: a binary heap of small keys (time, then the order of scheduling, so ties run
// in the order they were scheduled), each naming a body in a slab. The two events of every
// packet-hop (a port's transmit attempt, a frame's arrival) are plain data; anything else is a
// std::function. Moving 24-byte keys in the heap instead of std::functions, and no allocation per
// frame in flight, is most of the loop's cost per hop (docs/fabric.md "Speed").
struct Event {
  Ps t;
  std::uint64_t seq;
  std::uint32_t body;
};
struct EventBody {
  enum class Kind : std::uint8_t { call, transmit_attempt, arrival };
  Kind kind = Kind::call;
  int port = -1;
  Ps at = 0;       // transmit_attempt: the time it was armed for (Port::tx_at)
  FramePtr frame;  // arrival
  std::function<void()> fn;
};

struct Network::Impl {
  Impl(const Topology& topo, const NetworkConfig& cfg);

  Topology topo;
  NetworkConfig cfg;
  std::vector<NodeState> nodes;
  std::vector<Port> ports;
  std::vector<int> endpoints;                          // node indices of hosts and NAAs
  std::unordered_map<std::uint32_t, int> endpoint_of;  // IP -> index into endpoints
  std::vector<std::vector<int>> dist;                  // hop distance endpoint -> node
  NetworkStats stats;
  std::vector<QueueSample> samples;
  std::mt19937_64 rng;
  std::function<void(int)> delivery_hook;

  // Event loop.
  Ps now = 0;
  std::uint64_t seq = 0;
  std::vector<Event> heap;
  std::vector<EventBody> bodies;
  std::vector<std::uint32_t> free_bodies;
  int depth = 0;          // nesting of run loops (blocking endpoint calls inside events)
  int waiting_node = -1;  // the node whose top-level wait runs the loop
  bool waiting_delivered = false;
  void schedule(Ps at, std::function<void()> fn);
  EventBody& schedule_body(Ps at);  // a new event at `at`; fill in its body
  void dispatch(EventBody& body);
  bool run(Ps until, const std::function<bool()>& done);

  // Links and switches (network.cpp).
  void kick(int port);
  void arm_tx(int port, Ps at);
  void try_send(int port);
  void transmit(int port, FramePtr f);
  void arrive(int port, FramePtr f);
  void switch_receive(int port, FramePtr f);
  void switch_dequeued(int node, const Frame& f);
  void send_pfc(int port, std::uint8_t prio, bool pause);
  void pfc_received(int port, const Frame& f);
  void sample_queues();

  // NICs (nic.cpp).
  FramePtr nic_next(int port, Ps& retry_at);
  void nic_send(int node, std::span<const std::uint8_t> datagram, std::uint32_t src_ip,
                std::uint16_t src_port, std::uint32_t dst_ip);
  void nic_receive(int node, FramePtr f);
  void nic_sent(int node, const Frame& f);  // DCQCN byte counter, pacing
  void dcqcn_cnp(Nic& nic, std::uint16_t flow_port, double line);
  void dcqcn_catch_up(NicFlow& fl, double line);
  void request_wake(int node, Ps at);
  void wake(int node);

  // NAAs (naa_node.cpp): the models, and SystemC's time kept equal to the loop's.
  std::vector<NaaEndpoint*> naa_nodes;
  bool sc_running = false;  // inside sc_start
  Ps sc_stop = 0;           // where that sc_start stops
  void create_naas();
  void advance_naas(Ps target);  // runs the models to `target` or their next output
  void report_naas(std::ostream& os) const;
  [[nodiscard]] const sim::Naa* naa_model(int node) const;  // naa_node.cpp

  // Frames (frames.cpp).
  void capture(int port, const Frame& f);
};

// frames.cpp
FramePtr make_pfc_frame(std::uint8_t prio, std::uint16_t quanta);
FramePtr make_cnp(std::uint32_t src_ip, std::uint16_t src_port, std::uint32_t dst_ip,
                  std::uint32_t dest_qpn);
std::uint64_t flow_hash(const Frame& f, std::uint64_t salt);

}  // namespace naa::fabric
