// CRC-32 (zlib's reflected polynomial) by carry-less multiplication folding, as inline steps that
// crc32.cpp (any buffer) and icrc.cpp (the ICRC, its head built in registers; issue 31) share.
// Private to protocol/src. Only on x86-64 with GCC or Clang (NAA_CRC32_CLMUL); every function is
// compiled for PCLMULQDQ + SSE4.1 (which includes SSSE3's byte shuffle) and must be called only
// when cpu_has_clmul() holds.
//
// Carry-less multiplication folding: Gopal et al., "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ Instruction", Intel 2009, with the constants of the bit-reflected polynomial
// 0x104C11DB7 as in the Linux kernel (crc32-pclmul_asm.S) and Chromium's zlib (crc32_simd.c):
// x^(4*128+32) and x^(4*128-32) mod P fold 512 bits, x^(128+32) and x^(128-32) mod P fold 128,
// x^64 mod P folds 64, then a Barrett reduction to 32 bits.
//
// The folding state is one 16-byte block x with this invariant: the CRC from a zero register
// over x's bytes followed by the rest of the input is the CRC of the whole input. So the start
// register is xored into the first block, and zero bytes in front of a block change nothing.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NAA_CRC32_CLMUL 1

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace naa::protocol::clmul {

// Read once when the library is loaded (crc32.cpp), not behind a guard per call (issue 31). A
// CRC taken before that (another translation unit's static initialisation) sees false and takes
// the table path, which gives the same CRC.
extern const bool kCpuHasClmul;
[[nodiscard]] inline bool cpu_has_clmul() noexcept {
  return kCpuHasClmul;
}

#define NAA_CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

NAA_CLMUL_TARGET inline __m128i k1k2() noexcept {  // 512-bit fold
  return _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
}
NAA_CLMUL_TARGET inline __m128i k3k4() noexcept {  // 128-bit fold
  return _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
}

NAA_CLMUL_TARGET inline __m128i load_block(const std::uint8_t* p) noexcept {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));  // NOLINT: unaligned load
}

// x * (x^(128+32), x^(128-32)) mod P, xor next: one 128-bit fold step (x, then 16 bytes `next`).
NAA_CLMUL_TARGET inline __m128i fold16(__m128i x, __m128i k, __m128i next) noexcept {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x11), _mm_clmulepi64_si128(x, k, 0x00)), next);
}

// pshufb controls from one table (as zlib-ng's crc32 folding does): the 16 bytes at
// kShuffle + 16 - s move a block's bytes s places up (byte i to i + s, zeros below); those at
// kShuffle + 16 + s move them s places down (byte i to i - s, zeros above). 0x80 yields zero.
// Bytes are in input order: byte 0 of a block is the earliest.
alignas(16) inline constexpr std::uint8_t kShuffle[48] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

// The state x followed by t (1-15) more bytes, the top t bytes of `last` (the input's last 16
// bytes): zeros, then x's first t bytes, form one block (zero bytes in front change nothing) and
// x's other 16 - t bytes then the t new ones the next, so one fold step takes them (the partial
// block of zlib-ng's crc32_fold_pclmulqdq; no byte-wise tail, issue 31).
NAA_CLMUL_TARGET inline __m128i fold_tail(__m128i x, __m128i last, std::size_t t) noexcept {
  const __m128i up = load_block(kShuffle + t);         // up by 16 - t: x's first t bytes to the top
  const __m128i down = load_block(kShuffle + 16 + t);  // down by t: x's other bytes to the bottom
  const __m128i high = _mm_shuffle_epi8(x, up);
  // blendv takes `last` where the control byte's top bit is clear: the top t bytes of `up`.
  const __m128i low = _mm_blendv_epi8(last, _mm_shuffle_epi8(x, down), up);
  return fold16(high, k3k4(), low);
}

// The state x followed by the n bytes at p, whole blocks only (n a multiple of 16 is not
// required: the n % 16 bytes left over are the caller's). Returns the state; p and n advance.
NAA_CLMUL_TARGET inline __m128i fold_blocks(__m128i x, const std::uint8_t*& p,
                                            std::size_t& n) noexcept {
  if (n >= 64) {  // four lanes, 64 bytes a step
    __m128i x1 = fold16(x, k3k4(), load_block(p));
    __m128i x2 = load_block(p + 16);
    __m128i x3 = load_block(p + 32);
    __m128i x4 = load_block(p + 48);
    p += 64;
    n -= 64;
    while (n >= 64) {
      x1 = fold16(x1, k1k2(), load_block(p));
      x2 = fold16(x2, k1k2(), load_block(p + 16));
      x3 = fold16(x3, k1k2(), load_block(p + 32));
      x4 = fold16(x4, k1k2(), load_block(p + 48));
      p += 64;
      n -= 64;
    }
    // Fold the four lanes into one.
    x = fold16(x1, k3k4(), x2);
    x = fold16(x, k3k4(), x3);
    x = fold16(x, k3k4(), x4);
  }
  while (n >= 16) {
    x = fold16(x, k3k4(), load_block(p));
    p += 16;
    n -= 16;
  }
  return x;
}

// The 32-bit register the state stands for: 128 -> 64 -> 32 bits, then Barrett.
NAA_CLMUL_TARGET inline std::uint32_t reduce(__m128i x) noexcept {
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
  const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
  const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
  // 128 -> 64 bits.
  __m128i y = _mm_clmulepi64_si128(x, k3k4(), 0x10);
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

}  // namespace naa::protocol::clmul

#endif
