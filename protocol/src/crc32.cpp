#include "naa/protocol/crc32.hpp"

#include <array>

namespace naa::protocol {
namespace {

constexpr std::uint32_t kPolyReflected = 0xEDB88320U;

// tables[k][b]: the register contribution of byte b followed by k zero bytes (slicing-by-8).
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int i = 0; i < 8; ++i)
      c = (c & 1U) != 0 ? (c >> 1) ^ kPolyReflected : c >> 1;
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t b = 0; b < 256; ++b)
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFU];
  }
  return t;
}
constexpr auto kTables = make_tables();

std::uint32_t update(std::uint32_t c, const std::uint8_t* p, std::size_t n) noexcept {
  while (n >= 8) {
    const std::uint32_t lo = c ^ load_le32(p);
    const std::uint32_t hi = load_le32(p + 4);
    c = kTables[7][lo & 0xFFU] ^ kTables[6][(lo >> 8) & 0xFFU] ^ kTables[5][(lo >> 16) & 0xFFU] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xFFU] ^ kTables[2][(hi >> 8) & 0xFFU] ^
        kTables[1][(hi >> 16) & 0xFFU] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0)
    c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFFU];
  return c;
}

using Gf2Matrix = std::array<std::uint32_t, 32>;

std::uint32_t times(const Gf2Matrix& m, std::uint32_t v) noexcept {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; v != 0; ++i, v >>= 1) {
    if ((v & 1U) != 0) sum ^= m[i];
  }
  return sum;
}

Gf2Matrix square(const Gf2Matrix& m) noexcept {
  Gf2Matrix r{};
  for (std::size_t i = 0; i < 32; ++i)
    r[i] = times(m, m[i]);
  return r;
}

}  // namespace

std::uint32_t crc32(ByteView data, std::uint32_t crc) noexcept {
  return ~update(~crc, data.data(), data.size());
}

std::uint32_t crc32_raw_update(std::uint32_t reg, ByteView data) noexcept {
  return update(reg, data.data(), data.size());
}

Crc32ShiftOperator Crc32ShiftOperator::for_zero_bytes(std::size_t zero_bytes) noexcept {
  // Same squaring ladder as crc32_shift(), but accumulating the operator itself; all powers of
  // one matrix commute, so the order of composition does not matter.
  Gf2Matrix acc{};
  for (std::size_t i = 0; i < 32; ++i)
    acc[i] = 1U << i;  // identity
  Gf2Matrix op{};      // one zero bit
  op[0] = kPolyReflected;
  for (std::size_t i = 1; i < 32; ++i)
    op[i] = 1U << (i - 1);
  for (int i = 0; i < 3; ++i)
    op = square(op);  // one zero byte
  for (std::size_t n = zero_bytes; n != 0; n >>= 1) {
    if ((n & 1U) != 0) {
      Gf2Matrix next{};
      for (std::size_t i = 0; i < 32; ++i)
        next[i] = times(op, acc[i]);
      acc = next;
    }
    if (n > 1) op = square(op);
  }
  Crc32ShiftOperator result;
  for (std::size_t i = 0; i < 32; ++i)
    result.columns_[i] = acc[i];
  return result;
}

std::uint32_t Crc32ShiftOperator::apply(std::uint32_t reg) const noexcept {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; reg != 0; ++i, reg >>= 1) {
    if ((reg & 1U) != 0) sum ^= columns_[i];
  }
  return sum;
}

std::uint32_t crc32_shift(std::uint32_t reg, std::size_t zero_bytes) noexcept {
  if (zero_bytes == 0 || reg == 0) return reg;
  // Operator for one zero bit, then squared up to one zero byte (8 bits) and beyond.
  Gf2Matrix odd{};
  odd[0] = kPolyReflected;
  for (std::size_t i = 1; i < 32; ++i)
    odd[i] = 1U << (i - 1);
  Gf2Matrix even = square(odd);  // 2 zero bits
  odd = square(even);            // 4 zero bits
  // Apply the operator for 8 * 2^k zero bits for each set bit k of zero_bytes.
  std::size_t n = zero_bytes;
  for (;;) {
    even = square(odd);  // first pass: 8 bits = 1 byte
    if ((n & 1U) != 0) reg = times(even, reg);
    n >>= 1;
    if (n == 0) break;
    odd = square(even);
    if ((n & 1U) != 0) reg = times(odd, reg);
    n >>= 1;
    if (n == 0) break;
  }
  return reg;
}

}  // namespace naa::protocol
