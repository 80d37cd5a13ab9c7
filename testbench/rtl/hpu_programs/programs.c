/* Programs for the HPU testbench (testbench/rtl/test_hpu_programs.cpp), compiled twice: with
 * clang-14 for riscv32 (rv32im, ilp32, freestanding) into an image the cores run, and for the
 * host into the test itself, the oracle. Each has the handler-like signature
 * uint32_t f(uint32_t *buf, uint32_t n, uint32_t seed): it fills and transforms buf[0..n) and
 * returns a digest. No undefined behaviour (the two compilers must agree): no division by zero,
 * no INT_MIN / -1, no signed overflow. */
#include <stdint.h>

#include "programs.h"

static uint32_t xorshift(uint32_t* s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *s = x;
  return x;
}

uint32_t hpu_prog_arith(uint32_t* buf, uint32_t n, uint32_t seed) {
  uint32_t s = seed | 1u, acc = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t a = xorshift(&s), b = xorshift(&s);
    const int32_t sa = (int32_t)(a >> 1) - (int32_t)(b >> 2);
    int32_t sb = (int32_t)(b % 2001u) - 1000;
    if (sb == 0) sb = 7;
    const uint32_t ub = (b >> (a & 15u)) | 1u;
    uint32_t v = a * b;
    v ^= (uint32_t)(((uint64_t)a * b) >> 32);
    v += (uint32_t)(((int64_t)sa * (int64_t)sb) >> 32);
    v += (uint32_t)(sa / sb) + (uint32_t)(sa % sb);
    v ^= a / ub + a % ub;
    v += (uint32_t)(sa >> (b & 31u)) + (a << (b & 31u)) + (a >> (b & 7u));
    v += (sa < sb) + (a < b) * 2u;
    buf[i] = v;
    acc = acc * 31u + v;
  }
  return acc;
}

uint32_t hpu_prog_crc32(uint32_t* buf, uint32_t n, uint32_t seed) {
  uint32_t s = seed | 1u;
  for (uint32_t i = 0; i < n; ++i)
    buf[i] = xorshift(&s);
  const uint8_t* p = (const uint8_t*)buf;
  uint32_t crc = 0xFFFFFFFFu;
  for (uint32_t i = 0; i < 4 * n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t hpu_prog_sort(uint32_t* buf, uint32_t n, uint32_t seed) {
  uint32_t s = seed | 1u;
  int32_t* v = (int32_t*)buf;
  for (uint32_t i = 0; i < n; ++i)
    v[i] = (int32_t)(xorshift(&s) >> 4) - (1 << 26);
  for (uint32_t i = 1; i < n; ++i) {
    const int32_t x = v[i];
    uint32_t j = i;
    while (j > 0 && v[j - 1] > x) {
      v[j] = v[j - 1];
      --j;
    }
    v[j] = x;
  }
  uint32_t digest = 0;
  for (uint32_t i = 0; i < n; ++i)
    digest = digest * 33u ^ (uint32_t)v[i];
  return digest;
}

uint32_t hpu_prog_bytes(uint32_t* buf, uint32_t n, uint32_t seed) {
  uint32_t s = seed | 1u;
  for (uint32_t i = 0; i < n; ++i)
    buf[i] = xorshift(&s);
  int8_t* b = (int8_t*)buf;
  int16_t* h = (int16_t*)buf;
  int32_t sum = 0;
  for (uint32_t i = 0; i < 4 * n; ++i)
    sum += b[i];
  for (uint32_t i = 0; i < 2 * n; ++i)
    sum += h[i] / 16;
  /* Reverse the bytes in place, then halve every halfword (arithmetic). */
  for (uint32_t i = 0, j = 4 * n - 1; i < j; ++i, --j) {
    const int8_t t = b[i];
    b[i] = b[j];
    b[j] = t;
  }
  for (uint32_t i = 0; i < 2 * n; ++i)
    h[i] = (int16_t)(h[i] >> 1);
  return (uint32_t)sum;
}

static uint32_t ackermann(uint32_t m, uint32_t k) {
  if (m == 0) return k + 1;
  if (k == 0) return ackermann(m - 1, 1);
  return ackermann(m - 1, ackermann(m, k - 1));
}

uint32_t hpu_prog_recursion(uint32_t* buf, uint32_t n, uint32_t seed) {
  uint32_t r = 0;
  for (uint32_t i = 0; i < n && i < 4; ++i) {
    buf[i] = ackermann(2, (seed + i) % 6u);
    r += buf[i];
  }
  return r;
}

uint32_t hpu_prog_mul64(uint32_t* buf, uint32_t n, uint32_t seed) {
  uint32_t s = seed | 1u;
  uint64_t h = 0xCBF29CE484222325ull;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t x = ((uint64_t)xorshift(&s) << 32) | xorshift(&s);
    h = (h ^ x) * 0x100000001B3ull;
    h += (x >> (i & 63u)) + (x << ((i * 7u) & 63u));
    buf[i] = (uint32_t)(h >> 17);
  }
  return (uint32_t)(h ^ (h >> 32));
}

#ifdef __riscv
/* The compiler may call these for loops and copies (freestanding C still needs them). */
void* memset(void* d, int c, unsigned long len);
void* memcpy(void* d, const void* src, unsigned long len);
void* memset(void* d, int c, unsigned long len) {
  uint8_t* p = (uint8_t*)d;
  while (len--)
    *p++ = (uint8_t)c;
  return d;
}
void* memcpy(void* d, const void* src, unsigned long len) {
  uint8_t* p = (uint8_t*)d;
  const uint8_t* q = (const uint8_t*)src;
  while (len--)
    *p++ = *q++;
  return d;
}
#endif
