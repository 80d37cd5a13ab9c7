/* unpack_strided (seed 004 section 5.2, the datatype example) as a streaming handler: the message
 * is blocks of `block` bytes, deposited into the result region at multiples of `stride`
 * (descriptor argument: stride << 32 | block). Each packet knows its offset, so its blocks go
 * straight to their places; the completion handler writes the region back
 * (sim/src/handlers.cpp UnpackStridedHandler, the C++ oracle). Offsets fit 32 bits: a region is
 * at most 2 GiB (PROTOCOL.md 7), so the division is the core's 32-bit DIVU. */
#include "builtins.h"

#ifndef FN
#define FN 7
#endif

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const uint32_t stride = (uint32_t)(NAA_SPIN_ENV->arg >> 32);
  const uint32_t block = (uint32_t)NAA_SPIN_ENV->arg;
  const int o = naa_builtin_result_region();
  if (block == 0 || stride < block || o < 0) return PTL_FAIL;
  uint32_t pos = (uint32_t)p->offset;
  uint32_t i = 0;
  while (i < p->length) {
    const uint32_t within = pos % block;
    const uint32_t left = p->length - i;
    const uint32_t n = block - within < left ? block - within : left;
    const uint64_t at = (uint64_t)(pos / block) * stride + within;
    PtlHandlerDMAToHostB(p->base + i, (uint32_t)o, at, n);
    pos += n;
    i += n;
  }
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)c;
  (void)state;
  const int o = naa_builtin_result_region();
  if (o < 0) return PTL_FAIL;
  PtlHandlerPutFromHost((uint32_t)o, NAA_SPIN_ENV->regions[o].size);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(FN, 0, NULL, payload, completion);
