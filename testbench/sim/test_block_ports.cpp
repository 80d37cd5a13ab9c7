// The blocks of the NAA model meet only through the interfaces of block_interfaces.hpp
// (docs/sim/architecture.md): a block whose ports are bound to stand-ins instead of its real
// neighbours works unchanged. Here RxPipe and TxPipe run in-process against recording stubs of
// NetPort, CmAgent and Transport; the checks are on what reached each stub (bytes, ICRC, order)
// and on the blocks' own counters. SystemC elaborates once per process, so one test case builds
// everything and runs the scenarios in turn.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "model_context_rig.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/rx_pipe.hpp"
#include "naa/sim/tx_pipe.hpp"

namespace {

namespace p = naa::protocol;
namespace s = naa::sim;

constexpr std::uint32_t kLocalIp = 0x0A000001;  // 10.0.0.1
constexpr std::uint32_t kPeerIp = 0x0A000002;   // 10.0.0.2
constexpr std::uint16_t kPeerPort = 0xC011;

// Records the packets it is given (copies) and returns the buffers to the pool, as a block would.
class RecordingSink final : public s::PacketSink {
 public:
  explicit RecordingSink(s::PacketPool& pool) : pool_(pool) {}
  void put(s::Packet* pk) override {
    got.push_back(*pk);
    pool_.put(pk);
  }
  std::vector<s::Packet> got;

 private:
  s::PacketPool& pool_;
};

// NetPort's side for both pipes: addresses for TxPipe, the capture tap for RxPipe.
class FakeNet final : public s::PortAddresses, public s::ReceiveTap {
 public:
  [[nodiscard]] std::uint32_t local_ip() const override { return kLocalIp; }
  [[nodiscard]] std::uint16_t source_port(std::uint32_t qpn) override {
    return static_cast<std::uint16_t>(0xD000U | (qpn & 0xFFFU));
  }
  void tap_rx(const s::Packet& pk) override { tapped_ip_ids.push_back(pk.ip_id); }
  std::vector<std::uint16_t> tapped_ip_ids;
};

s::Packet* encode(s::PacketPool& pool, const p::PacketHeaders& h, p::ByteView payload) {
  s::Packet* pk = pool.try_get();
  REQUIRE(pk != nullptr);
  const auto n = p::encode_packet(h, payload, {pk->data.data(), pk->data.size()});
  REQUIRE(n.has_value());
  pk->size = *n;
  return pk;
}

// A datagram as it arrives from the peer: addressing filled in, ICRC valid (or broken).
s::Packet* received(s::PacketPool& pool, const p::PacketHeaders& h, p::ByteView payload,
                    bool good_icrc) {
  s::Packet* pk = encode(pool, h, payload);
  pk->peer_ip = kPeerIp;
  pk->peer_port = kPeerPort;
  pk->local_ip = kLocalIp;
  p::write_icrc(p::make_roce_headers(kPeerIp, kPeerPort, kLocalIp, pk->size),
                {pk->data.data(), pk->size});
  if (!good_icrc) pk->data[pk->size - 1] ^= 0x01U;
  return pk;
}

std::string report_of(const auto& block) {
  std::ostringstream os;
  block.report(os);
  return os.str();
}

}  // namespace

TEST_CASE("sim blocks: RxPipe and TxPipe work against stand-ins bound to their ports",
          "[sim][ports]") {
  s::SimConfig four_qps;
  four_qps.qps = 4;
  naa::testbench::ModelContextRig model(four_qps, 16);
  s::ModelContext& ctx = model.ctx;
  s::PacketPool& pool = model.pool;

  s::RxPipe rx("rx_pipe", ctx);
  s::TxPipe tx("tx_pipe", ctx);
  FakeNet net;
  RecordingSink to_cm(pool), to_transport(pool), wire(pool);
  rx.tap(net);
  rx.to_cm(to_cm);
  rx.to_transport(to_transport);
  tx.addresses(net);
  tx.to_net(wire);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaboration: every port must be bound

  const auto run = [] { sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US)); };

  // RxPipe steers an RC packet to whatever sits on to_transport, a MAD to to_cm, and counts and
  // taps a datagram whose ICRC does not verify without passing it on.
  p::PacketHeaders rc;
  rc.bth.opcode = p::opcode::kSendOnly;
  rc.bth.dest_qpn = 0x102;
  rc.bth.psn = 7;
  const std::vector<std::uint8_t> payload{1, 2, 3, 4};
  rx.put(received(pool, rc, payload, true));
  run();
  REQUIRE(to_transport.got.size() == 1);
  CHECK(to_cm.got.empty());
  const auto v = p::decode_packet(to_transport.got[0].bytes());
  REQUIRE(v.has_value());
  CHECK(v->headers.bth.dest_qpn == 0x102);
  CHECK(std::vector<std::uint8_t>(v->payload.begin(), v->payload.end()) == payload);

  p::PacketHeaders ud;
  ud.bth.opcode = p::opcode::kUdSendOnly;
  ud.bth.dest_qpn = p::kCmQpn;
  ud.deth = p::Deth{p::kCmQKey, 0, p::kCmQpn};
  const std::vector<std::uint8_t> mad(p::kMadSize, 0);
  rx.put(received(pool, ud, mad, true));
  run();
  CHECK(to_cm.got.size() == 1);
  CHECK(to_transport.got.size() == 1);

  rx.put(received(pool, rc, payload, false));
  run();
  CHECK(to_transport.got.size() == 1);
  CHECK(net.tapped_ip_ids.size() == 3);  // the tap sees every datagram, good or bad
  CHECK(rx.drops() == 1);
  CHECK(report_of(rx).find("rx_pipe.drop.bad_icrc=1\n") != std::string::npos);

  // A block counting a protocol error through the interface lands in the same statistics.
  s::ProtocolErrorCounter& errors = rx;
  errors.count_protocol_error(p::Error::too_long);
  CHECK(rx.drops() == 2);

  // TxPipe writes the ICRC over the addresses its PortAddresses port gives (here the stand-in's
  // source port for the QP) and hands the datagram to whatever sits on to_net.
  p::PacketHeaders ack;
  ack.bth.opcode = p::opcode::kAcknowledge;
  ack.bth.dest_qpn = 0x11;
  ack.bth.psn = 42;
  ack.aeth = p::Aeth{p::kAethAck, 1};
  s::Packet* out = encode(pool, ack, {});
  out->peer_ip = kPeerIp;
  out->src_qpn = 0x103;
  tx.put(out);
  run();
  REQUIRE(wire.got.size() == 1);
  const s::Packet& sent = wire.got[0];
  CHECK(p::verify_icrc(p::make_roce_headers(kLocalIp, 0xD103, kPeerIp, sent.size), sent.bytes()));
  CHECK_FALSE(p::verify_icrc(p::make_roce_headers(kLocalIp, p::kRoceUdpPort, kPeerIp, sent.size),
                             sent.bytes()));
  CHECK(report_of(tx).find("tx_pipe.packets=1\n") != std::string::npos);
  CHECK(pool.available() == 16);  // every buffer came back
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
