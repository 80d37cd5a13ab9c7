#include "naa/protocol/crc32.hpp"

#include <array>
#include <cstring>

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
// x^64 mod P folds 64, then a Barrett reduction to 32 bits.
// Compiled for PCLMULQDQ + SSE4.1 (which includes SSSE3's byte shuffle) only; called only after a
// CPUID check (cpu_has_clmul()).
//
// The folding state is one 16-byte block x with this invariant: the CRC from a zero register
// over x's bytes followed by the rest of the input is the CRC of the whole input. So the start
// register is xored into the first block, and zero bytes in front of a block change nothing.

// x * (x^(128+32), x^(128-32)) mod P, xor next: one 128-bit fold step (x, then 16 bytes `next`).
__attribute__((target("pclmul"))) __m128i fold16(__m128i x, __m128i k, __m128i next) noexcept {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x11), _mm_clmulepi64_si128(x, k, 0x00)), next);
}

// pshufb controls from one table (as zlib-ng's crc32 folding does): the 16 bytes at
// kShuffle + 16 - s move a block's bytes s places up (byte i to i + s, zeros below); those at
// kShuffle + 16 + s move them s places down (byte i to i - s, zeros above). 0x80 yields zero.
// Bytes are in input order: byte 0 of a block is the earliest.
alignas(16) constexpr std::uint8_t kShuffle[48] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

__attribute__((target("sse4.1"))) __m128i load_block(const std::uint8_t* p) noexcept {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));  // NOLINT: unaligned load
}

// The last t (1-15) bytes of the input when they are all it has after whole blocks of an earlier
// piece: placed in the top t bytes of a block (the bytes below do not matter), read piece by
// piece so that nothing past p + t is touched.
__attribute__((target("sse4.1"))) __m128i load_short_tail(const std::uint8_t* p,
                                                          std::size_t t) noexcept {
  alignas(16) std::uint8_t block[16] = {};
  std::uint8_t* q = block + 16 - t;
  if ((t & 8U) != 0) std::memcpy(q, p, 8), q += 8, p += 8;
  if ((t & 4U) != 0) std::memcpy(q, p, 4), q += 4, p += 4;
  if ((t & 2U) != 0) std::memcpy(q, p, 2), q += 2, p += 2;
  if ((t & 1U) != 0) *q = *p;
  return load_block(block);
}

// The state x followed by t (1-15) more bytes, the top t bytes of `last` (the input's last 16
// bytes): zeros, then x's first t bytes, form one block (zero bytes in front change nothing) and
// x's other 16 - t bytes then the t new ones the next, so one fold step takes them (the partial
// block of zlib-ng's crc32_fold_pclmulqdq; no byte-wise tail, issue 31).
__attribute__((target("pclmul,sse4.1"))) __m128i fold_tail(__m128i x, __m128i k3k4, __m128i last,
                                                           std::size_t t) noexcept {
  const __m128i up = load_block(kShuffle + t);         // up by 16 - t: x's first t bytes to the top
  const __m128i down = load_block(kShuffle + 16 + t);  // down by t: x's other bytes to the bottom
  const __m128i high = _mm_shuffle_epi8(x, up);
  // blendv takes `last` where the control byte's top bit is clear: the top t bytes of `up`.
  const __m128i low = _mm_blendv_epi8(last, _mm_shuffle_epi8(x, down), up);
  return fold16(high, k3k4, low);
}

// The register after `head` (nh bytes, a multiple of 16) then `data` (nd bytes), in one pass.
// Precondition: nh + nd >= 16.
__attribute__((target("pclmul,sse4.1"))) std::uint32_t update_clmul(std::uint32_t crc,
                                                                    const std::uint8_t* head,
                                                                    std::size_t nh,
                                                                    const std::uint8_t* data,
                                                                    std::size_t nd) noexcept {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
  const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
  const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);

  const std::uint8_t* p = data;
  std::size_t n = nd;
  __m128i x;
  if (nh != 0) {
    x = _mm_xor_si128(load_block(head), _mm_cvtsi32_si128(static_cast<int>(crc)));
    for (std::size_t i = 16; i < nh; i += 16)
      x = fold16(x, k3k4, load_block(head + i));
  } else {
    x = _mm_xor_si128(load_block(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
    p += 16;
    n -= 16;
  }
  if (n >= 64) {  // four lanes, 64 bytes a step
    __m128i x1 = fold16(x, k3k4, load_block(p));
    __m128i x2 = load_block(p + 16);
    __m128i x3 = load_block(p + 32);
    __m128i x4 = load_block(p + 48);
    p += 64;
    n -= 64;
    while (n >= 64) {
      x1 = fold16(x1, k1k2, load_block(p));
      x2 = fold16(x2, k1k2, load_block(p + 16));
      x3 = fold16(x3, k1k2, load_block(p + 32));
      x4 = fold16(x4, k1k2, load_block(p + 48));
      p += 64;
      n -= 64;
    }
    // Fold the four lanes into one.
    x = fold16(x1, k3k4, x2);
    x = fold16(x, k3k4, x3);
    x = fold16(x, k3k4, x4);
  }
  while (n >= 16) {
    x = fold16(x, k3k4, load_block(p));
    p += 16;
    n -= 16;
  }
  if (n != 0) {
    // The last 16 bytes of the input: from data itself when it has them (the bytes below the
    // tail were folded already and are shuffled out), else gathered.
    const __m128i last = nd >= 16 ? load_block(data + nd - 16) : load_short_tail(p, n);
    x = fold_tail(x, k3k4, last, n);
  }
  // 128 -> 64 bits.
  __m128i y = _mm_clmulepi64_si128(x, k3k4, 0x10);
  x = _mm_xor_si128(_mm_srli_si128(x, 8), y);
  // 64 -> 32 bits.
  y = _mm_srli_si128(x, 4);
  x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, mask32), k5k0, 0x00), y);
  // Barrett reduction to the 32-bit register.
  y = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), poly, 0x10);
  y = _mm_clmulepi64_si128(_mm_and_si128(y, mask32), poly, 0x00);
  x = _mm_xor_si128(x, y);
  return static_cast<std::uint32_t>(_mm_extract_epi32(x, 1));
}

// Read once when the library is loaded, not behind a guard per call (issue 31). A CRC taken
// before that (another translation unit's static initialisation) sees false and takes the table
// path, which gives the same CRC.
const bool kCpuHasClmul = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}();

bool cpu_has_clmul() noexcept {
  return kCpuHasClmul;
}
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
