// The link model in front of NetPort (docs/sim/net_port.md "Link model"), in-process: datagrams
// handed to the in-memory input (inject_at, the co-simulation's seam, docs/adr/0004) reach the
// next block spaced at the line rate in Ethernet wire bytes, after the latency and the port
// stage; transmitted ones leave at the line rate. Times are simulated, exact to the picosecond.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <cstdint>
#include <vector>

#include "model_context_rig.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/link_model.hpp"
#include "naa/sim/net_port.hpp"
#include "test_addresses.hpp"

namespace {

namespace s = naa::sim;
using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::sc_time;

// RxPipe's place: records when each datagram arrives and returns the buffer.
class TimedSink final : public s::PacketSink, public s::ProtocolErrorCounter {
 public:
  explicit TimedSink(s::PacketPool& pool) : pool_(pool) {}
  void put(s::Packet* pk) override {
    times.push_back(sc_core::sc_time_stamp());
    arrivals.push_back(pk->arrival);
    pool_.put(pk);
  }
  void count_protocol_error(naa::protocol::Error) override { ++errors; }
  std::vector<sc_time> times, arrivals;
  int errors = 0;

 private:
  s::PacketPool& pool_;
};

// A NetPort at 100 Gb/s with 1 us latency, its received datagrams going to a TimedSink.
s::SimConfig link_config() {
  s::SimConfig cfg;
  cfg.link_gbps = 100.0;
  cfg.link_latency_ns = 1000;
  return cfg;
}
struct PortRig {
  PortRig() {
    net.to_rx(sink);
    net.protocol_errors(sink);
  }
  struct Parts {
    const s::SimConfig& cfg;
    s::PacketPool& pool;
    s::NetPort& net;
    TimedSink& sink;
  };
  Parts parts() { return {cfg, pool, net, sink}; }

  naa::testbench::ModelContextRig model{link_config()};
  const s::SimConfig& cfg = model.cfg;
  s::PacketPool& pool = model.pool;
  boost::asio::io_context io;
  s::NetPort net{"net_port", model.ctx, io};
  TimedSink sink{pool};
};

}  // namespace

TEST_CASE("link model: wire bytes and serialisation at 100 Gb/s", "[sim][link]") {
  CHECK(s::ethernet_wire_bytes(4112) == 4178);  // a 4 KiB WRITE MIDDLE
  CHECK(s::ethernet_wire_bytes(20) == 86);      // an ACK: a 66-byte frame
  CHECK(s::ethernet_wire_bytes(0) == 84);       // padded to the 64-byte minimum frame
  s::LinkModel link(100.0, sc_time(500, SC_NS));
  CHECK(link.serialisation(4112) == sc_time(334240, SC_PS));
  CHECK(link.serialisation(0) == sc_time(6720, SC_PS));
  const auto a = link.send(sc_time(1, SC_NS), 4112);
  CHECK(a.start == sc_time(1, SC_NS));
  CHECK(a.arrival == sc_time(1, SC_NS) + sc_time(334240, SC_PS) + sc_time(500, SC_NS));
  const auto b = link.send(sc_time(2, SC_NS), 4112);  // the wire is busy: queued behind
  CHECK(b.start == a.end);
  const auto c = link.send(sc_time(10, sc_core::SC_US), 20);  // idle wire: starts when handed
  CHECK(c.end - c.start == sc_time(6880, SC_PS));
  CHECK(c.start == sc_time(10, sc_core::SC_US));
  CHECK(link.wire_bytes() == 4178 + 4178 + 86);
  CHECK(link.next_arrival_bound() == c.end + sc_time(6720, SC_PS) + sc_time(500, SC_NS));
  const s::LinkModel off(0.0, sc_core::SC_ZERO_TIME);
  CHECK_FALSE(off.enabled());
  CHECK(off.serialisation(4112) == sc_core::SC_ZERO_TIME);
}

TEST_CASE("link model: NetPort spaces in-memory arrivals and transmissions at the line rate",
          "[sim][link]") {
  PortRig rig;
  auto [cfg, pool, net, sink] = rig.parts();
  net.set_local_ip(0x0A000001);
  std::vector<sc_time> sent, reach;
  net.set_tx_tap([&](const s::Packet&, std::uint16_t) {
    sent.push_back(sc_core::sc_time_stamp());
    reach.push_back(net.tx_arrival());
  });
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  // Eight 4 KiB datagrams handed over at once: they leave one after the other.
  std::vector<std::uint8_t> datagram(4112, 0);
  datagram[0] = 0x07;  // WRITE MIDDLE
  for (int i = 0; i < 8; ++i)
    REQUIRE(net.inject_at(datagram, 0x0A000002, 0xC011, 0x0A000001, sc_core::SC_ZERO_TIME));
  sc_core::sc_start(sc_time(20, sc_core::SC_US));
  REQUIRE(sink.times.size() == 8);
  const sc_time wire(334240, SC_PS);
  const sc_time stage = cfg.cycle() * static_cast<double>(s::SimConfig::stage_cycles(
                                          4112, cfg.width, cfg.netport_latency));
  for (std::size_t k = 0; k < 8; ++k) {
    INFO("datagram " << k);
    CHECK(sink.arrivals[k] == wire * static_cast<double>(k + 1) + sc_time(1000, SC_NS));
    CHECK(sink.times[k] == sink.arrivals[k] + stage);  // the port stage (296 ns) < wire time
  }
  CHECK(sink.errors == 0);

  // Transmit: four datagrams put at once leave at the line rate; each reaches the peer one
  // latency after its last bit left.
  const sc_time t0 = sc_core::sc_time_stamp();
  for (int i = 0; i < 4; ++i) {
    s::Packet* pk = pool.try_get();
    REQUIRE(pk != nullptr);
    pk->size = 4112;
    pk->peer_ip = 0x0A000002;
    pk->src_qpn = 0x102;
    net.put(pk);
  }
  sc_core::sc_start(sc_time(20, sc_core::SC_US));
  REQUIRE(sent.size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    INFO("sent " << k);
    CHECK(reach[k] == sent[k] + sc_time(1000, SC_NS));
    if (k > 0) {
      CHECK(sent[k] - sent[k - 1] == wire);
    }
  }
  CHECK(sent[0] == t0 + stage + wire);
  CHECK(net.tx_link().wire_bytes() == 4 * 4178);
}

namespace {

// A UDP socket on `ip`:4791 (where NetPort sends a peer's datagrams, PROTOCOL.md 1), read
// without blocking: on loopback a sent datagram is in its queue when sendmmsg returns.
class PeerSocket {
 public:
  explicit PeerSocket(std::uint32_t ip) : fd_(::socket(AF_INET, SOCK_DGRAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(4791);
    a.sin_addr.s_addr = htonl(ip);
    bound_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~PeerSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  PeerSocket(const PeerSocket&) = delete;
  PeerSocket& operator=(const PeerSocket&) = delete;
  [[nodiscard]] bool bound() const { return bound_; }
  // The size of the next waiting datagram, or -1 if none is waiting.
  long next_size() {
    std::vector<std::uint8_t> buf(65536);
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
    return n >= 0 ? static_cast<long>(n) : (errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2);
  }

 private:
  int fd_;
  bool bound_ = false;
};

}  // namespace

// Issue 31's direct wire (docs/sim/net_port.md): with only the socket reading transmitted frames
// (no tap, no capture), a frame that finds the wire idle goes to the socket side at once and
// flush_tx holds it until simulated time reaches the end of its last bit. A step that ends
// earlier (the runner flushes after every step) must not send it: the peer would get it before
// the wire time the model charges.
TEST_CASE("link model: the direct wire holds a frame until its last bit has left", "[sim][link]") {
  PortRig rig;
  auto [cfg, pool, net, sink] = rig.parts();
  const auto& addresses = naa::testbench::test_addresses();
  net.open(addresses.ip_u32(1));
  PeerSocket peer(addresses.ip_u32(2));
  REQUIRE(peer.bound());
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  const sc_time wire(334240, SC_PS);  // 4112 bytes at 100 Gb/s (the test above)
  const sc_time stage = cfg.cycle() * static_cast<double>(s::SimConfig::stage_cycles(
                                          4112, cfg.width, cfg.netport_latency));
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    s::Packet* pk = pool.try_get();
    REQUIRE(pk != nullptr);
    pk->size = 4112;
    pk->peer_ip = addresses.ip_u32(2);
    pk->src_qpn = 0x102;
    net.put(pk);
    // The stage has passed and half the frame is on the wire: the step's flush sends nothing.
    sc_core::sc_start(stage + wire / 2);
    net.flush_tx();
    CHECK(peer.next_size() == -1);
    CHECK(naa::testbench::reported(net, "net_port.tx_wire_direct") ==
          static_cast<std::uint64_t>(round + 1));
    // The last bit has left: the next step's flush sends it, whole.
    sc_core::sc_start(wire / 2);
    net.flush_tx();
    CHECK(peer.next_size() == 4112);
    CHECK(peer.next_size() == -1);
    sc_core::sc_start(sc_time(10, sc_core::SC_US));  // idle between the rounds
    net.flush_tx();
    CHECK(peer.next_size() == -1);
  }
  CHECK(naa::testbench::reported(net, "net_port.tx_datagrams") == 2);
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
