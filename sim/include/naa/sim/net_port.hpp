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
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <systemc>

#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/pcap.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/context.hpp"

namespace boost::asio {
class io_context;
}

namespace naa::sim {

class NetPort : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(NetPort);
  NetPort(sc_core::sc_module_name name, ModelContext& ctx, boost::asio::io_context& io);
  ~NetPort() override;

  // Opens and binds the listening socket; throws std::system_error (at start-up only).
  void open(std::uint32_t listen_ip);
  // Opens the pcap tap; returns the error, if any.
  [[nodiscard]] std::error_code open_pcap(const std::string& path);
  void close_pcap();
  [[nodiscard]] std::uint32_t local_ip() const { return local_ip_; }

  // Runner side (outside sc_start): take up to `budget` waiting datagrams off the socket and
  // inject them. Returns how many were read.
  std::size_t poll_receive(std::size_t budget);
  // Calls `handler` once when the listening socket becomes readable (Boost.Asio async_wait).
  void async_wait_readable(std::function<void()> handler);

  // Model side: the UDP source port a QP's packets leave from (opens its socket on first use).
  [[nodiscard]] std::uint16_t source_port(std::uint32_t qpn);
  // TxPipe hands finished datagrams (ICRC written) here.
  void transmit(Packet* p) { tx_in_.put(p); }
  // RxPipe reports each received datagram with its recovered IPv4 ID for the tap.
  void tap_rx(const Packet& p);

  void report(std::ostream& os) const;

 private:
  struct Sockets;
  void rx_thread();
  void tx_thread();
  void send_datagram(const Packet& p, std::uint16_t src_port);

  ModelContext& ctx_;
  std::unique_ptr<Sockets> sockets_;
  std::uint32_t local_ip_ = 0;
  protocol::PcapWriter pcap_;
  Channel<Packet*> rx_in_;
  Channel<Packet*> tx_in_;
  CycleMeter rx_meter_, tx_meter_;
  std::uint64_t rx_datagrams_ = 0, rx_bytes_ = 0, tx_datagrams_ = 0, tx_bytes_ = 0;
  std::uint64_t rx_truncated_ = 0, rx_no_buffer_ = 0, tx_errors_ = 0, port_fallbacks_ = 0;
};

}  // namespace naa::sim
