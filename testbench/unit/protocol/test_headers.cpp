// Headers, the opcode table and whole-packet encode/decode: round trips and every rejection.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"

using namespace naa::protocol;

TEST_CASE("BTH round trip keeps every field and reserved bit", "[headers]") {
  Bth h;
  h.opcode = 0x0B;
  h.solicited_event = true;
  h.mig_req = true;
  h.pad_count = 2;
  h.pkey = 0x8001;
  h.fecn = true;
  h.becn = false;
  h.reserved6 = 0x15;
  h.dest_qpn = 0xABCDEF;
  h.ack_req = true;
  h.reserved7 = 0x5A;
  h.psn = 0xFEDCBA;
  std::array<std::uint8_t, kBthSize> b{};
  REQUIRE(encode_bth(h, b).value() == kBthSize);
  const std::array<std::uint8_t, 12> expected = {0x0B, 0xE0, 0x80, 0x01, 0x95, 0xAB,
                                                 0xCD, 0xEF, 0xDA, 0xFE, 0xDC, 0xBA};
  CHECK(b == expected);
  auto d = decode_bth(b);
  REQUIRE(d.has_value());
  CHECK(*d == h);
}

TEST_CASE("BTH rejections", "[headers]") {
  std::array<std::uint8_t, kBthSize> b{};
  CHECK(decode_bth(ByteView(b).first(11)).error() == Error::too_short);
  b[1] = 0x01;  // TVer 1
  CHECK(decode_bth(b).error() == Error::bad_tver);
  Bth h;
  h.psn = 0x1000000;
  CHECK(encode_bth(h, b).error() == Error::value_out_of_range);
  h.psn = 0;
  h.dest_qpn = 0x1000000;
  CHECK(encode_bth(h, b).error() == Error::value_out_of_range);
  h.dest_qpn = 0;
  h.pad_count = 4;
  CHECK(encode_bth(h, b).error() == Error::value_out_of_range);
  h.pad_count = 0;
  CHECK(encode_bth(h, MutableByteView(b).first(11)).error() == Error::buffer_too_small);
}

TEST_CASE("extension headers round trip and reject short input", "[headers]") {
  std::array<std::uint8_t, 32> b{};
  const Reth reth{0x0123456789ABCDEFULL, 0xCAFEBABE, 0x10000};
  REQUIRE(encode_reth(reth, b).value() == kRethSize);
  CHECK(b[0] == 0x01);
  CHECK(b[15] == 0x00);
  CHECK(b[13] == 0x01);
  CHECK(*decode_reth(b) == reth);
  CHECK(decode_reth(ByteView(b).first(15)).error() == Error::too_short);

  const Aeth aeth{0x62, 0x123456};
  REQUIRE(encode_aeth(aeth, b).value() == kAethSize);
  CHECK(b[0] == 0x62);
  CHECK(b[3] == 0x56);
  CHECK(*decode_aeth(b) == aeth);
  CHECK(decode_aeth(ByteView(b).first(3)).error() == Error::too_short);
  CHECK(encode_aeth(Aeth{0, 0x1000000}, b).error() == Error::value_out_of_range);

  const Deth deth{0x80010000, 0x7, 0x000001};
  REQUIRE(encode_deth(deth, b).value() == kDethSize);
  CHECK(*decode_deth(b) == deth);
  CHECK(decode_deth(ByteView(b).first(7)).error() == Error::too_short);
  CHECK(encode_deth(Deth{0, 0, 0x1000000}, b).error() == Error::value_out_of_range);

  const AtomicEth at{0x1111222233334444ULL, 0x55556666, 0x7777888899990000ULL,
                     0xAAAABBBBCCCCDDDDULL};
  REQUIRE(encode_atomic_eth(at, b).value() == kAtomicEthSize);
  CHECK(*decode_atomic_eth(b) == at);
  CHECK(decode_atomic_eth(ByteView(b).first(27)).error() == Error::too_short);

  const AtomicAckEth ack{0x0102030405060708ULL};
  REQUIRE(encode_atomic_ack_eth(ack, b).value() == kAtomicAckEthSize);
  CHECK(b[7] == 0x08);
  CHECK(*decode_atomic_ack_eth(b) == ack);
  CHECK(decode_atomic_ack_eth(ByteView(b).first(7)).error() == Error::too_short);
}

TEST_CASE("AETH syndromes, RNR timers and ACK timeouts follow the IBTA tables", "[headers]") {
  CHECK(aeth_kind(0x1F) == AethKind::ack);
  CHECK(aeth_kind(0x00) == AethKind::ack);
  CHECK(aeth_kind(0x2E) == AethKind::rnr_nak);
  CHECK(aeth_kind(0x60) == AethKind::nak);
  CHECK(aeth_kind(0x62) == AethKind::nak);
  CHECK(aeth_kind(0x40) == AethKind::reserved);
  CHECK(rnr_nak_syndrome(14) == 0x2E);
  CHECK(rnr_timer_ns(0) == 655360000U);
  CHECK(rnr_timer_ns(1) == 10000U);
  CHECK(rnr_timer_ns(14) == 1280000U);
  CHECK(rnr_timer_ns(31) == 491520000U);
  CHECK(local_ack_timeout_ns(0) == 0);
  CHECK(local_ack_timeout_ns(1) == 8192);
  CHECK(local_ack_timeout_ns(19) == 4096ULL << 19);  // about 2.1 s, what rxe asks for
}

TEST_CASE("PSN arithmetic is modulo 2^24", "[headers]") {
  CHECK(psn_add(0xFFFFFF, 1) == 0);
  CHECK(psn_add(0xFFFFFE, 5) == 3);
  CHECK(psn_diff(2, 0xFFFFFF) == 3);
  CHECK(psn_after(1, 0));
  CHECK(psn_after(0, 0xFFFFFF));
  CHECK_FALSE(psn_after(0, 0));
  CHECK_FALSE(psn_after(0xFFFFFF, 0));
  CHECK(psn_after(0x7FFFFF, 0));
  CHECK_FALSE(psn_after(0x800000, 0));
}

TEST_CASE("opcode table: header sets and payload rules", "[headers][opcode]") {
  int known = 0;
  for (unsigned c = 0; c < 256; ++c) {
    const OpcodeInfo* info = find_opcode(static_cast<std::uint8_t>(c));
    if (info == nullptr) continue;
    ++known;
    CHECK(info->code == c);
    CHECK_FALSE(info->name.empty());
    // At most one of RETH / AtomicETH / AETH, and ImmDt and IETH never together.
    const int middle = (info->has(kHasReth) ? 1 : 0) + (info->has(kHasAtomicEth) ? 1 : 0) +
                       (info->has(kHasAeth) ? 1 : 0);
    CHECK(middle <= 1);
    CHECK_FALSE((info->has(kHasImmDt) && info->has(kHasIeth)));
  }
  CHECK(known == 26 + 18);  // IBTA opcodes we use + the IRN opcodes 0xC0-0xD1
  CHECK(find_opcode(0x15) == nullptr);
  CHECK(find_opcode(0x18) == nullptr);
  CHECK(find_opcode(0x66) == nullptr);
  CHECK(find_opcode(0xFF) == nullptr);
  CHECK(find_opcode(opcode::kWriteOnlyImm)->headers == (kHasReth | kHasImmDt));
  CHECK(find_opcode(opcode::kWriteFirst)->payload == PayloadRule::full_mtu);
  CHECK(find_opcode(opcode::kReadResponseMiddle)->headers == 0);
  CHECK(find_opcode(opcode::kUdSendOnly)->headers == kHasDeth);
  CHECK(extension_headers_size(kHasReth | kHasImmDt) == 20);
  CHECK(find_opcode(opcode::kAcknowledge)->is_response());
  CHECK_FALSE(find_opcode(opcode::kSendFirst)->ends_message());
}

namespace {

std::vector<std::uint8_t> build(const PacketHeaders& h, const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> out(packet_size(h, payload.size()));
  auto n = encode_packet(h, payload, out);
  REQUIRE(n.has_value());
  REQUIRE(*n == out.size());
  return out;
}

}  // namespace

TEST_CASE("packets round trip for every opcode with every payload length mod 4", "[packet]") {
  for (unsigned c = 0; c < 256; ++c) {
    const OpcodeInfo* info = find_opcode(static_cast<std::uint8_t>(c));
    if (info == nullptr) continue;
    PacketHeaders h;
    h.bth.opcode = info->code;
    h.bth.dest_qpn = 0x000123;
    h.bth.psn = 0x00ABCD;
    h.bth.ack_req = info->ends_message();
    if (info->has(kHasDeth)) h.deth = Deth{0x80010000, 0, 1};
    if (info->has(kHasReth)) h.reth = Reth{0x1000, 0x4201, 7};
    if (info->has(kHasAtomicEth)) h.atomic_eth = AtomicEth{0x2000, 0x4202, 5, 6};
    if (info->has(kHasAeth)) h.aeth = Aeth{kAethAck, 9};
    if (info->has(kHasAtomicAckEth)) h.atomic_ack_eth = AtomicAckEth{42};
    if (info->has(kHasImmDt)) h.immediate = 0x12345684U;
    if (info->has(kHasIeth)) h.ieth_rkey = 0x777;
    if (info->has(kHasIrnEth)) h.irn_eth = IrnEth{3, 4};
    if (info->has(kHasSackEth)) h.sack_eth = SackEth{0, 0x00ABCE, 5};
    std::vector<std::size_t> lengths;
    switch (info->payload) {
      case PayloadRule::none:
        lengths = {0};
        break;
      case PayloadRule::full_mtu:
        lengths = {256, 1024, 4096};
        break;
      case PayloadRule::up_to_mtu:
        lengths = {0, 1, 2, 3, 4, 13, 4096};
        break;
      case PayloadRule::reserved16:
        lengths = {16};
        break;
    }
    for (std::size_t len : lengths) {
      INFO("opcode " << c << " payload " << len);
      std::vector<std::uint8_t> payload(len);
      for (std::size_t i = 0; i < len; ++i)
        payload[i] = static_cast<std::uint8_t>(i * 7 + 1);
      const auto bytes = build(h, payload);
      CHECK(bytes.size() % 4 == 0);
      auto d = decode_packet(bytes);
      REQUIRE(d.has_value());
      CHECK(d->info == info);
      CHECK(d->headers.bth.pad_count == ((0U - len) & 3U));
      PacketHeaders expected = h;
      expected.bth.pad_count = d->headers.bth.pad_count;
      CHECK(d->headers == expected);
      CHECK(std::vector<std::uint8_t>(d->payload.begin(), d->payload.end()) == payload);
      CHECK(d->header_size == header_size(h));
    }
  }
}

TEST_CASE("packet decode rejects every malformed shape", "[packet]") {
  PacketHeaders w;
  w.bth.opcode = opcode::kWriteOnly;
  w.reth = Reth{0x1000, 1, 2};
  const auto good = build(w, {0xAA, 0xBB});  // 12 + 16 + 2 + pad 2 + 4 = 36

  SECTION("shorter than BTH + ICRC") {
    CHECK(decode_packet(ByteView(good).first(15)).error() == Error::too_short);
    CHECK(decode_packet(ByteView()).error() == Error::too_short);
  }
  SECTION("extension headers cut off") {
    CHECK(decode_packet(ByteView(good).first(12 + 15 + 4)).error() == Error::too_short);
  }
  SECTION("TVer not 0") {
    auto b = good;
    b[1] |= 0x01;
    CHECK(decode_packet(b).error() == Error::bad_tver);
  }
  SECTION("unknown opcode") {
    auto b = good;
    b[0] = 0x15;
    CHECK(decode_packet(b).error() == Error::unknown_opcode);
  }
  SECTION("pad count larger than the bytes after the headers") {
    PacketHeaders z = w;
    auto b = build(z, {});  // 32 bytes, pad 0
    b[1] = static_cast<std::uint8_t>((b[1] & 0xCF) | 0x30);
    CHECK(decode_packet(b).error() == Error::bad_pad);
  }
  SECTION("payload + pad not a multiple of 4") {
    auto b = good;  // 2 payload bytes + pad 2; one more byte makes 5 bytes after the headers
    b.insert(b.end() - 4, 0x00);
    CHECK(decode_packet(b).error() == Error::bad_pad);
    // Whereas 2 payload bytes + pad 2 read as 3 bytes + pad 1 is a legal packet.
    auto c = good;
    c[1] = static_cast<std::uint8_t>((c[1] & 0xCF) | 0x10);
    REQUIRE(decode_packet(c).has_value());
    CHECK(decode_packet(c)->payload.size() == 3);
    PacketHeaders f;
    f.bth.opcode = opcode::kWriteFirst;
    f.reth = Reth{0, 1, 4096};
    auto odd = build(f, std::vector<std::uint8_t>(256, 1));
    odd.insert(odd.end() - 4, 0x01);  // 257 payload bytes, pad 0
    CHECK(decode_packet(odd).error() == Error::bad_pad);
  }
  SECTION("non-zero pad bytes") {
    auto b = good;
    b[12 + 16 + 2] = 0x01;
    CHECK(decode_packet(b).error() == Error::bad_pad);
  }
  SECTION("pad on a FIRST packet") {
    PacketHeaders f;
    f.bth.opcode = opcode::kWriteFirst;
    f.reth = Reth{0, 1, 4096};
    auto b = build(f, std::vector<std::uint8_t>(256, 1));
    b[1] |= 0x10;
    CHECK(decode_packet(b).error() == Error::bad_pad);
  }
  SECTION("empty MIDDLE packet") {
    PacketHeaders m;
    m.bth.opcode = opcode::kSendMiddle;
    auto b = build(m, {});
    CHECK(decode_packet(b).error() == Error::length_mismatch);
  }
  SECTION("payload on an ACK") {
    PacketHeaders a;
    a.bth.opcode = opcode::kAcknowledge;
    a.aeth = Aeth{kAethAck, 1};
    auto b = build(a, {});
    b.insert(b.end() - 4, {1, 2, 3, 4});
    CHECK(decode_packet(b).error() == Error::too_long);
  }
  SECTION("CNP of the wrong size") {
    PacketHeaders c;
    c.bth.opcode = opcode::kCnp;
    auto b = build(c, std::vector<std::uint8_t>(16));
    b.insert(b.end() - 4, {0, 0, 0, 0});
    CHECK(decode_packet(b).error() == Error::length_mismatch);
  }
}

TEST_CASE("packet encode rejects inconsistent headers", "[packet]") {
  std::vector<std::uint8_t> out(8192);
  PacketHeaders h;
  h.bth.opcode = opcode::kWriteOnly;  // needs RETH
  CHECK(encode_packet(h, {}, out).error() == Error::bad_field);
  h.reth = Reth{};
  h.immediate = 1;  // WRITE Only has no ImmDt
  CHECK(encode_packet(h, {}, out).error() == Error::bad_field);
  h.immediate.reset();
  CHECK(encode_packet(h, {}, MutableByteView(out).first(31)).error() == Error::buffer_too_small);
  CHECK(encode_packet(h, {}, out).value() == 32);
  PacketHeaders a;
  a.bth.opcode = opcode::kAcknowledge;
  a.aeth = Aeth{kAethAck, 0};
  const std::uint8_t one[1] = {1};
  CHECK(encode_packet(a, one, out).error() == Error::too_long);
  a.aeth->msn = 0x1000000;
  CHECK(encode_packet(a, {}, out).error() == Error::value_out_of_range);
  PacketHeaders u;
  u.bth.opcode = 0x15;
  CHECK(encode_packet(u, {}, out).error() == Error::unknown_opcode);
}

TEST_CASE("protocol errors have names and an error category", "[headers]") {
  CHECK(to_string(Error::bad_icrc) == "bad ICRC");
  CHECK(error_id(Error::bad_icrc) == "bad_icrc");
  // Every enumerator has a distinct id and text (stat keys must not collide).
  std::set<std::string_view> ids;
  std::set<std::string_view> texts;
  for (int v = 1; v <= static_cast<int>(Error::value_out_of_range); ++v) {
    ids.insert(error_id(static_cast<Error>(v)));
    texts.insert(to_string(static_cast<Error>(v)));
  }
  CHECK(ids.size() == static_cast<std::size_t>(Error::value_out_of_range));
  CHECK(texts.size() == ids.size());
  CHECK(ids.count("unknown_error") == 0);
  std::error_code ec = Error::too_short;
  CHECK(ec.category().name() == std::string("naa.protocol"));
  CHECK(ec.message() == "too short");
}

TEST_CASE("extension header bytes for every combination of header bits", "[headers]") {
  // The sizes (IBTA 9.3, docs/protocol.md "IRN") summed per bit, against the library's table.
  const std::array<std::pair<std::uint16_t, std::size_t>, 9> sizes = {{{kHasDeth, 8},
                                                                       {kHasReth, 16},
                                                                       {kHasAtomicEth, 28},
                                                                       {kHasAeth, 4},
                                                                       {kHasAtomicAckEth, 8},
                                                                       {kHasImmDt, 4},
                                                                       {kHasIeth, 4},
                                                                       {kHasIrnEth, 8},
                                                                       {kHasSackEth, 8}}};
  for (std::uint32_t bits = 0; bits < 512; ++bits) {
    std::size_t want = 0;
    for (const auto& [bit, size] : sizes)
      if ((bits & bit) != 0) want += size;
    INFO("header bits " << bits);
    REQUIRE(extension_headers_size(static_cast<std::uint16_t>(bits)) == want);
  }
}
