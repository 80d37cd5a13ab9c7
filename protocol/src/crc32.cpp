#include "naa/protocol/crc32.hpp"

#include <array>
#include <cstring>

#include "crc32_clmul.hpp"

namespace naa::protocol {
namespace {

constexpr std::uint32_t kPolyReflected = 0xEDB88320U;

// tables[k][b]: the register contribution of byte b followed by k zero bytes (slicing-by-16,
// the portable path: 16 table lookups per 16 bytes).
constexpr std::array<std::array<std::uint32_t, 256>, 16> make_tables() {
  std::array<std::array<std::uint32_t, 256>, 16> t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int i = 0; i < 8; ++i)
      c = (c & 1U) != 0 ? (c >> 1) ^ kPolyReflected : c >> 1;
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 16; ++k) {
    for (std::size_t b = 0; b < 256; ++b)
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFU];
  }
  return t;
}
constexpr auto kTables = make_tables();

std::uint32_t update_table(std::uint32_t c, const std::uint8_t* p, std::size_t n) noexcept {
  while (n >= 16) {
    const std::uint32_t w0 = c ^ load_le32(p);
    const std::uint32_t w1 = load_le32(p + 4);
    const std::uint32_t w2 = load_le32(p + 8);
    const std::uint32_t w3 = load_le32(p + 12);
    c = kTables[15][w0 & 0xFFU] ^ kTables[14][(w0 >> 8) & 0xFFU] ^ kTables[13][(w0 >> 16) & 0xFFU] ^
        kTables[12][w0 >> 24] ^ kTables[11][w1 & 0xFFU] ^ kTables[10][(w1 >> 8) & 0xFFU] ^
        kTables[9][(w1 >> 16) & 0xFFU] ^ kTables[8][w1 >> 24] ^ kTables[7][w2 & 0xFFU] ^
        kTables[6][(w2 >> 8) & 0xFFU] ^ kTables[5][(w2 >> 16) & 0xFFU] ^ kTables[4][w2 >> 24] ^
        kTables[3][w3 & 0xFFU] ^ kTables[2][(w3 >> 8) & 0xFFU] ^ kTables[1][(w3 >> 16) & 0xFFU] ^
        kTables[0][w3 >> 24];
    p += 16;
    n -= 16;
  }
  // The tail of fewer than 16 bytes: 8 and 4 bytes at a time (slicing-by-8 and -4 with the same
  // tables), then at most 3 bytes one by one (issue 31: a short datagram's ICRC ends in such a
  // tail, byte by byte it was ~70 instructions per datagram).
  if (n >= 8) {
    const std::uint32_t w0 = c ^ load_le32(p);
    const std::uint32_t w1 = load_le32(p + 4);
    c = kTables[7][w0 & 0xFFU] ^ kTables[6][(w0 >> 8) & 0xFFU] ^ kTables[5][(w0 >> 16) & 0xFFU] ^
        kTables[4][w0 >> 24] ^ kTables[3][w1 & 0xFFU] ^ kTables[2][(w1 >> 8) & 0xFFU] ^
        kTables[1][(w1 >> 16) & 0xFFU] ^ kTables[0][w1 >> 24];
    p += 8;
    n -= 8;
  }
  if (n >= 4) {
    const std::uint32_t w0 = c ^ load_le32(p);
    c = kTables[3][w0 & 0xFFU] ^ kTables[2][(w0 >> 8) & 0xFFU] ^ kTables[1][(w0 >> 16) & 0xFFU] ^
        kTables[0][w0 >> 24];
    p += 4;
    n -= 4;
  }
  while (n-- > 0)
    c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFFU];
  return c;
}

#ifdef NAA_CRC32_CLMUL
using namespace clmul;  // NOLINT: the folding steps (crc32_clmul.hpp)

// The last t (1-15) bytes of the input when they are all it has after whole blocks of an earlier
// piece: placed in the top t bytes of a block (the bytes below do not matter), read piece by
// piece so that nothing past p + t is touched.
NAA_CLMUL_TARGET __m128i load_short_tail(const std::uint8_t* p, std::size_t t) noexcept {
  alignas(16) std::uint8_t block[16] = {};
  std::uint8_t* q = block + 16 - t;
  if ((t & 8U) != 0) std::memcpy(q, p, 8), q += 8, p += 8;
  if ((t & 4U) != 0) std::memcpy(q, p, 4), q += 4, p += 4;
  if ((t & 2U) != 0) std::memcpy(q, p, 2), q += 2, p += 2;
  if ((t & 1U) != 0) *q = *p;
  return load_block(block);
}

// The register after `head` (nh bytes, a multiple of 16) then `data` (nd bytes), in one pass.
// Precondition: nh + nd >= 16.
NAA_CLMUL_TARGET std::uint32_t update_clmul(std::uint32_t crc, const std::uint8_t* head,
                                            std::size_t nh, const std::uint8_t* data,
                                            std::size_t nd) noexcept {
  const std::uint8_t* p = data;
  std::size_t n = nd;
  __m128i x;
  if (nh != 0) {
    x = _mm_xor_si128(load_block(head), _mm_cvtsi32_si128(static_cast<int>(crc)));
    for (std::size_t i = 16; i < nh; i += 16)
      x = fold16(x, k3k4(), load_block(head + i));
  } else {
    x = _mm_xor_si128(load_block(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
    p += 16;
    n -= 16;
  }
  x = fold_blocks(x, p, n);
  if (n != 0) {
    // The last 16 bytes of the input: from data itself when it has them (the bytes below the
    // tail were folded already and are shuffled out), else gathered.
    const __m128i last = nd >= 16 ? load_block(data + nd - 16) : load_short_tail(p, n);
    x = fold_tail(x, last, n);
  }
  return reduce(x);
}

}  // namespace

namespace clmul {
const bool kCpuHasClmul = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}();
}  // namespace clmul

namespace {
#endif

std::uint32_t update(std::uint32_t c, const std::uint8_t* p, std::size_t n) noexcept {
#ifdef NAA_CRC32_CLMUL
  if (n >= 16 && cpu_has_clmul()) return update_clmul(c, nullptr, 0, p, n);
#endif
  return update_table(c, p, n);
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

// Out of line, so that the one-pass case is a plain jump (no registers saved for this one).
[[gnu::noinline]] std::uint32_t update_in_two_passes(std::uint32_t reg, ByteView head,
                                                     ByteView data) noexcept {
  return update(update(reg, head.data(), head.size()), data.data(), data.size());
}

}  // namespace

std::uint32_t crc32(ByteView data, std::uint32_t crc) noexcept {
  return ~update(~crc, data.data(), data.size());
}

std::uint32_t crc32_raw_update(std::uint32_t reg, ByteView data) noexcept {
  return update(reg, data.data(), data.size());
}

std::uint32_t crc32_raw_update(std::uint32_t reg, ByteView head, ByteView data) noexcept {
#ifdef NAA_CRC32_CLMUL
  if (cpu_has_clmul() && head.size() % 16 == 0 && head.size() + data.size() >= 16) {
    return update_clmul(reg, head.data(), head.size(), data.data(), data.size());
  }
#endif
  return update_in_two_passes(reg, head, data);
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

namespace detail {

std::uint32_t crc32_raw_update_portable(std::uint32_t reg, ByteView data) noexcept {
  return update_table(reg, data.data(), data.size());
}

bool crc32_has_clmul() noexcept {
#ifdef NAA_CRC32_CLMUL
  return cpu_has_clmul();
#else
  return false;
#endif
}

}  // namespace detail

}  // namespace naa::protocol
