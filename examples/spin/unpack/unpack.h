/* Strided unpack shared by the two handlers: `n` bytes of the packed message, starting at byte
 * `pos` of it, go to the result region. The message is blocks of `block` bytes; block i goes to
 * offset (i ^ 1) * stride (the vector datatype of seed 004 section 5.2). Offsets fit 32 bits (a
 * region is at most 2 GiB, PROTOCOL.md 7), so the division is the core's 32-bit DIVU. */
#ifndef UNPACK_H
#define UNPACK_H

#include <naa/spin.h>

/* The descriptor's argument (naa-call/naa-cosim --stream-arg): stride << 32 | block. */
static inline uint32_t unpack_block(void) {
  return (uint32_t)NAA_SPIN_ENV->arg;
}
static inline uint32_t unpack_stride(void) {
  return (uint32_t)(NAA_SPIN_ENV->arg >> 32);
}
/* The result: the first OUTPUT region that is not streamed. */
static inline int unpack_result_region(void) {
  return naa_spin_find_region(NAA_SPIN_REGION_OUTPUT, NAA_SPIN_REGION_STREAM, 0);
}

static inline int unpack_bytes(const uint8_t* data, uint32_t pos, uint32_t n, uint32_t result) {
  const uint32_t block = unpack_block();
  const uint32_t stride = unpack_stride();
  if (block == 0 || stride < block) return PTL_FAIL;
  uint32_t i = 0;
  while (i < n) {
    const uint32_t within = pos % block;
    const uint32_t left = n - i;
    const uint32_t take = block - within < left ? block - within : left;
    PtlHandlerDMAToHostB(data + i, result, (uint64_t)(pos / block) * stride + within, take);
    pos += take;
    i += take;
  }
  return PTL_SUCCESS;
}

#endif
