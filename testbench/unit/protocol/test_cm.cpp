// IB CM MADs (PROTOCOL.md 4 and 8): the five CM frames of testbench/vectors decoded field by field
// and re-encoded byte-identically, round trips of every message type with distinctive values,
// hand-computed bit positions for the messages without a vector. The rejections and the rdma_cm
// helpers are in test_cm_rejections.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cm_fixtures.hpp"
#include "naa/protocol/cm.hpp"
#include "vectors.hpp"

using namespace naa::protocol;
using namespace naa::testbench::cm_fixtures;

// ---- Vectors 12-16 ------------------------------------------------------------------------------

TEST_CASE("cm: vector frames carry the MAD at offset 62 in a UD SEND ONLY to QP 1", "[cm]") {
  for (int index = 12; index <= 16; ++index) {
    INFO("frame " << index);
    const std::vector<std::uint8_t> f = frame_bytes(index);
    REQUIRE(f.size() == kMadOffset + kMadSize + 4);
    CHECK(f[42] == 0x64);                           // BTH opcode UD SEND ONLY
    CHECK(load_be24(f.data() + 42 + 5) == kCmQpn);  // destination QP 1
    CHECK(load_be32(f.data() + 54) == kCmQKey);     // DETH Q_Key
    CHECK(load_be24(f.data() + 59) == kCmQpn);      // DETH source QP 1
  }
}

TEST_CASE("cm: REQ vector (frame 12) decodes to the values in the vector", "[cm]") {
  const std::vector<std::uint8_t> mad = vector_mad(12);
  Result<CmMad> r = decode_cm_mad(mad);
  REQUIRE(r.has_value());
  const MadHeader& h = r->header;
  CHECK(h.base_version == 1);
  CHECK(h.mgmt_class == 0x07);
  CHECK(h.class_version == 2);
  CHECK(h.method == 0x03);
  CHECK(h.status == 0);
  CHECK(h.class_specific == 0);
  CHECK(h.transaction_id == 0x000000012A3B4C5DULL);
  CHECK(h.attribute_id == kCmAttrReq);
  CHECK(h.reserved == 0);
  CHECK(h.attribute_modifier == 0);

  REQUIRE(std::holds_alternative<CmReq>(r->body));
  const CmReq& req = std::get<CmReq>(r->body);
  CHECK(req.local_comm_id == 0x2A3B4C5D);
  CHECK(req.reserved_4 == 0);
  CHECK(req.vendor_id == 0);
  CHECK(req.service_id == 0x0000000001061D2FULL);
  CHECK(rdma_cm_port(req.service_id) == std::optional<std::uint16_t>{7471});
  CHECK(req.local_ca_guid == 0x020200FFFE000001ULL);
  CHECK(req.reserved_24 == 0);
  CHECK(req.local_qkey == 0);
  CHECK(req.local_qpn == 0x000011);
  CHECK(req.responder_resources == 16);
  CHECK(req.local_eecn == 0);
  CHECK(req.initiator_depth == 16);
  CHECK(req.remote_eecn == 0);
  CHECK(req.remote_cm_response_timeout == 20);  // byte 43 = 0xa0
  CHECK(req.transport_service_type == kCmTransportRc);
  CHECK_FALSE(req.end_to_end_flow_control);
  CHECK(req.starting_psn == 0xABCDEF);
  CHECK(req.local_cm_response_timeout == 20);  // byte 47 = 0xa7
  CHECK(req.retry_count == 7);
  CHECK(req.pkey == 0xFFFF);
  CHECK(req.path_mtu == 3);  // byte 50 = 0x37
  CHECK(ib_mtu_bytes(req.path_mtu) == std::optional<std::uint32_t>{1024});
  CHECK_FALSE(req.rdc_exists);
  CHECK(req.rnr_retry_count == 7);
  CHECK(req.max_cm_retries == 15);  // byte 51 = 0xf0
  CHECK_FALSE(req.srq);
  CHECK(req.extended_transport_type == 0);
  CHECK(req.primary_local_lid == 0xFFFF);
  CHECK(req.primary_remote_lid == 0xFFFF);
  CHECK(req.primary_local_gid == ipv4_mapped_gid(ip(192, 168, 1, 10)));
  CHECK(req.primary_remote_gid == ipv4_mapped_gid(ip(192, 168, 1, 20)));
  CHECK(req.primary_flow_label == 0);
  CHECK(req.reserved_90 == 0);
  CHECK(req.primary_packet_rate == 0);
  CHECK(req.primary_traffic_class == 0);
  CHECK(req.primary_hop_limit == 64);
  CHECK(req.primary_sl == 0);
  CHECK_FALSE(req.primary_subnet_local);
  CHECK(req.reserved_94 == 0);
  CHECK(req.primary_local_ack_timeout == 18);  // byte 95 = 0x90
  CHECK(req.reserved_95 == 0);
  CHECK(all_zero(req.alternate_path));

  // rdma_cm private-data header, then the user's bytes.
  CHECK(req.private_data[0] == 0x00);
  CHECK(req.private_data[1] == 0x40);
  CHECK(req.private_data[2] == 0xB0);
  CHECK(req.private_data[3] == 0x01);
  Result<RdmaCmIpHeader> cma = decode_rdma_cm_ip_header(req.private_data);
  REQUIRE(cma.has_value());
  CHECK(cma->version == 0);
  CHECK(cma->ip_version == 0x40);
  CHECK(cma->src_port == 0xB001);
  CHECK(cma->src_ip == ip(192, 168, 1, 10));
  CHECK(cma->dst_ip == ip(192, 168, 1, 20));
  const ByteView user = rdma_cm_user_data(req);
  REQUIRE(user.size() == 56);
  constexpr std::string_view kUser = "user-private";
  CHECK(std::equal(kUser.begin(), kUser.end(), user.begin(),
                   [](char c, std::uint8_t b) { return static_cast<std::uint8_t>(c) == b; }));
  CHECK(std::all_of(user.begin() + static_cast<std::ptrdiff_t>(kUser.size()), user.end(),
                    [](std::uint8_t b) { return b == 0; }));

  CHECK(encode(*r) == mad);
}

TEST_CASE("cm: REP vector (frame 13) decodes to the values in the vector", "[cm]") {
  const std::vector<std::uint8_t> mad = vector_mad(13);
  Result<CmMad> r = decode_cm_mad(mad);
  REQUIRE(r.has_value());
  CHECK(r->header.transaction_id == 0x000000012A3B4C5DULL);  // the REQ's
  CHECK(r->header.attribute_id == kCmAttrRep);
  REQUIRE(std::holds_alternative<CmRep>(r->body));
  const CmRep& rep = std::get<CmRep>(r->body);
  CHECK(rep.local_comm_id == 0x11223344);
  CHECK(rep.remote_comm_id == 0x2A3B4C5D);
  CHECK(rep.local_qkey == 0);
  CHECK(rep.local_qpn == 0x000022);
  CHECK(rep.local_eecn == 0);
  CHECK(rep.starting_psn == 0x123456);
  CHECK(rep.vendor_id == 0);
  CHECK(rep.responder_resources == 16);
  CHECK(rep.initiator_depth == 16);
  CHECK(rep.target_ack_delay == 15);  // byte 26 = 0x78
  CHECK(rep.failover_accepted == 0);
  CHECK_FALSE(rep.end_to_end_flow_control);
  CHECK(rep.rnr_retry_count == 7);  // byte 27 = 0xe0
  CHECK_FALSE(rep.srq);
  CHECK(rep.reserved_27 == 0);
  CHECK(rep.local_ca_guid == 0x020200FFFE000002ULL);
  CHECK(all_zero(rep.private_data));
  CHECK(encode(*r) == mad);
}

TEST_CASE("cm: RTU, DREQ and DREP vectors (frames 14-16) decode and re-encode", "[cm]") {
  SECTION("RTU") {
    const std::vector<std::uint8_t> mad = vector_mad(14);
    Result<CmMad> r = decode_cm_mad(mad);
    REQUIRE(r.has_value());
    CHECK(r->header.transaction_id == 0x000000012A3B4C5DULL);  // the REQ's
    REQUIRE(std::holds_alternative<CmRtu>(r->body));
    const CmRtu& rtu = std::get<CmRtu>(r->body);
    CHECK(rtu.local_comm_id == 0x2A3B4C5D);
    CHECK(rtu.remote_comm_id == 0x11223344);
    CHECK(all_zero(rtu.private_data));
    CHECK(encode(*r) == mad);
  }
  SECTION("DREQ") {
    const std::vector<std::uint8_t> mad = vector_mad(15);
    Result<CmMad> r = decode_cm_mad(mad);
    REQUIRE(r.has_value());
    CHECK(r->header.transaction_id == 0x000000012A3B4C5EULL);  // a new transaction
    REQUIRE(std::holds_alternative<CmDreq>(r->body));
    const CmDreq& dreq = std::get<CmDreq>(r->body);
    CHECK(dreq.local_comm_id == 0x2A3B4C5D);
    CHECK(dreq.remote_comm_id == 0x11223344);
    CHECK(dreq.remote_qpn == 0x000022);  // the receiver's (REP's local) QPN
    CHECK(dreq.reserved_11 == 0);
    CHECK(all_zero(dreq.private_data));
    CHECK(encode(*r) == mad);
  }
  SECTION("DREP") {
    const std::vector<std::uint8_t> mad = vector_mad(16);
    Result<CmMad> r = decode_cm_mad(mad);
    REQUIRE(r.has_value());
    CHECK(r->header.transaction_id == 0x000000012A3B4C5EULL);  // the DREQ's
    REQUIRE(std::holds_alternative<CmDrep>(r->body));
    const CmDrep& drep = std::get<CmDrep>(r->body);
    CHECK(drep.local_comm_id == 0x11223344);
    CHECK(drep.remote_comm_id == 0x2A3B4C5D);
    CHECK(all_zero(drep.private_data));
    CHECK(encode(*r) == mad);
  }
}

TEST_CASE("cm: the vector exchange is one consistent connection", "[cm]") {
  const CmReq req = std::get<CmReq>(decode_cm_mad(vector_mad(12))->body);
  const CmRep rep = std::get<CmRep>(decode_cm_mad(vector_mad(13))->body);
  const CmDreq dreq = std::get<CmDreq>(decode_cm_mad(vector_mad(15))->body);
  // Comm IDs pair up; the DREQ names the passive side's QP (PROTOCOL.md 4).
  CHECK(rep.remote_comm_id == req.local_comm_id);
  CHECK(dreq.local_comm_id == req.local_comm_id);
  CHECK(dreq.remote_comm_id == rep.local_comm_id);
  CHECK(dreq.remote_qpn == rep.local_qpn);
  CHECK(rep.local_qpn != req.local_qpn);
  // rdma_cm: the GIDs are the IP addresses of the private-data header.
  const RdmaCmIpHeader cma = *decode_rdma_cm_ip_header(req.private_data);
  CHECK(ipv4_from_mapped_gid(req.primary_local_gid) == std::optional<std::uint32_t>{cma.src_ip});
  CHECK(ipv4_from_mapped_gid(req.primary_remote_gid) == std::optional<std::uint32_t>{cma.dst_ip});
}

// ---- Round trips --------------------------------------------------------------------------------

TEST_CASE("cm: REQ round trip with every field set, bit positions as in PROTOCOL.md 8", "[cm]") {
  const std::vector<std::uint8_t> b = round_trip(distinctive_req(), kCmAttrReq);
  CHECK(load_be32(b.data() + body(0)) == 0x11223344);
  CHECK(b[body(4)] == 0x5A);
  CHECK(load_be24(b.data() + body(5)) == 0xA1B2C3);
  CHECK(load_be64(b.data() + body(8)) == 0x0102030405060708ULL);
  CHECK(load_be64(b.data() + body(16)) == 0x1112131415161718ULL);
  CHECK(load_be32(b.data() + body(24)) == 0x21222324);
  CHECK(load_be32(b.data() + body(28)) == 0x31323334);
  CHECK(load_be24(b.data() + body(32)) == 0xABCDEF);
  CHECK(b[body(35)] == 0x41);
  CHECK(load_be24(b.data() + body(36)) == 0x515253);
  CHECK(b[body(39)] == 0x42);
  CHECK(load_be24(b.data() + body(40)) == 0x616263);
  CHECK(b[body(43)] == 0xAD);
  CHECK(load_be24(b.data() + body(44)) == 0x717273);
  CHECK(b[body(47)] == 0x5D);
  CHECK(load_be16(b.data() + body(48)) == 0x8182);
  CHECK(b[body(50)] == 0x5E);
  CHECK(b[body(51)] == 0xC3);
  CHECK(load_be16(b.data() + body(52)) == 0x9192);
  CHECK(load_be16(b.data() + body(54)) == 0x9394);
  CHECK(b[body(56)] == 0xA0);
  CHECK(b[body(72)] == 0xB0);
  CHECK(load_be32(b.data() + body(88)) == 0xCDEF1A95);
  CHECK(b[body(92)] == 0xC1);
  CHECK(b[body(93)] == 0xC2);
  CHECK(b[body(94)] == 0x9A);
  CHECK(b[body(95)] == 0x99);
  CHECK(b[body(96)] == 0x01);  // alternate path, first byte
  CHECK(b[body(139)] == static_cast<std::uint8_t>(0x01 + 7 * 43));
  CHECK(b[body(140)] == 0x33);  // private data, first byte
  CHECK(b[255] == static_cast<std::uint8_t>(0x33 + 7 * 91));
}

TEST_CASE("cm: REP round trip with every field set, vendor ID split over bytes 15/19/23", "[cm]") {
  const std::vector<std::uint8_t> b = round_trip(distinctive_rep(), kCmAttrRep);
  CHECK(naa::testbench::to_hex({b.begin() + body(0), b.begin() + body(36)}) ==
        "01020304"
        "05060708"
        "090a0b0c"
        "112233aa"
        "445566bb"
        "778899cc"
        "d1d2d2b6"
        "e1e2e3e4e5e6e7e8");
  CHECK(b[body(36)] == 0x44);
  CHECK(b[255] == static_cast<std::uint8_t>(0x44 + 7 * 195));
}

TEST_CASE("cm: REJ round trip with every field set", "[cm]") {
  const std::vector<std::uint8_t> b = round_trip(distinctive_rej(), kCmAttrRej);
  CHECK(naa::testbench::to_hex({b.begin() + body(0), b.begin() + body(12)}) ==
        "0a0b0c0d"
        "1a1b1c1d"
        "9591001c");
  CHECK(b[body(12)] == 0x55);  // ARI
  CHECK(b[body(83)] == static_cast<std::uint8_t>(0x55 + 7 * 71));
  CHECK(b[body(84)] == 0x66);  // private data
  CHECK(b[255] == static_cast<std::uint8_t>(0x66 + 7 * 147));
}

TEST_CASE("cm: MRA round trip with every field set", "[cm]") {
  const std::vector<std::uint8_t> b = round_trip(distinctive_mra(), kCmAttrMra);
  CHECK(naa::testbench::to_hex({b.begin() + body(0), b.begin() + body(10)}) ==
        "2a2b2c2d"
        "3a3b3c3d"
        "a1bc");
  CHECK(b[body(10)] == 0x77);
  CHECK(b[255] == static_cast<std::uint8_t>(0x77 + 7 * 221));
}

TEST_CASE("cm: RTU, DREQ and DREP round trips with every field set", "[cm]") {
  SECTION("RTU") {
    const std::vector<std::uint8_t> b = round_trip(distinctive_rtu(), kCmAttrRtu);
    CHECK(naa::testbench::to_hex({b.begin() + body(0), b.begin() + body(9)}) ==
          "4a4b4c4d5a5b5c5d88");
    CHECK(b[255] == static_cast<std::uint8_t>(0x88 + 7 * 223));
  }
  SECTION("DREQ") {
    const std::vector<std::uint8_t> b = round_trip(distinctive_dreq(), kCmAttrDreq);
    CHECK(naa::testbench::to_hex({b.begin() + body(0), b.begin() + body(13)}) ==
          "6a6b6c6d7a7b7c7dfedcba9999");
    CHECK(b[255] == static_cast<std::uint8_t>(0x99 + 7 * 219));
  }
  SECTION("DREP") {
    const std::vector<std::uint8_t> b = round_trip(distinctive_drep(), kCmAttrDrep);
    CHECK(naa::testbench::to_hex({b.begin() + body(0), b.begin() + body(9)}) ==
          "8a8b8c8d9a9b9c9daa");
    CHECK(b[255] == static_cast<std::uint8_t>(0xAA + 7 * 223));
  }
}

TEST_CASE("cm: cm_attribute_id follows the variant alternative", "[cm]") {
  CHECK(cm_attribute_id(CmBody{CmReq{}}) == 0x10);
  CHECK(cm_attribute_id(CmBody{CmMra{}}) == 0x11);
  CHECK(cm_attribute_id(CmBody{CmRej{}}) == 0x12);
  CHECK(cm_attribute_id(CmBody{CmRep{}}) == 0x13);
  CHECK(cm_attribute_id(CmBody{CmRtu{}}) == 0x14);
  CHECK(cm_attribute_id(CmBody{CmDreq{}}) == 0x15);
  CHECK(cm_attribute_id(CmBody{CmDrep{}}) == 0x16);
}
