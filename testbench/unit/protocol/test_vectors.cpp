// Conformance against testbench/vectors: frames whose ICRCs two independent implementations
// computed, and one real ConnectX-4 Lx capture. Each frame must decode, re-encode byte for byte,
// and verify (frame 11 must not).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"
#include "vectors.hpp"

using namespace naa::protocol;
using naa::testbench::load_roce_frames;
using naa::testbench::roce_frame;

namespace {

// The views in `rf` and the returned packet point into `frame`: keep it alive while using them.
PacketView decode_vector(const std::vector<std::uint8_t>& frame, RoceFrame& rf) {
  auto f = decode_roce_frame(frame);
  REQUIRE(f.has_value());
  rf = *f;
  auto p = decode_packet(rf.roce);
  REQUIRE(p.has_value());
  return *p;
}

}  // namespace

TEST_CASE("every vector frame decodes, re-encodes byte-identically and verifies", "[vectors]") {
  const auto frames = load_roce_frames();
  REQUIRE(frames.size() == 16);
  for (const auto& vf : frames) {
    INFO("frame " << vf.index << " " << vf.name);
    RoceFrame rf;
    const PacketView p = decode_vector(vf.bytes, rf);

    // Re-encode the RoCE part from the decoded headers and payload, then the ICRC.
    std::vector<std::uint8_t> roce(packet_size(p.headers, p.payload.size()));
    auto n = encode_packet(p.headers, p.payload, roce);
    REQUIRE(n.has_value());
    REQUIRE(*n == rf.roce.size());
    write_icrc(rf.headers, roce);
    // And the whole frame around it.
    std::vector<std::uint8_t> frame(vf.bytes.size());
    auto fn = encode_roce_frame(rf.eth, rf.headers, roce, frame);
    REQUIRE(fn.has_value());
    REQUIRE(*fn == vf.bytes.size());

    if (vf.index == 11) {
      CHECK_FALSE(verify_icrc(rf.headers, rf.roce));
      CHECK_FALSE(recover_ipv4_id(rf.headers, rf.roce).has_value());
      // Everything but the corrupted ICRC re-encodes identically.
      CHECK(std::equal(frame.begin(), frame.end() - 4, vf.bytes.begin()));
      CHECK(naa::testbench::to_hex(frame) != naa::testbench::to_hex(vf.bytes));
    } else {
      CHECK(verify_icrc(rf.headers, rf.roce));
      CHECK(naa::testbench::to_hex(frame) == naa::testbench::to_hex(vf.bytes));
      // The receive path of a UDP socket does not see the IPv4 ID (0x1234 in every vector):
      // recovering it from the ICRC must give exactly the sender's ID.
      Ipv4UdpHeaders unknown_id = rf.headers;
      unknown_id.ip.id = 0;
      auto id = recover_ipv4_id(unknown_id, rf.roce);
      REQUIRE(id.has_value());
      CHECK(*id == rf.headers.ip.id);
    }
  }
}

TEST_CASE("vector frame 1: RDMA WRITE Only fields", "[vectors]") {
  RoceFrame rf;
  const auto vector1 = roce_frame(1);
  const PacketView p = decode_vector(vector1.bytes, rf);
  CHECK(p.headers.bth.opcode == opcode::kWriteOnly);
  CHECK(p.headers.bth.psn == 0x100);
  CHECK(p.headers.bth.dest_qpn == 0x11);
  CHECK(p.headers.bth.ack_req);
  CHECK(p.headers.bth.pad_count == 3);
  CHECK(p.headers.bth.pkey == 0xFFFF);
  REQUIRE(p.headers.reth.has_value());
  CHECK(p.headers.reth->va == 0x7f0000001000ULL);
  CHECK(p.headers.reth->rkey == 0x1234);
  CHECK(p.headers.reth->dma_length == 13);
  CHECK(std::string(p.payload.begin(), p.payload.end()) == "Hello, RoCEv2");
  // ICRC bytes on the wire f8 68 62 8f = CRC value 0x8f6268f8 (sent LSB first).
  CHECK(p.icrc == 0x8f6268f8U);
  CHECK(rf.headers.ip.src == 0xC0A8010AU);
  CHECK(rf.headers.ip.dst == 0xC0A80114U);
  CHECK(rf.headers.udp.dst_port == kRoceUdpPort);
}

TEST_CASE("vector frames 2-9: ACK, NAKs, READ, SEND with immediate, atomics", "[vectors]") {
  RoceFrame rf;
  const auto vector2 = roce_frame(2);
  auto ack = decode_vector(vector2.bytes, rf);
  CHECK(ack.headers.bth.opcode == opcode::kAcknowledge);
  REQUIRE(ack.headers.aeth.has_value());
  CHECK(ack.headers.aeth->syndrome == kAethAck);
  CHECK(aeth_kind(ack.headers.aeth->syndrome) == AethKind::ack);
  CHECK(ack.headers.aeth->msn == 1);

  const auto vector3 = roce_frame(3);
  auto nak = decode_vector(vector3.bytes, rf);
  CHECK(nak.headers.aeth->syndrome == kNakPsnSequenceError);
  CHECK(aeth_kind(nak.headers.aeth->syndrome) == AethKind::nak);

  const auto vector4 = roce_frame(4);
  auto rnr = decode_vector(vector4.bytes, rf);
  CHECK(aeth_kind(rnr.headers.aeth->syndrome) == AethKind::rnr_nak);
  CHECK(rnr.headers.aeth->syndrome == rnr_nak_syndrome(14));
  CHECK(rnr_timer_ns(rnr.headers.aeth->syndrome & 0x1F) == 1280000U);

  const auto vector5 = roce_frame(5);
  auto rd = decode_vector(vector5.bytes, rf);
  CHECK(rd.headers.bth.opcode == opcode::kReadRequest);
  REQUIRE(rd.headers.reth.has_value());
  CHECK(rd.payload.empty());

  const auto vector6 = roce_frame(6);
  auto rr = decode_vector(vector6.bytes, rf);
  CHECK(rr.headers.bth.opcode == opcode::kReadResponseFirst);
  CHECK(rr.payload.size() == 16);
  CHECK(rr.payload[15] == 0x0f);

  const auto vector7 = roce_frame(7);
  auto si = decode_vector(vector7.bytes, rf);
  CHECK(si.headers.bth.opcode == opcode::kSendOnlyImm);
  CHECK(si.headers.bth.solicited_event);
  REQUIRE(si.headers.immediate.has_value());
  CHECK(*si.headers.immediate == 0xdeadbeefU);
  CHECK(std::string(si.payload.begin(), si.payload.end()) == "abcd");

  const auto vector8 = roce_frame(8);
  auto fa = decode_vector(vector8.bytes, rf);
  CHECK(fa.headers.bth.opcode == opcode::kFetchAdd);
  REQUIRE(fa.headers.atomic_eth.has_value());
  CHECK(fa.headers.atomic_eth->swap_add == 1);

  const auto vector9 = roce_frame(9);
  auto aa = decode_vector(vector9.bytes, rf);
  CHECK(aa.headers.bth.opcode == opcode::kAtomicAcknowledge);
  REQUIRE(aa.headers.atomic_ack_eth.has_value());
  CHECK(aa.headers.atomic_ack_eth->original_data == 0x29);
}

TEST_CASE("vector frame 10: the UDP checksum is masked out of the ICRC", "[vectors]") {
  RoceFrame with_csum;
  RoceFrame without_csum;
  const auto vector10 = roce_frame(10);
  auto a = decode_vector(vector10.bytes, with_csum);
  const auto vector1 = roce_frame(1);
  auto b = decode_vector(vector1.bytes, without_csum);
  CHECK(with_csum.headers.udp.checksum != 0);
  CHECK(a.icrc == b.icrc);
  CHECK(verify_icrc(with_csum.headers, with_csum.roce));
}

TEST_CASE("vector frames 12-16: CM MADs ride in UD SEND Only to QP 1", "[vectors]") {
  for (int i = 12; i <= 16; ++i) {
    INFO("frame " << i);
    RoceFrame rf;
    const auto frame = roce_frame(i);
    auto p = decode_vector(frame.bytes, rf);
    CHECK(p.headers.bth.opcode == opcode::kUdSendOnly);
    CHECK(p.headers.bth.dest_qpn == 1);
    REQUIRE(p.headers.deth.has_value());
    CHECK(p.headers.deth->qkey == 0x80010000U);
    CHECK(p.headers.deth->src_qpn == 1);
    CHECK(p.payload.size() == 256);
  }
}

TEST_CASE("the ConnectX-4 Lx CNP captured from hardware verifies", "[vectors]") {
  const auto frame = naa::testbench::load_cx4lx_frame();
  auto f = decode_roce_frame(frame);
  REQUIRE(f.has_value());
  CHECK(f->headers.ip.tos == 0xC2);  // masked in the ICRC
  CHECK(f->headers.udp.src_port == 0);
  auto p = decode_packet(f->roce);
  REQUIRE(p.has_value());
  CHECK(p->headers.bth.opcode == opcode::kCnp);
  CHECK(p->icrc == 0x2a00fd82U);
  CHECK(verify_icrc(f->headers, f->roce));
  Ipv4UdpHeaders unknown_id = f->headers;
  unknown_id.ip.id = 0;
  auto id = recover_ipv4_id(unknown_id, f->roce);
  REQUIRE(id.has_value());
  CHECK(*id == f->headers.ip.id);
  CHECK(*id == 0x718c);
}

TEST_CASE("the shared pcap holds exactly the frames of the text vectors", "[vectors][pcap]") {
  PcapReader reader;
  REQUIRE_FALSE(reader.open(naa::testbench::vectors_dir() + "/roce_frames.pcap"));
  CHECK(reader.link_type() == kPcapLinkTypeEthernet);
  const auto frames = load_roce_frames();
  PcapRecord rec;
  std::size_t i = 0;
  while (reader.next(rec)) {
    REQUIRE(i < frames.size());
    CHECK(naa::testbench::to_hex(rec.data) == naa::testbench::to_hex(frames[i].bytes));
    ++i;
  }
  CHECK(i == frames.size());
}
