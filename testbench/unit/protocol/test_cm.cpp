// IB CM MADs (PROTOCOL.md 4 and 8): the five CM frames of testbench/vectors decoded field by field
// and re-encoded byte-identically, round trips of every message type with distinctive values,
// hand-computed bit positions for the messages without a vector, and every rejection.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "naa/protocol/cm.hpp"
#include "vectors.hpp"

using namespace naa::protocol;

namespace {

// Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8; the MAD is followed by the 4-byte ICRC.
constexpr std::size_t kMadOffset = 62;

std::vector<std::uint8_t> frame_bytes(int index) {
  return naa::testbench::roce_frame(index).bytes;
}

std::vector<std::uint8_t> vector_mad(int index) {
  const std::vector<std::uint8_t> frame = frame_bytes(index);
  REQUIRE(frame.size() == kMadOffset + kMadSize + 4);
  return {frame.begin() + kMadOffset, frame.begin() + kMadOffset + kMadSize};
}

std::vector<std::uint8_t> encode(const CmMad& mad) {
  std::vector<std::uint8_t> out(kMadSize, 0xEE);
  const Result<std::size_t> n = encode_cm_mad(mad, out);
  REQUIRE(n.has_value());
  CHECK(*n == kMadSize);
  return out;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& a) {
  return std::all_of(a.begin(), a.end(), [](std::uint8_t b) { return b == 0; });
}

template <std::size_t N>
std::array<std::uint8_t, N> pattern(std::uint8_t seed) {
  std::array<std::uint8_t, N> a{};
  for (std::size_t i = 0; i < N; ++i)
    a[i] = static_cast<std::uint8_t>(seed + 7 * i);
  return a;
}

constexpr std::uint32_t ip(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return (std::uint32_t{a} << 24) | (std::uint32_t{b} << 16) | (std::uint32_t{c} << 8) | d;
}

MadHeader distinctive_header() {
  MadHeader h;
  h.status = 0x1234;
  h.class_specific = 0x5678;
  h.transaction_id = 0x0123456789ABCDEFULL;
  h.attribute_id = 0xFFFF;  // ignored by encode: the body decides
  h.reserved = 0x9ABC;
  h.attribute_modifier = 0xDEF01234;
  return h;
}

// Every field at a distinctive value; narrow fields at values whose bit patterns do not repeat,
// reserved fields non-zero so that losing them would show.
CmReq distinctive_req() {
  CmReq m;
  m.local_comm_id = 0x11223344;
  m.reserved_4 = 0x5A;
  m.vendor_id = 0xA1B2C3;
  m.service_id = 0x0102030405060708ULL;
  m.local_ca_guid = 0x1112131415161718ULL;
  m.reserved_24 = 0x21222324;
  m.local_qkey = 0x31323334;
  m.local_qpn = 0xABCDEF;
  m.responder_resources = 0x41;
  m.local_eecn = 0x515253;
  m.initiator_depth = 0x42;
  m.remote_eecn = 0x616263;
  m.remote_cm_response_timeout = 0x15;  // 10101
  m.transport_service_type = 2;         // 10
  m.end_to_end_flow_control = true;     // 1 -> byte 43 = 1010 1101 = 0xAD
  m.starting_psn = 0x717273;
  m.local_cm_response_timeout = 0x0B;  // 01011
  m.retry_count = 5;                   // 101 -> byte 47 = 0101 1101 = 0x5D
  m.pkey = 0x8182;
  m.path_mtu = 5;                 // 0101
  m.rdc_exists = true;            // 1
  m.rnr_retry_count = 6;          // 110 -> byte 50 = 0101 1110 = 0x5E
  m.max_cm_retries = 0x0C;        // 1100
  m.srq = false;                  // 0
  m.extended_transport_type = 3;  // 011 -> byte 51 = 1100 0011 = 0xC3
  m.primary_local_lid = 0x9192;
  m.primary_remote_lid = 0x9394;
  m.primary_local_gid = pattern<16>(0xA0);
  m.primary_remote_gid = pattern<16>(0xB0);
  m.primary_flow_label = 0xCDEF1;  // 20 bits
  m.reserved_90 = 0x2A;            // 101010
  m.primary_packet_rate = 0x15;    // 010101 -> bytes 88..91 = cd ef 1a 95
  m.primary_traffic_class = 0xC1;
  m.primary_hop_limit = 0xC2;
  m.primary_sl = 0x9;                  // 1001
  m.primary_subnet_local = true;       // 1
  m.reserved_94 = 2;                   // 010 -> byte 94 = 1001 1010 = 0x9A
  m.primary_local_ack_timeout = 0x13;  // 10011
  m.reserved_95 = 1;                   // 001 -> byte 95 = 1001 1001 = 0x99
  m.alternate_path = pattern<44>(0x01);
  m.private_data = pattern<92>(0x33);
  return m;
}

CmRep distinctive_rep() {
  CmRep m;
  m.local_comm_id = 0x01020304;
  m.remote_comm_id = 0x05060708;
  m.local_qkey = 0x090A0B0C;
  m.local_qpn = 0x112233;
  m.local_eecn = 0x445566;
  m.starting_psn = 0x778899;
  m.vendor_id = 0xAABBCC;
  m.responder_resources = 0xD1;
  m.initiator_depth = 0xD2;
  m.target_ack_delay = 0x1A;          // 11010
  m.failover_accepted = 1;            // 01
  m.end_to_end_flow_control = false;  // 0 -> byte 26 = 1101 0010 = 0xD2
  m.rnr_retry_count = 5;              // 101
  m.srq = true;                       // 1
  m.reserved_27 = 0x6;                // 0110 -> byte 27 = 1011 0110 = 0xB6
  m.local_ca_guid = 0xE1E2E3E4E5E6E7E8ULL;
  m.private_data = pattern<196>(0x44);
  return m;
}

CmRej distinctive_rej() {
  CmRej m;
  m.local_comm_id = 0x0A0B0C0D;
  m.remote_comm_id = 0x1A1B1C1D;
  m.message_rejected = kCmRejMessageOther;  // 10
  m.reserved_8 = 0x15;                      // 010101 -> byte 8 = 1001 0101 = 0x95
  m.reject_info_length = 72;                // 1001000
  m.reserved_9 = 1;                         // 1 -> byte 9 = 1001 0001 = 0x91
  m.reason = kCmRejConsumerDefined;
  m.ari = pattern<72>(0x55);
  m.private_data = pattern<148>(0x66);
  return m;
}

CmMra distinctive_mra() {
  CmMra m;
  m.local_comm_id = 0x2A2B2C2D;
  m.remote_comm_id = 0x3A3B3C3D;
  m.message_mraed = kCmMraMessageLap;  // 10
  m.reserved_8 = 0x21;                 // 100001 -> byte 8 = 1010 0001 = 0xA1
  m.service_timeout = 0x17;            // 10111
  m.reserved_9 = 4;                    // 100 -> byte 9 = 1011 1100 = 0xBC
  m.private_data = pattern<222>(0x77);
  return m;
}

CmRtu distinctive_rtu() {
  CmRtu m;
  m.local_comm_id = 0x4A4B4C4D;
  m.remote_comm_id = 0x5A5B5C5D;
  m.private_data = pattern<224>(0x88);
  return m;
}

CmDreq distinctive_dreq() {
  CmDreq m;
  m.local_comm_id = 0x6A6B6C6D;
  m.remote_comm_id = 0x7A7B7C7D;
  m.remote_qpn = 0xFEDCBA;
  m.reserved_11 = 0x99;
  m.private_data = pattern<220>(0x99);
  return m;
}

CmDrep distinctive_drep() {
  CmDrep m;
  m.local_comm_id = 0x8A8B8C8D;
  m.remote_comm_id = 0x9A9B9C9D;
  m.private_data = pattern<224>(0xAA);
  return m;
}

// encode, check the header bytes, decode, compare, re-encode: returns the encoded MAD.
std::vector<std::uint8_t> round_trip(const CmBody& body, std::uint16_t expected_attribute) {
  const CmMad mad{distinctive_header(), body};
  std::vector<std::uint8_t> bytes = encode(mad);
  // MAD header: version/class/class version/method, status, class-specific, TID | attribute ID |
  // reserved, attribute modifier. The attribute ID comes from the body, not from
  // header.attribute_id (0xFFFF).
  CHECK(naa::testbench::to_hex({bytes.begin(), bytes.begin() + 16}) ==
        "01070203"
        "1234"
        "5678"
        "0123456789abcdef");
  CHECK(load_be16(bytes.data() + 16) == expected_attribute);
  CHECK(naa::testbench::to_hex({bytes.begin() + 18, bytes.begin() + 24}) ==
        "9abc"
        "def01234");
  Result<CmMad> decoded = decode_cm_mad(bytes);
  REQUIRE(decoded.has_value());
  CHECK(decoded->header.attribute_id == expected_attribute);
  CHECK(decoded->header.transaction_id == 0x0123456789ABCDEFULL);
  CHECK(decoded->header.status == 0x1234);
  CHECK(decoded->header.class_specific == 0x5678);
  CHECK(decoded->header.reserved == 0x9ABC);
  CHECK(decoded->header.attribute_modifier == 0xDEF01234);
  CHECK(decoded->body == body);
  CHECK(encode(*decoded) == bytes);
  return bytes;
}

// MAD offset of a CM body offset.
constexpr std::size_t body(std::size_t offset) {
  return kCmBodyOffset + offset;
}

}  // namespace

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

// ---- Rejections on decode -----------------------------------------------------------------------

TEST_CASE("cm: decode requires exactly 256 bytes", "[cm]") {
  std::vector<std::uint8_t> mad = vector_mad(12);
  CHECK(decode_cm_mad(ByteView{}).error() == Error::too_short);
  CHECK(decode_cm_mad(ByteView(mad).first(24)).error() == Error::too_short);
  CHECK(decode_cm_mad(ByteView(mad).first(255)).error() == Error::too_short);
  mad.push_back(0);  // e.g. a caller that forgot to strip the ICRC
  CHECK(decode_cm_mad(mad).error() == Error::too_long);
  mad.insert(mad.end(), {0, 0, 0});
  CHECK(decode_cm_mad(mad).error() == Error::too_long);
}

TEST_CASE("cm: every byte of the MAD header perturbed", "[cm]") {
  const std::vector<std::uint8_t> original = vector_mad(13);
  for (std::size_t i = 0; i < kMadHeaderSize; ++i) {
    for (const std::uint8_t flip : {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
      INFO("byte " << i << " xor " << int{flip});
      std::vector<std::uint8_t> mad = original;
      mad[i] = static_cast<std::uint8_t>(mad[i] ^ flip);
      const Result<CmMad> r = decode_cm_mad(mad);
      if (i <= 3) {
        // Base version, class, class version, method.
        CHECK(r.error() == Error::bad_mad_header);
      } else if (i == 16 || i == 17) {
        // Attribute ID 0x0013 (REP). Flipping bit 0 gives 0x0012 (REJ), which decodes as a REJ;
        // every other flip here gives an ID we do not decode.
        const std::uint16_t attr = load_be16(mad.data() + 16);
        if (attr >= kCmAttrReq && attr <= kCmAttrDrep) {
          REQUIRE(r.has_value());
          CHECK(cm_attribute_id(r->body) == attr);
        } else {
          CHECK(r.error() == Error::unknown_attribute);
        }
      } else {
        // Status, class-specific, TID, reserved, attribute modifier: data, kept bit for bit.
        REQUIRE(r.has_value());
        CHECK(encode(*r) == mad);
      }
    }
  }
}

TEST_CASE("cm: MAD header values other than the CM's are bad_mad_header", "[cm]") {
  const std::vector<std::uint8_t> original = vector_mad(12);
  struct Case {
    std::size_t offset;
    std::uint8_t value;
  };
  for (const Case c : {Case{0, 0x00}, Case{0, 0x02}, Case{0, 0x80},  // base version (0x80 = OPA)
                       Case{1, 0x01}, Case{1, 0x03}, Case{1, 0x87},  // class: SMP, SA, CM w/ bit 7
                       Case{2, 0x01}, Case{2, 0x03},                 // class version
                       Case{3, 0x01}, Case{3, 0x02}, Case{3, 0x83}, Case{3, 0x13}}) {  // methods
    INFO("offset " << c.offset << " value " << int{c.value});
    std::vector<std::uint8_t> mad = original;
    mad[c.offset] = c.value;
    CHECK(decode_cm_mad(mad).error() == Error::bad_mad_header);
  }
}

TEST_CASE("cm: attribute IDs other than REQ..DREP are unknown_attribute", "[cm]") {
  const std::vector<std::uint8_t> original = vector_mad(14);
  for (const std::uint16_t attr :
       {std::uint16_t{0x0000}, kCmAttrClassPortInfo, std::uint16_t{0x000F}, kCmAttrSidrReq,
        kCmAttrSidrRep, kCmAttrLap, kCmAttrApr, std::uint16_t{0x1000}, std::uint16_t{0xFFFF}}) {
    INFO("attribute " << attr);
    std::vector<std::uint8_t> mad = original;
    store_be16(mad.data() + 16, attr);
    CHECK(decode_cm_mad(mad).error() == Error::unknown_attribute);
  }
}

TEST_CASE("cm: REJ reject info length above the 72-byte ARI is bad_field", "[cm]") {
  std::vector<std::uint8_t> mad = encode(CmMad{MadHeader{}, distinctive_rej()});
  mad[body(9)] = static_cast<std::uint8_t>(72 << 1);
  CHECK(decode_cm_mad(mad).has_value());
  mad[body(9)] = static_cast<std::uint8_t>(73 << 1);
  CHECK(decode_cm_mad(mad).error() == Error::bad_field);
  mad[body(9)] = static_cast<std::uint8_t>(127 << 1 | 1);
  CHECK(decode_cm_mad(mad).error() == Error::bad_field);
}

TEST_CASE("cm: semantic values decode as data for the CM agent to judge", "[cm]") {
  // An invalid path MTU or transport type must reach the agent, which answers with a REJ
  // (invalid MTU / invalid transport type); decode does not drop it.
  std::vector<std::uint8_t> mad = vector_mad(12);
  mad[body(50)] = static_cast<std::uint8_t>((0xF << 4) | (mad[body(50)] & 0x0F));
  mad[body(43)] = static_cast<std::uint8_t>(mad[body(43)] | 0x06);
  Result<CmMad> r = decode_cm_mad(mad);
  REQUIRE(r.has_value());
  const CmReq& req = std::get<CmReq>(r->body);
  CHECK(req.path_mtu == 0xF);
  CHECK_FALSE(ib_mtu_bytes(req.path_mtu).has_value());
  CHECK(req.transport_service_type == 3);
  CHECK(encode(*r) == mad);
}

// ---- Encode errors ------------------------------------------------------------------------------

TEST_CASE("cm: encode rejects a short buffer and writes nothing", "[cm]") {
  const CmMad mad{MadHeader{}, distinctive_rtu()};
  std::vector<std::uint8_t> out(255, 0xEE);
  CHECK(encode_cm_mad(mad, out).error() == Error::buffer_too_small);
  CHECK(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xEE; }));
  std::vector<std::uint8_t> big(300, 0xEE);  // a larger buffer is fine: 256 bytes written
  CHECK(*encode_cm_mad(mad, big) == kMadSize);
  CHECK(big[256] == 0xEE);
}

TEST_CASE("cm: encode rejects a header decode would reject", "[cm]") {
  std::vector<std::uint8_t> out(kMadSize, 0xEE);
  MadHeader h;
  h.base_version = 2;
  CHECK(encode_cm_mad(CmMad{h, CmRtu{}}, out).error() == Error::bad_mad_header);
  h = MadHeader{};
  h.mgmt_class = 0x04;
  CHECK(encode_cm_mad(CmMad{h, CmRtu{}}, out).error() == Error::bad_mad_header);
  h = MadHeader{};
  h.class_version = 1;
  CHECK(encode_cm_mad(CmMad{h, CmRtu{}}, out).error() == Error::bad_mad_header);
  h = MadHeader{};
  h.method = 0x83;
  CHECK(encode_cm_mad(CmMad{h, CmRtu{}}, out).error() == Error::bad_mad_header);
  CHECK(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xEE; }));
}

TEST_CASE("cm: encode rejects every field wider than its wire width", "[cm]") {
  std::vector<std::uint8_t> out(kMadSize, 0xEE);
  auto rejects = [&out](const CmBody& b) {
    return encode_cm_mad(CmMad{MadHeader{}, b}, out).error() == Error::value_out_of_range;
  };
  auto req = [](auto mutate) {
    CmReq m = distinctive_req();
    mutate(m);
    return CmBody{m};
  };
  CHECK(rejects(req([](CmReq& m) { m.vendor_id = 1U << 24; })));
  CHECK(rejects(req([](CmReq& m) { m.local_qpn = 1U << 24; })));
  CHECK(rejects(req([](CmReq& m) { m.local_eecn = 1U << 24; })));
  CHECK(rejects(req([](CmReq& m) { m.remote_eecn = 1U << 24; })));
  CHECK(rejects(req([](CmReq& m) { m.remote_cm_response_timeout = 32; })));
  CHECK(rejects(req([](CmReq& m) { m.transport_service_type = 4; })));
  CHECK(rejects(req([](CmReq& m) { m.starting_psn = 1U << 24; })));
  CHECK(rejects(req([](CmReq& m) { m.local_cm_response_timeout = 32; })));
  CHECK(rejects(req([](CmReq& m) { m.retry_count = 8; })));
  CHECK(rejects(req([](CmReq& m) { m.path_mtu = 16; })));
  CHECK(rejects(req([](CmReq& m) { m.rnr_retry_count = 8; })));
  CHECK(rejects(req([](CmReq& m) { m.max_cm_retries = 16; })));
  CHECK(rejects(req([](CmReq& m) { m.extended_transport_type = 8; })));
  CHECK(rejects(req([](CmReq& m) { m.primary_flow_label = 1U << 20; })));
  CHECK(rejects(req([](CmReq& m) { m.reserved_90 = 64; })));
  CHECK(rejects(req([](CmReq& m) { m.primary_packet_rate = 64; })));
  CHECK(rejects(req([](CmReq& m) { m.primary_sl = 16; })));
  CHECK(rejects(req([](CmReq& m) { m.reserved_94 = 8; })));
  CHECK(rejects(req([](CmReq& m) { m.primary_local_ack_timeout = 32; })));
  CHECK(rejects(req([](CmReq& m) { m.reserved_95 = 8; })));

  auto rep = [](auto mutate) {
    CmRep m = distinctive_rep();
    mutate(m);
    return CmBody{m};
  };
  CHECK(rejects(rep([](CmRep& m) { m.local_qpn = 1U << 24; })));
  CHECK(rejects(rep([](CmRep& m) { m.local_eecn = 1U << 24; })));
  CHECK(rejects(rep([](CmRep& m) { m.starting_psn = 1U << 24; })));
  CHECK(rejects(rep([](CmRep& m) { m.vendor_id = 1U << 24; })));
  CHECK(rejects(rep([](CmRep& m) { m.target_ack_delay = 32; })));
  CHECK(rejects(rep([](CmRep& m) { m.failover_accepted = 4; })));
  CHECK(rejects(rep([](CmRep& m) { m.rnr_retry_count = 8; })));
  CHECK(rejects(rep([](CmRep& m) { m.reserved_27 = 16; })));

  CmRej rej = distinctive_rej();
  rej.message_rejected = 4;
  CHECK(rejects(rej));
  rej = distinctive_rej();
  rej.reserved_8 = 64;
  CHECK(rejects(rej));
  rej = distinctive_rej();
  rej.reject_info_length = 73;
  CHECK(rejects(rej));
  rej = distinctive_rej();
  rej.reserved_9 = 2;
  CHECK(rejects(rej));

  CmMra mra = distinctive_mra();
  mra.message_mraed = 4;
  CHECK(rejects(mra));
  mra = distinctive_mra();
  mra.reserved_8 = 64;
  CHECK(rejects(mra));
  mra = distinctive_mra();
  mra.service_timeout = 32;
  CHECK(rejects(mra));
  mra = distinctive_mra();
  mra.reserved_9 = 8;
  CHECK(rejects(mra));

  CmDreq dreq = distinctive_dreq();
  dreq.remote_qpn = 1U << 24;
  CHECK(rejects(dreq));

  CHECK(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xEE; }));
}

// ---- Helpers ------------------------------------------------------------------------------------

TEST_CASE("cm: rdma_cm service IDs (RDMA_PS_TCP)", "[cm]") {
  STATIC_REQUIRE(rdma_cm_service_id(7471) == 0x0000000001061D2FULL);
  STATIC_REQUIRE(rdma_cm_service_id(12345) == 0x0000000001063039ULL);
  CHECK(rdma_cm_port(0x0000000001061D2FULL) == std::optional<std::uint16_t>{7471});
  CHECK(rdma_cm_port(rdma_cm_service_id(0)) == std::optional<std::uint16_t>{0});
  CHECK(rdma_cm_port(rdma_cm_service_id(65535)) == std::optional<std::uint16_t>{65535});
  CHECK_FALSE(rdma_cm_port(0x0000000001111D2FULL).has_value());  // RDMA_PS_UDP
  CHECK_FALSE(rdma_cm_port(0x00000000013F1D2FULL).has_value());  // RDMA_PS_IB
  CHECK_FALSE(rdma_cm_port(0x0100000001061D2FULL).has_value());
  CHECK_FALSE(rdma_cm_port(0).has_value());
}

TEST_CASE("cm: IB path MTU enum", "[cm]") {
  STATIC_REQUIRE(ib_mtu_bytes(1) == 256U);
  CHECK(ib_mtu_bytes(2) == std::optional<std::uint32_t>{512});
  CHECK(ib_mtu_bytes(3) == std::optional<std::uint32_t>{1024});
  CHECK(ib_mtu_bytes(4) == std::optional<std::uint32_t>{2048});
  CHECK(ib_mtu_bytes(5) == std::optional<std::uint32_t>{4096});
  CHECK_FALSE(ib_mtu_bytes(0).has_value());
  CHECK_FALSE(ib_mtu_bytes(6).has_value());
  CHECK_FALSE(ib_mtu_bytes(15).has_value());
  for (std::uint8_t e = 1; e <= 5; ++e)
    CHECK(ib_mtu_enum(*ib_mtu_bytes(e)) == e);
  CHECK_FALSE(ib_mtu_enum(0).has_value());
  CHECK_FALSE(ib_mtu_enum(128).has_value());
  CHECK_FALSE(ib_mtu_enum(1500).has_value());
  CHECK_FALSE(ib_mtu_enum(1025).has_value());
  CHECK_FALSE(ib_mtu_enum(8192).has_value());
}

TEST_CASE("cm: IPv4-mapped GIDs", "[cm]") {
  const IbGid g = ipv4_mapped_gid(ip(192, 168, 1, 10));
  CHECK(naa::testbench::to_hex({g.begin(), g.end()}) == "00000000000000000000ffffc0a8010a");
  CHECK(ipv4_from_mapped_gid(g) == std::optional<std::uint32_t>{0xC0A8010A});
  IbGid link_local{0xFE, 0x80};
  CHECK_FALSE(ipv4_from_mapped_gid(link_local).has_value());
  IbGid compat = g;  // ::c0a8:010a (deprecated IPv4-compatible) is not IPv4-mapped
  compat[10] = 0;
  compat[11] = 0;
  CHECK_FALSE(ipv4_from_mapped_gid(compat).has_value());
  IbGid nonzero_prefix = g;
  nonzero_prefix[0] = 1;
  CHECK_FALSE(ipv4_from_mapped_gid(nonzero_prefix).has_value());
}

TEST_CASE("cm: rdma_cm private-data header", "[cm]") {
  RdmaCmIpHeader h;
  h.src_port = 0xB001;
  h.src_ip = ip(192, 168, 1, 10);
  h.dst_ip = ip(192, 168, 1, 20);
  std::array<std::uint8_t, 92> pd{};
  pd.fill(0xEE);
  REQUIRE(*encode_rdma_cm_ip_header(h, pd) == kRdmaCmIpHeaderSize);
  // The bytes of the REQ vector's private data (frame 12, MAD offset 164).
  const std::vector<std::uint8_t> mad = vector_mad(12);
  CHECK(std::equal(pd.begin(), pd.begin() + 36, mad.begin() + body(140)));
  CHECK(pd[36] == 0xEE);  // only 36 bytes written
  CHECK(*decode_rdma_cm_ip_header(pd) == h);

  CHECK(decode_rdma_cm_ip_header(ByteView(pd).first(35)).error() == Error::too_short);
  std::array<std::uint8_t, 36> bad{};
  std::copy_n(pd.begin(), 36, bad.begin());
  bad[0] = 0x01;  // cma version
  CHECK(decode_rdma_cm_ip_header(bad).error() == Error::bad_field);
  bad[0] = 0x00;
  bad[1] = 0x60;  // IPv6
  CHECK(decode_rdma_cm_ip_header(bad).error() == Error::bad_field);
  bad[1] = 0x00;
  CHECK(decode_rdma_cm_ip_header(bad).error() == Error::bad_field);
  bad[1] = 0x4F;  // low nibble is not the IP version: kept as data
  REQUIRE(decode_rdma_cm_ip_header(bad).has_value());
  CHECK(decode_rdma_cm_ip_header(bad)->ip_version == 0x4F);

  std::array<std::uint8_t, 35> small{};
  CHECK(encode_rdma_cm_ip_header(h, small).error() == Error::buffer_too_small);
  RdmaCmIpHeader v6 = h;
  v6.ip_version = 0x60;
  CHECK(encode_rdma_cm_ip_header(v6, pd).error() == Error::value_out_of_range);
  RdmaCmIpHeader v1 = h;
  v1.version = 1;
  CHECK(encode_rdma_cm_ip_header(v1, pd).error() == Error::value_out_of_range);
}

TEST_CASE("cm: names of attributes and REJ reasons", "[cm]") {
  CHECK(cm_attribute_name(0x10) == "REQ");
  CHECK(cm_attribute_name(0x11) == "MRA");
  CHECK(cm_attribute_name(0x12) == "REJ");
  CHECK(cm_attribute_name(0x13) == "REP");
  CHECK(cm_attribute_name(0x14) == "RTU");
  CHECK(cm_attribute_name(0x15) == "DREQ");
  CHECK(cm_attribute_name(0x16) == "DREP");
  CHECK(cm_attribute_name(0x19) == "LAP");
  CHECK(cm_attribute_name(0x1234) == "unknown");
  CHECK(cm_rej_reason_name(kCmRejNoQp) == "no QP available");
  CHECK(cm_rej_reason_name(kCmRejTimeout) == "timeout");
  CHECK(cm_rej_reason_name(kCmRejInvalidServiceId) == "invalid service ID");
  CHECK(cm_rej_reason_name(kCmRejConsumerDefined) == "consumer-defined");
  CHECK(cm_rej_reason_name(35) == "vendor option not supported");
  CHECK(cm_rej_reason_name(0) == "unknown");
  CHECK(cm_rej_reason_name(34) == "unknown");
  CHECK(cm_rej_reason_name(36) == "unknown");
  CHECK(cm_rej_reason_name(0xFFFF) == "unknown");
}

TEST_CASE("cm: fixed values of PROTOCOL.md 4", "[cm]") {
  STATIC_REQUIRE(kMadSize == 256);
  STATIC_REQUIRE(kCmBodyOffset == 24);
  STATIC_REQUIRE(kCmQKey == 0x80010000U);
  STATIC_REQUIRE(kCmQpn == 1);
  STATIC_REQUIRE(kCmRejNoQp == 1);
  STATIC_REQUIRE(kCmRejTimeout == 4);
  STATIC_REQUIRE(kCmRejInvalidServiceId == 8);
  STATIC_REQUIRE(kCmRejConsumerDefined == 28);
}
