// Shared fixtures of the IB CM tests (test_cm.cpp, test_cm_rejections.cpp): the vector frames'
// MADs, messages with every field at a distinctive value, and the encode/decode round trip.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "naa/protocol/cm.hpp"
#include "vectors.hpp"

namespace naa::testbench::cm_fixtures {

using namespace naa::protocol;

// Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8; the MAD is followed by the 4-byte ICRC.
constexpr std::size_t kMadOffset = 62;

inline std::vector<std::uint8_t> frame_bytes(int index) {
  return naa::testbench::roce_frame(index).bytes;
}

inline std::vector<std::uint8_t> vector_mad(int index) {
  const std::vector<std::uint8_t> frame = frame_bytes(index);
  REQUIRE(frame.size() == kMadOffset + kMadSize + 4);
  return {frame.begin() + kMadOffset, frame.begin() + kMadOffset + kMadSize};
}

inline std::vector<std::uint8_t> encode(const CmMad& mad) {
  std::vector<std::uint8_t> out(kMadSize, 0xEE);
  const Result<std::size_t> n = encode_cm_mad(mad, out);
  REQUIRE(n.has_value());
  CHECK(*n == kMadSize);
  return out;
}

template <std::size_t N>
inline bool all_zero(const std::array<std::uint8_t, N>& a) {
  return std::all_of(a.begin(), a.end(), [](std::uint8_t b) { return b == 0; });
}

template <std::size_t N>
inline std::array<std::uint8_t, N> pattern(std::uint8_t seed) {
  std::array<std::uint8_t, N> a{};
  for (std::size_t i = 0; i < N; ++i)
    a[i] = static_cast<std::uint8_t>(seed + 7 * i);
  return a;
}

constexpr std::uint32_t ip(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return (std::uint32_t{a} << 24) | (std::uint32_t{b} << 16) | (std::uint32_t{c} << 8) | d;
}

inline MadHeader distinctive_header() {
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
inline CmReq distinctive_req() {
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

inline CmRep distinctive_rep() {
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

inline CmRej distinctive_rej() {
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

inline CmMra distinctive_mra() {
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

inline CmRtu distinctive_rtu() {
  CmRtu m;
  m.local_comm_id = 0x4A4B4C4D;
  m.remote_comm_id = 0x5A5B5C5D;
  m.private_data = pattern<224>(0x88);
  return m;
}

inline CmDreq distinctive_dreq() {
  CmDreq m;
  m.local_comm_id = 0x6A6B6C6D;
  m.remote_comm_id = 0x7A7B7C7D;
  m.remote_qpn = 0xFEDCBA;
  m.reserved_11 = 0x99;
  m.private_data = pattern<220>(0x99);
  return m;
}

inline CmDrep distinctive_drep() {
  CmDrep m;
  m.local_comm_id = 0x8A8B8C8D;
  m.remote_comm_id = 0x9A9B9C9D;
  m.private_data = pattern<224>(0xAA);
  return m;
}

// encode, check the header bytes, decode, compare, re-encode: returns the encoded MAD.
inline std::vector<std::uint8_t> round_trip(const CmBody& body, std::uint16_t expected_attribute) {
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

}  // namespace naa::testbench::cm_fixtures
