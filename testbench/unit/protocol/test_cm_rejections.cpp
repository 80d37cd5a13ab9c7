// IB CM MADs (PROTOCOL.md 4 and 8): every rejection. decode refuses wrong sizes, a MAD header
// other than the CM's and unknown attributes; encode refuses short buffers and fields wider than
// their wire width, writing nothing; and the rdma_cm helpers (service IDs, MTU enum, mapped GIDs,
// the private-data header). The vectors and round trips are in test_cm.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cm_fixtures.hpp"

using namespace naa::protocol;
using namespace naa::testbench::cm_fixtures;

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
