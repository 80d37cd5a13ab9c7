// NetPort (ARCHITECTURE.md "The NAA model"): the UDP socket on <listen>:4791 and the optional pcap
// tap. Received datagrams are injected by the runner between sc_start() calls (poll_receive()),
// stamped with the simulated arrival time, and pass a port stage of netport_latency + ceil(len/W)
// cycles on their way to RxPipe; transmitted ones pass the same stage on the way out.
//
// Sockets (PROTOCOL.md 1): the listening socket is NOT connected and has IP_MTU_DISCOVER =
// IP_PMTUDISC_DO, so Linux sends IPv4 ID 0 and DF (the ICRC covers the ID); IP_PKTINFO tells us
// the local address. Each QP sends from its own UDP source port roce_udp_source_port(qpn) through
// a lazily opened send-only socket with the same options; if that port cannot be bound, the QP
// falls back to the listening socket and port 4791 (the ICRC always uses the real port).
//
// Fault injection (--fault-rx / --fault-tx, docs/reliability.md): each direction can lose,
// duplicate, reorder (bounded) and corrupt datagrams at the port, as a lossy link would, with the
// impairment model the host endpoint uses too (naa::impair, docs/adr/0003). Corruption flips one
// bit of the datagram and leaves detection to RxPipe's ICRC check (or the peer's).
//
// Link model (--link-gbps, --link-latency-ns; docs/sim/net_port.md "Link model"): received
// datagrams are not stamped with the moment they were read but with the time their last bit
// arrives over a link of that rate and latency (link_model.hpp), one after the other; transmitted
// ones leave at the link's rate too. While a stream is in progress (link_stream.hpp: more follows
// without waiting for the NAA), the next datagram is taken to follow back to back, and
// stream_horizon() tells the runner how far the model may run before it has to read it
// (docs/sim/timing.md).
//
// Without a socket (in-process harnesses such as the fuzzer): inject() feeds datagrams in and
// set_tx_tap() receives what the NAA sends; no socket is ever opened.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include <systemc>

#include "naa/impair/held_queue.hpp"
#include "naa/impair/injector.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/pcap.hpp"
#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/link_model.hpp"
#include "naa/sim/link_stream.hpp"

namespace boost::asio {
class io_context;
}
struct msghdr;

namespace naa::sim {

// Parses "loss=P,dup=P,reorder=P,reorder-delay=N,corrupt=P" (any subset, P in [0,1]); "none" or ""
// is no fault. Returns false and says why in `error`.
[[nodiscard]] inline bool parse_fault_spec(std::string_view text, FaultSpec& out,
                                           std::string& error) {
  return impair::parse_fault_spec(text, out, &error);
}

// Provides PacketSink (datagrams to transmit, from TxPipe), ReceiveTap and PortAddresses.
class NetPort : public sc_core::sc_module,
                public PacketSink,
                public ReceiveTap,
                public PortAddresses {
 public:
  SC_HAS_PROCESS(NetPort);
  NetPort(sc_core::sc_module_name name, ModelContext& ctx, boost::asio::io_context& io);
  ~NetPort() override;

  sc_core::sc_port<PacketSink> to_rx{"to_rx"};                       // received datagrams
  sc_core::sc_port<ProtocolErrorCounter> protocol_errors{"errors"};  // truncated datagrams

  // Opens and binds the listening socket; throws std::system_error (at start-up only).
  void open(std::uint32_t listen_ip);
  // Opens the pcap tap; returns the error, if any.
  [[nodiscard]] std::error_code open_pcap(const std::string& path);
  void close_pcap();
  [[nodiscard]] std::uint32_t local_ip() const override { return local_ip_; }

  // Runner side (outside sc_start): take up to `budget` waiting datagrams off the socket and
  // inject them. Returns how many were read.
  std::size_t poll_receive(std::size_t budget);
  // Datagrams read from now on are stamped as arriving no earlier than `t` (simulated time the
  // runner is about to let pass while the model is idle; issue 19: one step per wake-up).
  void set_stamp_floor(sc_core::sc_time t) { stamp_floor_ = t; }
  // Runner side: sends what the model transmitted since the last flush (one sendmmsg per
  // socket; issue 19). The runner calls it after every simulation step; poll_receive() and a
  // full batch call it too.
  void flush_tx();
  // Calls `handler` once when the listening socket becomes readable (Boost.Asio async_wait).
  void async_wait_readable(std::function<void()> handler);

  // Model side: the UDP source port a QP's packets leave from (opens its socket on first use).
  [[nodiscard]] std::uint16_t source_port(std::uint32_t qpn) override;
  // TxPipe hands finished datagrams (ICRC written) here.
  void put(Packet* p) override { tx_in_.put(p); }
  // Without tx faults and with the port stage idle: TxPipe hands a datagram over with the time
  // it is ready, and it crosses the port stage without its process (StageQueue, issue 31).
  [[nodiscard]] bool try_put_at(Packet* p, sc_core::sc_time ready) override;
  // RxPipe reports each received datagram with its recovered IPv4 ID for the tap.
  void tap_rx(const Packet& p) override;
  [[nodiscard]] bool capturing() const override { return pcap_.is_open(); }

  // Harness side (no socket): inject one datagram as if it had arrived from peer_ip:peer_port at
  // local_ip; false if no buffer is free or the port FIFO is full. Outside sc_start only.
  bool inject(protocol::ByteView datagram, std::uint32_t peer_ip, std::uint16_t peer_port,
              std::uint32_t local_ip);
  // In-memory input (co-simulation, docs/adr/0004): the sender handed the datagram to the link at
  // simulated time `handed_over` (not before now); it arrives over the link model after its wire
  // time and the latency. The sender's timing is known here, so no stream hold applies. Outside
  // sc_start only; false as inject().
  bool inject_at(protocol::ByteView datagram, std::uint32_t peer_ip, std::uint16_t peer_port,
                 std::uint32_t local_ip, sc_core::sc_time handed_over);
  // The address a socket-less harness serves (open() sets it otherwise); the ICRCs use it.
  void set_local_ip(std::uint32_t ip) { local_ip_ = ip; }
  // Sees every datagram the port transmits (after tx faults), with its UDP source port.
  void set_tx_tap(std::function<void(const Packet&, std::uint16_t)> tap) {
    tx_tap_ = std::move(tap);
  }

  void report(std::ostream& os) const;
  [[nodiscard]] std::uint64_t rx_datagram_count() const { return rx_datagrams_; }
  [[nodiscard]] std::uint64_t tx_datagram_count() const { return tx_datagrams_; }

  // Link model, runner side. While a stream is in progress: the simulated time up to which the
  // model may run without reading the next datagram (nullopt: no stream, no limit).
  [[nodiscard]] std::optional<sc_core::sc_time> stream_horizon() const;
  // The runner waited --link-hold-us of wall time at the horizon and nothing came: the stream has
  // ended (or the sender is slower than the wire); the next datagram starts after a gap.
  void end_stream_hold();
  // How long (wall microseconds) the runner waits at the horizon for the next datagram.
  [[nodiscard]] std::uint64_t stream_hold_us() const;
  // The receive and transmit links (statistics; the tx slot of the datagram being tapped).
  [[nodiscard]] const LinkModel& rx_link() const { return rx_link_; }
  [[nodiscard]] const LinkModel& tx_link() const { return tx_link_; }
  // During a tx tap call: when that datagram's last bit reaches the peer (simulated time).
  [[nodiscard]] sc_core::sc_time tx_arrival() const { return tx_arrival_; }
  // sendmmsg calls so far: the runner tells from it whether a step sent anything (--poll-us).
  [[nodiscard]] std::uint64_t tx_send_calls() const { return tx_send_calls_; }
  // The listening socket's descriptor (the runner's short poll before a blocking wait).
  [[nodiscard]] int listen_fd() const;

  // A reordered datagram that fewer than reorder_delay datagrams overtake is released after this
  // much simulated time.
  static constexpr double kReorderHoldNs = 100'000.0;

 private:
  struct Sockets;
  // source_port() for a QP other than the last one asked (the map, and the socket's opening).
  [[gnu::noinline]] std::uint16_t source_port_lookup(std::uint32_t qpn);
  using HeldQueue = impair::HeldQueue<Packet*, sc_core::sc_time>;
  void rx_thread();
  void tx_thread();
  // StageQueue services: a stage's time for a datagram from when it takes it (metered).
  static sc_core::sc_time rx_service(void* self, const Packet& p, sc_core::sc_time start);
  // The port stage's cycles for a datagram, either way: the stage's service functions and the
  // hand-overs that cross the stage by a call use this one formula.
  [[nodiscard]] std::uint64_t port_cycles(const Packet& p) const {
    return SimConfig::stage_cycles(p.size, ctx_.cfg.width, ctx_.cfg.netport_latency);
  }
  static sc_core::sc_time tx_service(void* self, const Packet& p, sc_core::sc_time start);
  bool queue_datagram(Packet* p, std::uint16_t src_port);  // into the sendmmsg batch
  // flush_tx's sendmmsg messages for the outbox's datagrams first .. end (with `gso`, runs
  // toward loopback as UDP GSO messages); returns how many.
  std::size_t build_tx_messages(std::size_t first, std::size_t end, bool gso);
  // The outbox grouped per QP socket between datagrams of the listening socket (flush_tx).
  void group_outbox_by_socket();
  // What a received message's address and control blocks say (accept_received, the GRO read).
  struct RxMeta {
    std::uint32_t peer_ip = 0, local_ip = 0;
    std::uint16_t peer_port = 0;
    std::size_t gro_segment = 0;  // UDP_GRO: the coalesced datagrams' size; 0 = one datagram
  };
  RxMeta parse_received(const msghdr& msg);
  // One datagram recvmmsg filled: addressing, truncation, arrival stamp, into the FIFO.
  void accept_received(Packet* p, const msghdr& msg, std::size_t len);
  // A datagram of `len` bytes in `p` from the message `meta` describes: into the FIFO.
  void admit_received(Packet* p, std::size_t len, const RxMeta& meta);
  std::size_t poll_receive_gro(std::size_t budget);  // poll_receive with UDP_GRO
  // Onto the wire at `at` (tx_wire_thread: socket + pcap + tap, then the pool).
  void tx_emit(Packet* p, sc_core::sc_time at);
  // A received datagram into the port stage (or past it, straight to RxPipe: rx_admit()).
  void rx_admit(Packet* p);
  void tx_wire_thread();
  struct WireFrame {
    Packet* packet = nullptr;
    sc_core::sc_time end;      // its last bit leaves
    sc_core::sc_time arrival;  // its last bit reaches the peer
  };
  static constexpr std::size_t kTxWireFrames = 4;  // frames the MAC holds for the wire
  bool tx_send_once(Packet* p);
  // tx_emit may hand a frame to the socket side itself (issue 31): only the socket reads it at
  // its end (a tap or a capture records it then, with that time).
  [[nodiscard]] bool wire_direct() const {
    return !tx_tap_ && !pcap_.is_open() && sockets_listening();
  }
  [[nodiscard]] bool sockets_listening() const;
  // Waits until `in` has data or the earliest held datagram is due; releases due ones via
  // `release`. Returns when `in` has data.
  template <class Release>
  void wait_with_held(Channel<Packet*>& in, HeldQueue& held, Release release);
  Packet* copy_of(const Packet& p);  // nullptr if the pool is empty
  // Stamps a received datagram with its simulated arrival (the link model, or now).
  void stamp_arrival(Packet& p);
  // The same for in-memory input handed to the link at `handed_over`: the link starts there
  // instead of at the stream's pace (no stream hold).
  void stamp_arrival_at(Packet& p, sc_core::sc_time handed_over);

  ModelContext& ctx_;
  std::unique_ptr<Sockets> sockets_;
  std::uint32_t local_ip_ = 0;
  protocol::PcapWriter pcap_;
  StageQueue rx_in_;               // received datagrams into the port stage (rx_service)
  StageQueue tx_in_;               // datagrams from TxPipe into the port stage (tx_service)
  ReadyQueue<WireFrame> tx_wire_;  // each frame due when its last bit has left
  CycleMeter rx_meter_, tx_meter_;
  std::uint64_t rx_datagrams_ = 0, rx_bytes_ = 0, tx_datagrams_ = 0, tx_bytes_ = 0;
  std::uint64_t rx_truncated_ = 0, rx_no_buffer_ = 0, tx_errors_ = 0, port_fallbacks_ = 0;
  std::uint64_t rx_socket_drops_ = 0;  // SO_RXQ_OVFL: dropped by the kernel, buffer full
  impair::Injector rx_fault_, tx_fault_;
  HeldQueue rx_held_, tx_held_;
  std::function<void(const Packet&, std::uint16_t)> tx_tap_;
  LinkModel rx_link_, tx_link_;
  StreamHold rx_hold_ = StreamHold::none;  // what the last datagram read implies (link model)
  sc_core::sc_time tx_arrival_ = sc_core::SC_ZERO_TIME;
  std::uint64_t stream_hold_timeouts_ = 0, rx_late_ = 0;
  // System calls on the socket path (issue 19): recvmmsg calls, those that found nothing, and
  // sendmmsg calls.
  std::uint64_t rx_recv_calls_ = 0, rx_recv_empty_ = 0, tx_send_calls_ = 0;
  // UDP GSO toward loopback (issue 31): datagrams sent as segments of GSO messages; GSO messages
  // the kernel refused (GSO is then off for good: tx_gso_).
  std::uint64_t tx_gso_datagrams_ = 0, tx_gso_refused_ = 0;
  std::uint64_t rx_gro_datagrams_ = 0;  // UDP_GRO: datagrams that arrived coalesced
  bool tx_gso_ = true;
  std::size_t rx_batch_hint_ = 4;  // datagrams the next recvmmsg asks for (poll_receive)
  sc_core::sc_time stamp_floor_ = sc_core::SC_ZERO_TIME;  // set_stamp_floor()
  // A frame handed to the socket side before its last bit left (tx_emit, issue 31): flush_tx
  // keeps it until simulated time reaches wire_hold_end_; wire_end_ (no process waits on it)
  // keeps the model active until then, as the wire's process did.
  Packet* wire_hold_ = nullptr;
  sc_core::sc_time wire_hold_end_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_event wire_end_;
  std::uint64_t tx_wire_direct_ = 0;  // frames handed on by tx_emit itself (activity.*)
};

}  // namespace naa::sim
