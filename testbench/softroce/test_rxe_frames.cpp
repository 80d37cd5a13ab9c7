// Frames Linux rxe (Debian 12, kernel 6.1.0-56, rdma-core 44) really sent, captured on tap0 of the
// Soft-RoCE VM (docs/softroce.md): an rping REQ/RTU/DREQ and SEND, and naa-call (Verbs backend)
// traffic. Each must decode, verify its ICRC with the real IPv4 header, and - seen as a UDP
// socket sees it, without the IPv4 ID - give back its real, non-zero ID from the ICRC
// (PROTOCOL.md 2). The fields checked are the facts PROTOCOL.md relies on about rxe. No VM needed.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "naa/protocol/cm.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"

namespace p = naa::protocol;

namespace {

constexpr std::uint32_t kVmIp = 0x0A4D0002;   // 10.77.0.2
constexpr std::uint32_t kNaaIp = 0x0A4D0001;  // 10.77.0.1

std::vector<p::PcapRecord> rxe_frames() {
  p::PcapReader r;
  const std::string path = std::string(NAA_FIXTURES_DIR) + "/rxe_frames.pcap";
  REQUIRE_FALSE(r.open(path));
  std::vector<p::PcapRecord> out;
  p::PcapRecord rec;
  while (r.next(rec))
    out.push_back(rec);
  REQUIRE(out.size() == 11);
  return out;
}

}  // namespace

TEST_CASE("rxe frames: ICRC verifies and the IPv4 ID is recovered from it", "[softroce]") {
  for (const p::PcapRecord& rec : rxe_frames()) {
    auto frame = p::decode_roce_frame(rec.data);
    REQUIRE(frame.has_value());
    const p::Ipv4UdpHeaders& h = frame->headers;
    CAPTURE(h.ip.id);
    CHECK(h.ip.src == kVmIp);
    CHECK(h.ip.dst == kNaaIp);
    CHECK(h.udp.dst_port == p::kRoceUdpPort);
    CHECK(h.udp.checksum == 0);  // rxe sends no UDP checksum
    CHECK(h.ip.id != 0);         // rxe increments the ID: a UDP-socket receiver must not assume 0
    CHECK(p::verify_icrc(h, frame->roce));
    // What a UDP socket shows: everything but the ID (and the masked fields).
    p::Ipv4UdpHeaders seen = h;
    seen.ip.id = 0;
    seen.ip.ttl = 1;
    seen.ip.checksum = 0;
    CHECK_FALSE(p::verify_icrc(seen, frame->roce));
    const auto id = p::recover_ipv4_id(seen, frame->roce);
    REQUIRE(id.has_value());
    CHECK(*id == h.ip.id);
    // One flipped payload bit: no ID explains it.
    std::vector<std::uint8_t> bad(frame->roce.begin(), frame->roce.end());
    bad[bad.size() / 2] ^= 0x10;
    CHECK_FALSE(p::recover_ipv4_id(seen, bad).has_value());
    REQUIRE(p::decode_packet(frame->roce).has_value());
  }
}

TEST_CASE("rxe frames: the CM REQ carries what PROTOCOL.md 4 says rxe asks for", "[softroce]") {
  const auto frames = rxe_frames();
  auto frame = p::decode_roce_frame(frames[0].data);
  REQUIRE(frame.has_value());
  auto pkt = p::decode_packet(frame->roce);
  REQUIRE(pkt.has_value());
  CHECK(pkt->headers.bth.opcode == 0x64);  // UD SEND ONLY to QP 1
  CHECK(pkt->headers.bth.dest_qpn == 1);
  CHECK(pkt->headers.bth.ack_req);  // set on a UD datagram; the CM ignores it
  REQUIRE(pkt->headers.deth.has_value());
  CHECK(pkt->headers.deth->qkey == p::kCmQKey);
  auto mad = p::decode_cm_mad(pkt->payload);
  REQUIRE(mad.has_value());
  const auto* req = std::get_if<p::CmReq>(&mad->body);
  REQUIRE(req != nullptr);
  CHECK(req->service_id == p::rdma_cm_service_id(12345));
  CHECK(req->path_mtu == 3);  // 1024 at Ethernet MTU 1500
  CHECK(req->primary_local_ack_timeout == 19);
  CHECK(req->transport_service_type == 0);  // RC
  CHECK(req->primary_local_lid == 0xFFFF);
  CHECK(req->primary_remote_gid[10] == 0xFF);  // ::ffff:10.77.0.1
  CHECK(req->primary_remote_gid[15] == 0x01);
  CHECK(req->private_data[1] == 0x40);  // rdma_cm header: IPv4
}

TEST_CASE("rxe frames: segmentation, AckReq and SE as rxe sends them", "[softroce]") {
  const auto frames = rxe_frames();
  auto pkt_of = [&](std::size_t i) {
    auto f = p::decode_roce_frame(frames.at(i).data);
    REQUIRE(f.has_value());
    auto pk = p::decode_packet(f->roce);
    REQUIRE(pk.has_value());
    return *pk;
  };
  // 6: naa-call's MRSP request, SEND ONLY with SE (PROTOCOL.md 5.1) and AckReq.
  auto mrsp = pkt_of(5);
  CHECK(mrsp.headers.bth.opcode == 0x04);
  CHECK(mrsp.headers.bth.solicited_event);
  CHECK(mrsp.headers.bth.ack_req);
  CHECK(mrsp.payload[0] == 0x01);
  // 7: RDMA WRITE FIRST: exactly one path MTU (1024) of payload, no AckReq.
  auto first = pkt_of(6);
  CHECK(first.headers.bth.opcode == 0x06);
  CHECK(first.payload.size() == 1024);
  CHECK_FALSE(first.headers.bth.ack_req);
  REQUIRE(first.headers.reth.has_value());
  // 10: a MIDDLE packet with AckReq: rxe asks for an ACK inside long messages too.
  auto middle = pkt_of(9);
  CHECK(middle.headers.bth.opcode == 0x07);
  CHECK(middle.headers.bth.ack_req);
  CHECK(middle.payload.size() == 1024);
  // 9: WRITE LAST WITH IMMEDIATE, SE and AckReq: the call's last packet (PROTOCOL.md 5.2).
  auto last_imm = pkt_of(8);
  CHECK(last_imm.headers.bth.opcode == 0x09);
  CHECK(last_imm.headers.bth.solicited_event);
  CHECK(last_imm.headers.bth.ack_req);
  REQUIRE(last_imm.headers.immediate.has_value());
  CHECK((*last_imm.headers.immediate & 0x80U) != 0);  // host -> NAA
  CHECK((*last_imm.headers.immediate & 0x7FU) == 4);  // vadd_i32
  // 11: a zero-length WRITE ONLY WITH IMMEDIATE (a call without inputs): DMA length 0.
  auto zero = pkt_of(10);
  CHECK(zero.headers.bth.opcode == 0x0B);
  CHECK(zero.headers.bth.solicited_event);
  REQUIRE(zero.headers.reth.has_value());
  CHECK(zero.headers.reth->dma_length == 0);
  CHECK(zero.payload.empty());
}
