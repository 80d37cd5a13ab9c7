// CRC-32 and ICRC: known answers, the masked fields of PROTOCOL.md 2, and IPv4-ID recovery.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "crc32_reference.hpp"
#include "naa/protocol/crc32.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/packet.hpp"
#include "seed.hpp"

using namespace naa::protocol;

namespace {

std::vector<std::uint8_t> write_packet(std::size_t payload_len, std::uint32_t seed) {
  PacketHeaders h;
  h.bth.opcode = opcode::kWriteOnlyImm;
  h.bth.dest_qpn = 0x11;
  h.bth.psn = seed & 0xFFFFFF;
  h.reth = Reth{0x7f0000001000ULL, 0x1234, static_cast<std::uint32_t>(payload_len)};
  h.immediate = 0x00000184;
  std::vector<std::uint8_t> payload(payload_len);
  std::mt19937 rng(seed);
  for (auto& b : payload)
    b = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> out(packet_size(h, payload_len));
  REQUIRE(encode_packet(h, payload, out).has_value());
  return out;
}

// The ICRC from its definition (IBTA annex A17.3.3; PROTOCOL.md 2), independent of icrc.cpp: the
// masked pseudo-header and the datagram joined in one buffer, with the variant fields overwritten
// by ones, and the bitwise CRC over it.
std::uint32_t reference_icrc(const Ipv4UdpHeaders& h, ByteView body) {
  std::vector<std::uint8_t> all(8, 0xFF);
  all.resize(8 + kIpv4HeaderSize + kUdpHeaderSize);
  REQUIRE(encode_ipv4(h.ip, MutableByteView(all).subspan(8)).has_value());
  REQUIRE(encode_udp(h.udp, MutableByteView(all).subspan(8 + kIpv4HeaderSize)).has_value());
  all[8 + 1] = 0xFF;                                                   // TOS
  all[8 + 8] = 0xFF;                                                   // TTL
  all[8 + 10] = all[8 + 11] = 0xFF;                                    // IPv4 header checksum
  all[8 + kIpv4HeaderSize + 6] = all[8 + kIpv4HeaderSize + 7] = 0xFF;  // UDP checksum
  const std::size_t bth_at = all.size();
  all.insert(all.end(), body.begin(), body.end());
  // BTH byte 4 (FECN, BECN, reserved); a body without a whole BTH is taken as it is.
  if (body.size() >= kBthSize) all[bth_at + 4] = 0xFF;
  return ~naa::testbench::crc32_bitwise(0xFFFFFFFFU, all.data(), all.size());
}

}  // namespace

TEST_CASE("ICRC equals its definition for random headers and datagrams", "[icrc]") {
  // compute_icrc folds a 48-byte head (pseudo-header and BTH) and then the datagram where it
  // lies, or (CLMUL, bodies of 16 bytes and more) shuffles the pseudo-header out of the headers
  // in registers (issue 31); every body length 0-300 and random longer ones, with random
  // IPv4/UDP fields (masked ones included) and random bytes, against reference_icrc(), and
  // write_icrc(), verify_icrc() and recover_ipv4_id() on the datagram carrying it.
  const auto seed = naa::testbench::seed_for("icrc definition");
  INFO("seed " << seed << " (NAA_TEST_SEED=" << naa::testbench::test_seed() << ")");
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> buf(5000);
  for (auto& b : buf)
    b = static_cast<std::uint8_t>(rng());
  auto check = [&](std::size_t n) {
    Ipv4UdpHeaders h;
    h.ip.tos = static_cast<std::uint8_t>(rng());
    h.ip.total_length = static_cast<std::uint16_t>(rng());
    h.ip.id = static_cast<std::uint16_t>(rng());
    h.ip.flags_fragment = static_cast<std::uint16_t>(rng());
    h.ip.ttl = static_cast<std::uint8_t>(rng());
    h.ip.protocol = static_cast<std::uint8_t>(rng());
    h.ip.checksum = static_cast<std::uint16_t>(rng());
    h.ip.src = static_cast<std::uint32_t>(rng());
    h.ip.dst = static_cast<std::uint32_t>(rng());
    h.udp.src_port = static_cast<std::uint16_t>(rng());
    h.udp.dst_port = static_cast<std::uint16_t>(rng());
    h.udp.length = static_cast<std::uint16_t>(rng());
    h.udp.checksum = static_cast<std::uint16_t>(rng());
    const ByteView body(buf.data() + rng() % 64, n);
    INFO("body length " << n);
    const std::uint32_t icrc = reference_icrc(h, body);
    REQUIRE(compute_icrc(h, body) == icrc);
    // The receiver's side: the datagram with that ICRC gives back h's ID whatever ID it is
    // given (recover_ipv4_id's CRC with the ID taken as 0, issue 31), and verifies.
    std::vector<std::uint8_t> datagram(body.begin(), body.end());
    datagram.resize(n + kIcrcSize);
    store_le32(datagram.data() + n, icrc);
    REQUIRE(verify_icrc(h, datagram));
    std::vector<std::uint8_t> written(body.begin(), body.end());
    written.resize(n + kIcrcSize, 0xEE);
    write_icrc(h, written);
    REQUIRE(written == datagram);
    Ipv4UdpHeaders seen = h;
    seen.ip.id = static_cast<std::uint16_t>(rng());
    const auto id = recover_ipv4_id(seen, datagram);
    REQUIRE(id.has_value());
    REQUIRE(*id == h.ip.id);
  };
  for (std::size_t n = 0; n <= 300; ++n)
    check(n);
  for (int i = 0; i < 300; ++i)
    check(rng() % 4900);
}

TEST_CASE("CRC-32 matches zlib's known answers", "[icrc]") {
  const std::string check = "123456789";
  const ByteView v(reinterpret_cast<const std::uint8_t*>(check.data()), check.size());  // NOLINT
  CHECK(crc32(v) == 0xCBF43926U);
  CHECK(crc32(ByteView()) == 0U);
  // Incremental use equals one pass, for every split point (exercises the slicing tail).
  std::vector<std::uint8_t> data(100);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::uint8_t>(i * 31 + 7);
  const std::uint32_t whole = crc32(data);
  for (std::size_t split = 0; split <= data.size(); ++split) {
    CHECK(crc32(ByteView(data).subspan(split), crc32(ByteView(data).first(split))) == whole);
  }
}

TEST_CASE("CRC shift operator equals feeding zero bytes", "[icrc]") {
  for (std::size_t n : {0U, 1U, 2U, 3U, 7U, 8U, 9U, 64U, 1000U, 4133U}) {
    INFO("zero bytes " << n);
    std::vector<std::uint8_t> zeros(n, 0);
    for (std::uint32_t reg : {0x1U, 0x80000000U, 0xDEADBEEFU, 0x12345678U}) {
      const std::uint32_t expected = crc32_raw_update(reg, zeros);
      CHECK(crc32_shift(reg, n) == expected);
      CHECK(Crc32ShiftOperator::for_zero_bytes(n).apply(reg) == expected);
    }
  }
}

TEST_CASE("ICRC masks exactly the variant fields", "[icrc]") {
  auto pkt = write_packet(13, 1);
  const auto base = make_roce_headers(0x0A000001, 0xC123, 0x0A000002, pkt.size());
  const std::uint32_t ref = compute_icrc(base, ByteView(pkt).first(pkt.size() - 4));

  auto masked_changes = [&](auto mutate) {
    Ipv4UdpHeaders h = base;
    mutate(h);
    return compute_icrc(h, ByteView(pkt).first(pkt.size() - 4)) != ref;
  };
  CHECK_FALSE(masked_changes([](Ipv4UdpHeaders& h) { h.ip.tos = 0xC2; }));
  CHECK_FALSE(masked_changes([](Ipv4UdpHeaders& h) { h.ip.ttl = 1; }));
  CHECK_FALSE(masked_changes([](Ipv4UdpHeaders& h) { h.ip.checksum ^= 0x5555; }));
  CHECK_FALSE(masked_changes([](Ipv4UdpHeaders& h) { h.udp.checksum = 0xBEEF; }));
  CHECK(masked_changes([](Ipv4UdpHeaders& h) { h.ip.id = 1; }));
  CHECK(masked_changes([](Ipv4UdpHeaders& h) { h.ip.src ^= 1; }));
  CHECK(masked_changes([](Ipv4UdpHeaders& h) { h.ip.dst ^= 1; }));
  CHECK(masked_changes([](Ipv4UdpHeaders& h) { h.ip.total_length ^= 4; }));
  CHECK(masked_changes([](Ipv4UdpHeaders& h) { h.udp.src_port ^= 1; }));
  CHECK(masked_changes([](Ipv4UdpHeaders& h) { h.udp.length ^= 4; }));

  // BTH byte 4 (FECN/BECN/reserved) is masked; every other BTH byte is covered.
  for (std::size_t i = 0; i < kBthSize; ++i) {
    auto copy = pkt;
    copy[i] ^= 0x40;
    const bool changed = compute_icrc(base, ByteView(copy).first(copy.size() - 4)) != ref;
    CHECK(changed == (i != 4));
  }
}

TEST_CASE("write_icrc / verify_icrc and single-bit corruption", "[icrc]") {
  auto pkt = write_packet(100, 2);
  const auto h = make_roce_headers(0x7F000003, 0xC000, 0x7F000002, pkt.size());
  write_icrc(h, pkt);
  CHECK(verify_icrc(h, pkt));
  for (std::size_t bit = 0; bit < pkt.size() * 8; bit += 13) {
    if (bit / 8 == 4) continue;  // masked byte
    auto copy = pkt;
    copy[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
    CHECK_FALSE(verify_icrc(h, copy));
  }
  CHECK_FALSE(verify_icrc(h, ByteView(pkt).first(3)));
}

TEST_CASE("the sender's IPv4 ID is recovered from the ICRC", "[icrc]") {
  const auto seed = static_cast<std::uint32_t>(naa::testbench::seed_for("icrc ipv4 id"));
  INFO("seed " << seed << " (NAA_TEST_SEED=" << naa::testbench::test_seed() << ")");
  std::mt19937 rng(seed);
  for (int i = 0; i < 200; ++i) {
    const std::size_t len = rng() % 4097;
    auto pkt = write_packet(len, static_cast<std::uint32_t>(rng()));
    const auto id = static_cast<std::uint16_t>(rng());
    const auto sent = make_roce_headers(0x0A4D0002, 0xC001, 0x0A4D0001, pkt.size(), id);
    write_icrc(sent, pkt);
    // The receiver knows everything but the ID.
    auto seen = make_roce_headers(0x0A4D0002, 0xC001, 0x0A4D0001, pkt.size(), 0);
    auto got = recover_ipv4_id(seen, pkt);
    REQUIRE(got.has_value());
    CHECK(*got == id);
    // A corrupted payload byte leaves no consistent ID (except with probability 2^-16).
    if (len > 0) {
      pkt[kBthSize + kRethSize + kImmDtSize] ^= 0x01;
      CHECK_FALSE(recover_ipv4_id(seen, pkt).has_value());
    }
  }
}
