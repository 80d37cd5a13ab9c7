// CRC-32 (the ICRC's, PROTOCOL.md 2) against two independent references: the bitwise definition
// and the byte-at-a-time table (Sarwate) form the library used before its tails were sliced
// (issue 31). Both dispatched paths (carry-less multiplication where the CPU has it, the slicing
// tables otherwise) are checked over random lengths, alignments and start registers, replayed
// from NAA_TEST_SEED.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "crc32_reference.hpp"
#include "naa/protocol/crc32.hpp"
#include "seed.hpp"

using naa::protocol::ByteView;

namespace {

using naa::testbench::crc32_bitwise;

std::uint32_t bytewise_table(std::uint32_t c, const std::uint8_t* p, std::size_t n) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t b = 0; b < 256; ++b) {
      std::uint32_t x = b;  // the register after one byte b fed into a zero register
      for (int k = 0; k < 8; ++k)
        x = (x & 1U) != 0 ? (x >> 1) ^ 0xEDB88320U : x >> 1;
      t[b] = x;
    }
    return t;
  }();
  while (n-- > 0)
    c = (c >> 8) ^ table[(c ^ *p++) & 0xFFU];
  return c;
}

// n bytes from the test's generator (the seeded inputs of both cases).
std::vector<std::uint8_t> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v)
    b = static_cast<std::uint8_t>(rng());
  return v;
}

}  // namespace

TEST_CASE("CRC-32 paths equal the bitwise and byte-table references", "[crc32]") {
  const std::uint64_t seed = naa::testbench::seed_for("crc32 references");
  INFO("seed " << seed << " (NAA_TEST_SEED=" << naa::testbench::test_seed() << "), clmul "
               << naa::protocol::detail::crc32_has_clmul());
  std::mt19937_64 rng(seed);
  const std::vector<std::uint8_t> buf = random_bytes(rng, 4200);
  auto check = [&](std::size_t off, std::size_t n) {
    const auto reg = static_cast<std::uint32_t>(rng());
    const std::uint8_t* p = buf.data() + off;
    const std::uint32_t want = crc32_bitwise(reg, p, n);
    INFO("length " << n << " offset " << off << " register " << reg);
    REQUIRE(bytewise_table(reg, p, n) == want);
    REQUIRE(naa::protocol::crc32_raw_update(reg, ByteView(p, n)) == want);
    REQUIRE(naa::protocol::detail::crc32_raw_update_portable(reg, ByteView(p, n)) == want);
  };
  // Every length up to 160 at every offset of a 16-byte block: each tail (0-15 bytes after the
  // 16-byte blocks; its 8-, 4- and 1-byte steps) behind each number of blocks.
  for (std::size_t n = 0; n <= 160; ++n) {
    for (std::size_t off = 0; off < 16; ++off)
      check(off, n);
  }
  for (int i = 0; i < 2000; ++i) {  // random datagram-sized and larger inputs and alignments
    const std::size_t off = rng() % 64;
    check(off, rng() % (buf.size() - 64));
  }
  // zlib's check value, and one CRC in pieces of random sizes equals it in one go.
  const std::uint8_t digits[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  CHECK(naa::protocol::crc32(digits) == 0xCBF43926U);
  for (int i = 0; i < 200; ++i) {
    const std::size_t n = rng() % 3000;
    std::uint32_t whole = naa::protocol::crc32(ByteView(buf.data(), n));
    std::uint32_t parts = 0;
    for (std::size_t at = 0; at < n;) {
      const std::size_t k = std::min<std::size_t>(n - at, rng() % 40);
      parts = naa::protocol::crc32(ByteView(buf.data() + at, k), parts);
      at += k;
    }
    INFO("length " << n);
    CHECK(parts == whole);
  }
}

TEST_CASE("CRC-32 over a head and the data after it equals one pass over both", "[crc32]") {
  // crc32_raw_update(reg, head, data) folds a head of whole 16-byte blocks and then the data
  // where it lies, its last partial block by a shuffled fold (the ICRC's path, issue 31): every
  // head of 0-4 blocks (and heads that are not whole blocks, which take two passes) with every
  // data length 0-80 at every offset, then random sizes; the reference is the bitwise CRC of the
  // two joined.
  const std::uint64_t seed = naa::testbench::seed_for("crc32 head and data");
  INFO("seed " << seed << " (NAA_TEST_SEED=" << naa::testbench::test_seed() << "), clmul "
               << naa::protocol::detail::crc32_has_clmul());
  std::mt19937_64 rng(seed);
  const std::vector<std::uint8_t> buf = random_bytes(rng, 4200);
  std::vector<std::uint8_t> joined;
  auto check = [&](std::size_t head_len, std::size_t off, std::size_t n) {
    const auto reg = static_cast<std::uint32_t>(rng());
    // The head from the buffer's end, so it is not the bytes in front of the data.
    const std::uint8_t* head = buf.data() + buf.size() - head_len;
    const std::uint8_t* data = buf.data() + off;
    joined.assign(head, head + head_len);
    joined.insert(joined.end(), data, data + n);
    INFO("head " << head_len << " data " << n << " offset " << off << " register " << reg);
    REQUIRE(naa::protocol::crc32_raw_update(reg, ByteView(head, head_len), ByteView(data, n)) ==
            crc32_bitwise(reg, joined.data(), joined.size()));
  };
  for (std::size_t head_len : {0U, 16U, 32U, 48U, 64U, 1U, 12U, 36U, 47U}) {
    for (std::size_t n = 0; n <= 80; ++n) {
      for (std::size_t off = 0; off < 16; ++off)
        check(head_len, off, n);
    }
  }
  for (int i = 0; i < 2000; ++i) {
    const std::size_t head_len = 16 * (rng() % 6) + (rng() % 4 == 0 ? rng() % 16 : 0);
    check(head_len, rng() % 64, rng() % 3000);
  }
}
