// MRSP peers (docs/protocol.md "Peers"): 0x06 peer, 0x07 peer bound, 0x08 handover, 0x09 handed
// over. Exact bytes written by hand from the document, round trips, and every malformed message
// refused with its error (a receiver answers those as any message that does not decode).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "naa/protocol/mrsp.hpp"
#include "vectors.hpp"

using namespace naa::protocol;
using naa::testbench::from_hex;

TEST_CASE("mrsp peers: 0x06 peer has the bytes docs/protocol.md describes", "[mrsp]") {
  const MrspPeer in{3,          0x0A000102, 0x00012345, 4096, 0x0000'0001'0000'2000ULL,
                    0xA1B2C3D4, 0x00010000, 0x0000009E};
  std::vector<std::uint8_t> out(kMrspPeerSize);
  REQUIRE(*encode_mrsp_peer(in, out) == kMrspPeerSize);
  CHECK(out == from_hex("06030000"
                        "0A000102"
                        "00012345"
                        "00001000"
                        "0000000100002000"
                        "A1B2C3D4"
                        "00010000"
                        "0000009E"));
  const Result<MrspMessage> m = decode_mrsp(out);
  REQUIRE(m.has_value());
  CHECK(std::get<MrspPeer>(*m) == in);
  std::vector<std::uint8_t> small(kMrspPeerSize - 1, 0xEE);
  CHECK(encode_mrsp_peer(in, small).error() == Error::buffer_too_small);
  CHECK(small == std::vector<std::uint8_t>(kMrspPeerSize - 1, 0xEE));
}

TEST_CASE("mrsp peers: 0x07, 0x08 and 0x09 have their bytes and round-trip", "[mrsp]") {
  std::vector<std::uint8_t> bound(kMrspPeerBoundSize);
  REQUIRE(*encode_mrsp_peer_bound(MrspPeerBound{7, 0x0000A105, 0xABCDEF}, bound) ==
          kMrspPeerBoundSize);
  CHECK(bound == from_hex("07070000"
                          "0000A105"
                          "00ABCDEF"));
  Result<MrspMessage> m = decode_mrsp(bound);
  REQUIRE(m.has_value());
  CHECK(std::get<MrspPeerBound>(*m) == MrspPeerBound{7, 0x0000A105, 0xABCDEF});

  std::vector<std::uint8_t> handover(kMrspHandoverSize);
  REQUIRE(*encode_mrsp_handover(MrspHandover{0x0A000101, 0x0000A105, 0xABCDEF}, handover) ==
          kMrspHandoverSize);
  CHECK(handover == from_hex("08000000"
                             "0A000101"
                             "0000A105"
                             "00ABCDEF"));
  m = decode_mrsp(handover);
  REQUIRE(m.has_value());
  CHECK(std::get<MrspHandover>(*m) == MrspHandover{0x0A000101, 0x0000A105, 0xABCDEF});

  std::vector<std::uint8_t> done(kMrspHandedOverSize);
  REQUIRE(*encode_mrsp_handed_over(done) == kMrspHandedOverSize);
  CHECK(done == from_hex("09000000"));
  m = decode_mrsp(done);
  REQUIRE(m.has_value());
  CHECK(std::holds_alternative<MrspHandedOver>(*m));
  CHECK(mrsp_error_name(kMrspErrorBadPeer) == "bad peer");
  CHECK(is_known_mrsp_error_code(kMrspErrorBadPeer));
}

TEST_CASE("mrsp peers: malformed 0x06-0x09 are refused with their error", "[mrsp]") {
  std::vector<std::uint8_t> peer(kMrspPeerSize);
  REQUIRE(encode_mrsp_peer(MrspPeer{1, 2, 3, 1024, 4, 5, 6, 0x81}, peer));
  CHECK(decode_mrsp(ByteView(peer).first(kMrspPeerSize - 1)).error() == Error::count_mismatch);
  std::vector<std::uint8_t> longer = peer;
  longer.push_back(0);
  CHECK(decode_mrsp(longer).error() == Error::count_mismatch);
  std::vector<std::uint8_t> reserved = peer;
  reserved[2] = 1;
  CHECK(decode_mrsp(reserved).error() == Error::bad_field);

  std::vector<std::uint8_t> bound(kMrspPeerBoundSize);
  REQUIRE(encode_mrsp_peer_bound(MrspPeerBound{0, 0x105, 1}, bound));
  CHECK(decode_mrsp(ByteView(bound).first(8)).error() == Error::count_mismatch);
  bound[8] = 1;  // a PSN of 25 bits
  CHECK(decode_mrsp(bound).error() == Error::bad_field);

  std::vector<std::uint8_t> handover(kMrspHandoverSize);
  REQUIRE(encode_mrsp_handover(MrspHandover{1, 2, 3}, handover));
  std::vector<std::uint8_t> indexed = handover;
  indexed[1] = 1;  // byte 1 of a 0x08 is zero
  CHECK(decode_mrsp(indexed).error() == Error::bad_field);
  std::vector<std::uint8_t> wide = handover;
  wide[12] = 0x80;
  CHECK(decode_mrsp(wide).error() == Error::bad_field);
  CHECK(decode_mrsp(ByteView(handover).first(12)).error() == Error::count_mismatch);

  CHECK(decode_mrsp(from_hex("0900000000")).error() == Error::too_long);
  CHECK(decode_mrsp(from_hex("09010000")).error() == Error::bad_field);
  CHECK(decode_mrsp(from_hex("0A000000")).error() == Error::bad_field);  // past the last type

  // Encoders refuse a PSN wider than 24 bits and write nothing.
  std::vector<std::uint8_t> out(kMrspHandoverSize, 0xEE);
  CHECK(encode_mrsp_handover(MrspHandover{1, 2, 0x1000000}, out).error() ==
        Error::value_out_of_range);
  CHECK(encode_mrsp_peer_bound(MrspPeerBound{0, 1, 0x1000000}, out).error() ==
        Error::value_out_of_range);
  CHECK(out == std::vector<std::uint8_t>(kMrspHandoverSize, 0xEE));
}
