/* add1 / add2 (PROTOCOL.md 5.3) as a streaming handler: each packet's bytes plus K (mod 256) are
 * deposited at the packet's offset and, when the region is an OUTPUT, put straight back to the
 * host from HPU memory (sim/src/handlers.cpp AddConstantHandler, the C++ oracle). FN and K are
 * set by the build: 1/1 for add1, 2/2 for add2. */
#include "builtins.h"

#ifndef FN
#define FN 1
#endif
#ifndef K
#define K FN
#endif

enum { kChunk = 1024 };

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const int output = (NAA_SPIN_ENV->regions[p->region].flags & NAA_SPIN_REGION_OUTPUT) != 0;
  uint8_t out[kChunk];
  for (uint32_t done = 0; done < p->length; done += kChunk) {
    const uint32_t n = p->length - done < kChunk ? p->length - done : kChunk;
    for (uint32_t i = 0; i < n; ++i)
      out[i] = (uint8_t)(p->base[done + i] + K);
    PtlHandlerDMAToHostB(out, p->region, p->offset + done, n);
    if (output) PtlHandlerPutFromDevice(out, n, p->region, p->offset + done);
  }
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)c;
  (void)state;
  return PTL_SUCCESS; /* every result left with its packet */
}

NAA_SPIN_HANDLERS(FN, 0, NULL, payload, completion);
