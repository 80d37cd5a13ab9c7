#include "naa/protocol/crc32.hpp"

#include <array>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NAA_CRC32_CLMUL 1
// Carry-less multiplication folding (Gopal et al., "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ Instruction", Intel 2009), with the constants of the bit-reflected polynomial
// 0x104C11DB7 as in the Linux kernel (crc32-pclmul_asm.S) and Chromium's zlib (crc32_simd.c):
// x^(4*128+32) and x^(4*128-32) mod P fold 512 bits, x^(128+32) and x^(128-32) mod P fold 128,
// x^64 mod P folds 64, then a Barrett reduction to 32 bits. Precondition: n >= 16 and n % 16 == 0
// (below 64 bytes there is one lane from the start: the first block xor the register is already
// the 128-bit remainder state the reduction takes, so short datagrams fold too, issue 31).
// Compiled for PCLMULQDQ + SSE4.1 only; called only after a CPUID check (update()).
// x * (x^(128+32), x^(128-32)) mod P, xor next: one 128-bit fold step.
__attribute__((target("pclmul"))) __m128i fold16(__m128i x, __m128i k, __m128i next) noexcept {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x11), _mm_clmulepi64_si128(x, k, 0x00)), next);
}

__attribute__((target("pclmul,sse4.1"))) std::uint32_t update_clmul_blocks(std::uint32_t crc,
                                                                           const std::uint8_t* p,
                                                                           std::size_t n) noexcept {
  auto load = [](const std::uint8_t* q) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));  // NOLINT: unaligned load
  };
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
  const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
  const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);

  __m128i x1 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
  if (n >= 64) {
    __m128i x2 = load(p + 16);
    __m128i x3 = load(p + 32);
    __m128i x4 = load(p + 48);
    p += 64;
    n -= 64;
    while (n >= 64) {
      const __m128i x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
      const __m128i x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
      const __m128i x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
      const __m128i x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
      x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k1k2, 0x11), x5), load(p));
      x2 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x2, k1k2, 0x11), x6), load(p + 16));
      x3 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x3, k1k2, 0x11), x7), load(p + 32));
      x4 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x4, k1k2, 0x11), x8), load(p + 48));
      p += 64;
      n -= 64;
    }
    // Fold the four lanes into one.
    x1 = fold16(x1, k3k4, x2);
    x1 = fold16(x1, k3k4, x3);
    x1 = fold16(x1, k3k4, x4);
  } else {
    p += 16;
    n -= 16;
  }
  // The remaining 16-byte blocks.
  while (n >= 16) {
    x1 = fold16(x1, k3k4, load(p));
    p += 16;
    n -= 16;
  }
  // 128 -> 64 bits.
  __m128i x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
  // 64 -> 32 bits.
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5k0, 0x00), x2);
  // Barrett reduction to the 32-bit register.
  x2 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  x2 = _mm_clmulepi64_si128(_mm_and_si128(x2, mask32), poly, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return static_cast<std::uint32_t>(_mm_extract_epi32(x1, 1));
}

bool cpu_has_clmul() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  }();
  return has;
}
#endif

std::uint32_t update(std::uint32_t c, const std::uint8_t* p, std::size_t n) noexcept {
#ifdef NAA_CRC32_CLMUL
  if (n >= 16 && cpu_has_clmul()) {
    const std::size_t blocks = n & ~std::size_t{15};
    c = update_clmul_blocks(c, p, blocks);
    return blocks == n ? c : update_table(c, p + blocks, n - blocks);
  }
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
