/* Strided unpack, stored (the baseline of seed 004 Fig. 7a: the message lands contiguously,
 * then one processor unpacks it): payload handlers deposit the packed message in NAA memory (the
 * second OUTPUT region, a scratch buffer that is never sent back); once all of it is there, the
 * completion handler, on one HPU, reads it back in chunks and scatters the blocks, then sends the
 * result to the requester. Function code 29. */
#include "unpack.h"

enum { kChunk = 2048 }; /* bytes per read; the HPU's stack is 4 KiB */

static int scratch_region(void) {
  return naa_spin_find_region(NAA_SPIN_REGION_OUTPUT, NAA_SPIN_REGION_STREAM, 1);
}

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const int scratch = scratch_region();
  if (scratch < 0) return PTL_FAIL;
  PtlHandlerDMAToHostB(p->base, (uint32_t)scratch, p->offset, p->length);
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)state;
  const int result = unpack_result_region();
  const int scratch = scratch_region();
  if (result < 0 || scratch < 0) return PTL_FAIL;
  uint8_t chunk[kChunk];
  const uint32_t total = (uint32_t)c->bytes;
  for (uint32_t pos = 0; pos < total; pos += kChunk) {
    const uint32_t n = total - pos < kChunk ? total - pos : kChunk;
    PtlHandlerDMAFromHostB(chunk, (uint32_t)scratch, pos, n);
    if (unpack_bytes(chunk, pos, n, (uint32_t)result) != PTL_SUCCESS) return PTL_FAIL;
  }
  PtlHandlerPutFromHost((uint32_t)result, NAA_SPIN_ENV->regions[result].size);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(29, 0, NULL, payload, completion);
