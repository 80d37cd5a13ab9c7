// The ICRC's CRC-32 has two implementations chosen at run time (PCLMULQDQ folding, slicing-by-16
// tables); both must equal a bitwise reference for every length, alignment and start register.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "crc32_reference.hpp"
#include "naa/protocol/crc32.hpp"
#include "seed.hpp"

namespace {

using naa::protocol::ByteView;

using naa::testbench::crc32_bitwise;

}  // namespace

TEST_CASE("crc32: dispatched and portable paths equal a bitwise reference", "[bench][crc32]") {
  const std::uint64_t seed = naa::testbench::seed_for("crc32 paths");  // NAA_TEST_SEED
  std::printf("seed %llu, carry-less multiplication %s\n", static_cast<unsigned long long>(seed),
              naa::protocol::detail::crc32_has_clmul() ? "used" : "not available");
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> buf(9000);
  for (auto& b : buf)
    b = static_cast<std::uint8_t>(rng());
  for (std::size_t n = 0; n <= 600; ++n) {
    for (std::size_t off = 0; off < 4; ++off) {
      const auto reg = static_cast<std::uint32_t>(rng());
      const ByteView v(buf.data() + off, n);
      const std::uint32_t want = crc32_bitwise(reg, v.data(), n);
      INFO("length " << n << " offset " << off);
      REQUIRE(naa::protocol::crc32_raw_update(reg, v) == want);
      REQUIRE(naa::protocol::detail::crc32_raw_update_portable(reg, v) == want);
    }
  }
  for (int i = 0; i < 200; ++i) {  // packet-sized and larger inputs
    const std::size_t n = rng() % 8900;
    const std::size_t off = rng() % 64;
    const auto reg = static_cast<std::uint32_t>(rng());
    const ByteView v(buf.data() + off, n);
    INFO("length " << n << " offset " << off);
    REQUIRE(naa::protocol::crc32_raw_update(reg, v) == crc32_bitwise(reg, v.data(), n));
  }
  const std::uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  CHECK(naa::protocol::crc32(check) == 0xCBF43926U);
}
