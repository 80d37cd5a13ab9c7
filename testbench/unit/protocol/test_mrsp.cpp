// MRSP (PROTOCOL.md 5.1): exact bytes of messages written by hand from the specification, round
// trips at 0, 1, 3, 32 and 255 entries, and every rejection.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "naa/protocol/mrsp.hpp"
#include "vectors.hpp"

using namespace naa::protocol;
using naa::testbench::from_hex;
using naa::testbench::to_hex;

namespace {

// Entries whose every field differs from entry to entry and uses the full width somewhere.
std::vector<MrspRequestEntry> request_entries(std::size_t n) {
  std::vector<MrspRequestEntry> v;
  for (std::size_t i = 0; i < n; ++i) {
    MrspRequestEntry e;
    e.flags = static_cast<std::uint8_t>(i % 16);
    e.naa_address = i == 0 ? kMrspMaxNaaAddress : (0x00A1B2C3D4E5F600ULL + i * 0x10000);
    e.host_va = 0x7F00000000000000ULL + i * 0x1000;
    e.host_rkey = static_cast<std::uint32_t>(0xFFFFFFFFU - i);
    e.size = static_cast<std::uint32_t>(0x100 * (i + 1));
    v.push_back(e);
  }
  return v;
}

std::vector<MrspAdvertisementEntry> advertisement_entries(std::size_t n) {
  std::vector<MrspAdvertisementEntry> v;
  for (std::size_t i = 0; i < n; ++i) {
    MrspAdvertisementEntry e;
    e.naa_address = i == 0 ? ~std::uint64_t{0} : 0x0123456789000000ULL + i * 0x100;
    e.rkey = static_cast<std::uint32_t>(0xA0000000U + i);
    e.size = static_cast<std::uint32_t>(0xFFFFFFFFU - i);
    v.push_back(e);
  }
  return v;
}

std::vector<std::uint8_t> encode_request(const std::vector<MrspRequestEntry>& entries) {
  std::vector<std::uint8_t> out(mrsp_request_size(entries.size()));
  const Result<std::size_t> n = encode_mrsp_request(entries, out);
  REQUIRE(n.has_value());
  CHECK(*n == out.size());
  return out;
}

std::vector<std::uint8_t> encode_advertisement(const std::vector<MrspAdvertisementEntry>& entries) {
  std::vector<std::uint8_t> out(mrsp_advertisement_size(entries.size()));
  const Result<std::size_t> n = encode_mrsp_advertisement(entries, out);
  REQUIRE(n.has_value());
  CHECK(*n == out.size());
  return out;
}

bool untouched(const std::vector<std::uint8_t>& v) {
  return std::all_of(v.begin(), v.end(), [](std::uint8_t b) { return b == 0xEE; });
}

}  // namespace

// ---- Exact bytes, written by hand from PROTOCOL.md 5.1
// -------------------------------------------

TEST_CASE("mrsp: a request has the bytes PROTOCOL.md 5.1 describes", "[mrsp]") {
  // Parameter 0: input written once, at NAA address 0x1000, from host VA 0x7f0000001000 with rkey
  // 0x1234, 4096 bytes. Parameter 1: output. Then one internal (scratch) region.
  const std::vector<MrspRequestEntry> entries = {
      {kMrspFlagInput | kMrspFlagSingleSend, 0x1000, 0x00007F0000001000ULL, 0x1234, 4096},
      {kMrspFlagOutput, 0x00123456789ABCULL, 0x00007F0000203000ULL, 0xCAFEF00D, 0x10},
      {kMrspFlagInternal, 0x00FFFFFFFFFF0000ULL, 0, 0, 0x100},
  };
  // Each entry: flags (1) | NAA address (7) | host VA (8) | host rkey (4) | size (4).
  const std::string expected =
      "01030000"  // type 1, 3 entries, 2 zero bytes
      "06"
      "00000000001000"
      "00007f0000001000"
      "00001234"
      "00001000"
      "08"
      "00123456789abc"
      "00007f0000203000"
      "cafef00d"
      "00000010"
      "01"
      "ffffffffff0000"
      "0000000000000000"
      "00000000"
      "00000100";
  const std::vector<std::uint8_t> bytes = encode_request(entries);
  CHECK(to_hex(bytes) == expected);
  CHECK(bytes.size() == 4 + 3 * 24);

  const std::vector<std::uint8_t> written_by_hand = from_hex(expected);  // the view points into it
  Result<MrspRequestView> view = decode_mrsp_request(written_by_hand);
  REQUIRE(view.has_value());
  REQUIRE(view->count() == 3);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(view->entry(i) == entries[i]);
}

TEST_CASE("mrsp: an advertisement and an error have the bytes PROTOCOL.md 5.1 describes",
          "[mrsp]") {
  const std::vector<MrspAdvertisementEntry> entries = {
      {0x0000000000001000ULL, 0x00000ABC, 4096},
      {0x8000000000000010ULL, 0xFFFF0001, 0x10},
  };
  CHECK(to_hex(encode_advertisement(entries)) ==
        "02020000"
        "0000000000001000"
        "00000abc"
        "00001000"
        "8000000000000010"
        "ffff0001"
        "00000010");

  std::vector<std::uint8_t> out(4, 0xEE);
  REQUIRE(*encode_mrsp_error(kMrspErrorTooManyRegions, out) == 4);
  CHECK(to_hex(out) == "00030000");
  Result<MrspMessage> m = decode_mrsp(from_hex("00020000"));
  REQUIRE(m.has_value());
  REQUIRE(std::holds_alternative<MrspError>(*m));
  CHECK(std::get<MrspError>(*m).code == kMrspErrorInvalidAddress);
}

// ---- Round trips
// ----------------------------------------------------------------------------------

TEST_CASE("mrsp: request round trips with 0, 1, 3, 32 and 255 entries", "[mrsp]") {
  for (const std::size_t n : {0U, 1U, 3U, 32U, 255U}) {
    INFO(n << " entries");
    const std::vector<MrspRequestEntry> entries = request_entries(n);
    const std::vector<std::uint8_t> bytes = encode_request(entries);
    CHECK(bytes.size() == 4 + 24 * n);
    CHECK(bytes[0] == 0x01);
    CHECK(bytes[1] == n);
    CHECK(bytes[2] == 0);
    CHECK(bytes[3] == 0);

    Result<MrspMessage> m = decode_mrsp(bytes);
    REQUIRE(m.has_value());
    REQUIRE(std::holds_alternative<MrspRequestView>(*m));
    const MrspRequestView& view = std::get<MrspRequestView>(*m);
    REQUIRE(view.count() == n);
    CHECK(view.bytes().data() == bytes.data());  // a view, not a copy
    std::vector<MrspRequestEntry> decoded;
    for (std::size_t i = 0; i < view.count(); ++i)
      decoded.push_back(view.entry(i));
    CHECK(decoded == entries);
    CHECK(encode_request(decoded) == bytes);
  }
}

TEST_CASE("mrsp: advertisement round trips with 0, 1, 3, 32 and 255 entries", "[mrsp]") {
  for (const std::size_t n : {0U, 1U, 3U, 32U, 255U}) {
    INFO(n << " entries");
    const std::vector<MrspAdvertisementEntry> entries = advertisement_entries(n);
    const std::vector<std::uint8_t> bytes = encode_advertisement(entries);
    CHECK(bytes.size() == 4 + 16 * n);
    CHECK(bytes[0] == 0x02);
    CHECK(bytes[1] == n);

    Result<MrspMessage> m = decode_mrsp(bytes);
    REQUIRE(m.has_value());
    REQUIRE(std::holds_alternative<MrspAdvertisementView>(*m));
    const MrspAdvertisementView& view = std::get<MrspAdvertisementView>(*m);
    REQUIRE(view.count() == n);
    std::vector<MrspAdvertisementEntry> decoded;
    for (std::size_t i = 0; i < view.count(); ++i)
      decoded.push_back(view.entry(i));
    CHECK(decoded == entries);
    CHECK(encode_advertisement(decoded) == bytes);
  }
}

TEST_CASE("mrsp: the largest request fits the NAA's receive buffer exactly", "[mrsp]") {
  STATIC_REQUIRE(kMrspMaxEntries == 255);
  STATIC_REQUIRE(kMrspMaxMessageSize == 4 + 24 * 255);
  std::vector<std::uint8_t> out(kMrspMaxMessageSize);
  CHECK(*encode_mrsp_request(request_entries(255), out) == kMrspMaxMessageSize);
}

TEST_CASE("mrsp: error codes are data", "[mrsp]") {
  for (unsigned code = 0; code <= 0xFF; ++code) {
    INFO("code " << code);
    std::vector<std::uint8_t> out(4);
    REQUIRE(encode_mrsp_error(static_cast<std::uint8_t>(code), out).has_value());
    Result<MrspMessage> m = decode_mrsp(out);
    REQUIRE(m.has_value());
    CHECK(std::get<MrspError>(*m).code == code);
    CHECK(is_known_mrsp_error_code(static_cast<std::uint8_t>(code)) == (code >= 1 && code <= 8));
  }
  CHECK(mrsp_error_name(kMrspErrorNotEnoughMemory) == "not enough memory");
  CHECK(mrsp_error_name(kMrspErrorInvalidAddress) == "invalid address");
  CHECK(mrsp_error_name(kMrspErrorTooManyRegions) == "too many regions");
  CHECK(mrsp_error_name(0) == "unknown");
  CHECK(mrsp_error_name(8) == "bad peer");
  CHECK(mrsp_error_name(9) == "unknown");
}

TEST_CASE("mrsp: unknown flag bits decode as data", "[mrsp]") {
  std::vector<std::uint8_t> bytes = encode_request({{0xF5, 0x42, 1, 2, 3}});
  CHECK(bytes[4] == 0xF5);
  Result<MrspRequestView> v = decode_mrsp_request(bytes);
  REQUIRE(v.has_value());
  CHECK(v->entry(0).flags == 0xF5);
  CHECK(v->entry(0).naa_address == 0x42);
  CHECK_FALSE(is_known_mrsp_flags(0xF5));
  CHECK_FALSE(is_known_mrsp_flags(0x10));
  CHECK(is_known_mrsp_flags(0x0F));
  CHECK(is_known_mrsp_flags(kMrspFlagInput | kMrspFlagOutput));
}

// ---- Rejections on decode
// -------------------------------------------------------------------------

TEST_CASE("mrsp: fewer than 4 bytes is too_short", "[mrsp]") {
  const std::vector<std::uint8_t> bytes = from_hex("01000000");
  for (std::size_t n = 0; n < 4; ++n) {
    INFO(n << " bytes");
    CHECK(decode_mrsp(ByteView(bytes).first(n)).error() == Error::too_short);
    CHECK(decode_mrsp_request(ByteView(bytes).first(n)).error() == Error::too_short);
    CHECK(decode_mrsp_advertisement(ByteView(bytes).first(n)).error() == Error::too_short);
  }
  CHECK(decode_mrsp(bytes).has_value());  // an empty request is legal
}

TEST_CASE("mrsp: reserved and unknown types are bad_field", "[mrsp]") {
  for (unsigned type = 3; type <= 0xFF; ++type) {
    if (type >= 4 && type <= 9) continue;  // handler images (0x04, 0x05), peers (0x06-0x09)
    INFO("type " << type);
    std::vector<std::uint8_t> bytes = {static_cast<std::uint8_t>(type), 0, 0, 0};
    CHECK(decode_mrsp(bytes).error() == Error::bad_field);
  }
}

TEST_CASE("mrsp: non-zero bytes 2-3 are bad_field for every type", "[mrsp]") {
  const std::vector<std::vector<std::uint8_t>> messages = {
      encode_request(request_entries(1)), encode_advertisement(advertisement_entries(1)),
      from_hex("00010000")};
  for (const auto& original : messages) {
    for (const std::size_t i : {2U, 3U}) {
      for (const std::uint8_t v : {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
        INFO("type " << int{original[0]} << " byte " << i << " = " << int{v});
        std::vector<std::uint8_t> bytes = original;
        bytes[i] = v;
        CHECK(decode_mrsp(bytes).error() == Error::bad_field);
      }
    }
  }
  std::vector<std::uint8_t> req = encode_request(request_entries(2));
  req[3] = 1;
  CHECK(decode_mrsp_request(req).error() == Error::bad_field);
  std::vector<std::uint8_t> adv = encode_advertisement(advertisement_entries(2));
  adv[2] = 1;
  CHECK(decode_mrsp_advertisement(adv).error() == Error::bad_field);
}

TEST_CASE("mrsp: a length that disagrees with the count is count_mismatch, both ways", "[mrsp]") {
  SECTION("request") {
    const std::vector<std::uint8_t> good = encode_request(request_entries(3));
    for (const std::size_t len : {4U, 5U, 27U, 28U, 51U, 75U, 77U, 100U, 4U + 16 * 3}) {
      INFO("length " << len);
      std::vector<std::uint8_t> bytes = good;
      bytes.resize(len, 0);
      CHECK(decode_mrsp(bytes).error() == Error::count_mismatch);
      CHECK(decode_mrsp_request(bytes).error() == Error::count_mismatch);
    }
    std::vector<std::uint8_t> bytes = good;
    bytes[1] = 2;  // count says fewer than there are
    CHECK(decode_mrsp(bytes).error() == Error::count_mismatch);
    bytes[1] = 4;  // more
    CHECK(decode_mrsp(bytes).error() == Error::count_mismatch);
    bytes[1] = 255;
    CHECK(decode_mrsp(bytes).error() == Error::count_mismatch);
  }
  SECTION("advertisement") {
    const std::vector<std::uint8_t> good = encode_advertisement(advertisement_entries(3));
    for (const std::size_t len : {4U, 19U, 20U, 51U, 53U, 4U + 24 * 3}) {
      INFO("length " << len);
      std::vector<std::uint8_t> bytes = good;
      bytes.resize(len, 0);
      CHECK(decode_mrsp(bytes).error() == Error::count_mismatch);
      CHECK(decode_mrsp_advertisement(bytes).error() == Error::count_mismatch);
    }
    std::vector<std::uint8_t> bytes = good;
    bytes[1] = 0;
    CHECK(decode_mrsp(bytes).error() == Error::count_mismatch);
  }
  SECTION("an empty request with a trailing entry") {
    std::vector<std::uint8_t> bytes = encode_request(request_entries(1));
    bytes[1] = 0;
    CHECK(decode_mrsp(bytes).error() == Error::count_mismatch);
  }
}

TEST_CASE("mrsp: an error message longer than 4 bytes is too_long", "[mrsp]") {
  for (const std::size_t len : {5U, 8U, 20U, 28U}) {
    INFO("length " << len);
    std::vector<std::uint8_t> bytes(len, 0);
    bytes[1] = kMrspErrorInvalidAddress;
    CHECK(decode_mrsp(bytes).error() == Error::too_long);
  }
}

TEST_CASE("mrsp: the typed decoders refuse the other types", "[mrsp]") {
  const std::vector<std::uint8_t> req = encode_request(request_entries(1));
  const std::vector<std::uint8_t> adv = encode_advertisement(advertisement_entries(1));
  const std::vector<std::uint8_t> err = from_hex("00010000");
  CHECK(decode_mrsp_request(adv).error() == Error::bad_field);
  CHECK(decode_mrsp_request(err).error() == Error::bad_field);
  CHECK(decode_mrsp_advertisement(req).error() == Error::bad_field);
  CHECK(decode_mrsp_advertisement(err).error() == Error::bad_field);
  CHECK(decode_mrsp_request(from_hex("03000000")).error() == Error::bad_field);
}

// ---- Encode errors
// ----------------------------------------------------------------------------------

TEST_CASE("mrsp: encode rejects 256 entries and 57-bit NAA addresses, writing nothing", "[mrsp]") {
  std::vector<std::uint8_t> out(4 + 24 * 256, 0xEE);
  CHECK(encode_mrsp_request(request_entries(256), out).error() == Error::value_out_of_range);
  CHECK(encode_mrsp_advertisement(advertisement_entries(256), out).error() ==
        Error::value_out_of_range);
  std::vector<MrspRequestEntry> entries = request_entries(3);
  entries[2].naa_address = kMrspMaxNaaAddress + 1;
  CHECK(encode_mrsp_request(entries, out).error() == Error::value_out_of_range);
  entries[2].naa_address = ~std::uint64_t{0};
  CHECK(encode_mrsp_request(entries, out).error() == Error::value_out_of_range);
  CHECK(untouched(out));
}

TEST_CASE("mrsp: encode rejects a buffer one byte short, writing nothing", "[mrsp]") {
  for (const std::size_t n : {0U, 1U, 3U, 255U}) {
    INFO(n << " entries");
    std::vector<std::uint8_t> out(mrsp_request_size(n) - 1, 0xEE);
    CHECK(encode_mrsp_request(request_entries(n), out).error() == Error::buffer_too_small);
    CHECK(untouched(out));
    out.assign(mrsp_advertisement_size(n) - 1, 0xEE);
    CHECK(encode_mrsp_advertisement(advertisement_entries(n), out).error() ==
          Error::buffer_too_small);
    CHECK(untouched(out));
  }
  std::vector<std::uint8_t> out(3, 0xEE);
  CHECK(encode_mrsp_error(1, out).error() == Error::buffer_too_small);
  CHECK(untouched(out));
  // A larger buffer is fine; only the message is written.
  out.assign(10, 0xEE);
  CHECK(*encode_mrsp_error(1, out) == 4);
  CHECK(to_hex(out) == "00010000eeeeeeeeeeee");
}

// docs/protocol.md "Handler images": 0x04 install and 0x05 installed.
TEST_CASE("mrsp: install and installed round-trip byte for byte", "[mrsp]") {
  std::vector<std::uint8_t> out(kMrspInstallSize);
  const MrspInstall in{0x0000'1234'5678'9000ULL, 0x2345, 0x40};
  REQUIRE(*encode_mrsp_install(in, out) == kMrspInstallSize);
  CHECK(out == from_hex("04000000"
                        "0000123456789000"
                        "00002345"
                        "00000040"));
  Result<MrspMessage> m = decode_mrsp(out);
  REQUIRE(m.has_value());
  CHECK(std::get<MrspInstall>(*m) == in);
  std::vector<std::uint8_t> ok(kMrspInstalledSize);
  REQUIRE(*encode_mrsp_installed(30, ok) == kMrspInstalledSize);
  CHECK(ok == from_hex("051E0000"));
  m = decode_mrsp(ok);
  REQUIRE(m.has_value());
  CHECK(std::get<MrspInstalled>(*m).fn == 30);
  std::vector<std::uint8_t> small(kMrspInstallSize - 1);
  CHECK(encode_mrsp_install(in, small).error() == Error::buffer_too_small);
}

TEST_CASE("mrsp: malformed install and installed messages are refused", "[mrsp]") {
  std::vector<std::uint8_t> install(kMrspInstallSize);
  REQUIRE(encode_mrsp_install(MrspInstall{0x1000, 100, 0}, install));
  CHECK(decode_mrsp(ByteView(install).first(19)).error() == Error::count_mismatch);
  std::vector<std::uint8_t> longer = install;
  longer.push_back(0);
  CHECK(decode_mrsp(longer).error() == Error::count_mismatch);
  std::vector<std::uint8_t> counted = install;
  counted[1] = 1;  // byte 1 of a 0x04 is zero
  CHECK(decode_mrsp(counted).error() == Error::bad_field);
  CHECK(decode_mrsp(from_hex("05010000"
                             "00"))
            .error() == Error::too_long);
  CHECK(decode_mrsp(from_hex("05010100")).error() == Error::bad_field);
  CHECK(mrsp_error_name(kMrspErrorWrongMachine) == "wrong machine");
  CHECK(mrsp_error_name(kMrspErrorNoEntryPoint) == "missing entry point");
}
