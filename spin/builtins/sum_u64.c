/* sum_u64 (PROTOCOL.md 5.3) as a streaming handler: each packet's uint32 LE words are summed into
 * this HPU's 64-bit slot of HPU memory (PTL_MY_HPU-indexed private data, seed 004 section 3); the
 * completion handler adds the slots and writes the 8-byte result (sim/src/handlers.cpp
 * SumHandler, the C++ oracle). Packets start at multiples of the MTU, so no word straddles two. */
#include "builtins.h"

#ifndef FN
#define FN 5
#endif

static int payload(const ptl_payload_t* p, void* state) {
  uint64_t* slots = (uint64_t*)state;
  uint64_t s = 0;
  for (uint32_t i = 0; i + 4 <= p->length; i += 4)
    s += naa_builtin_load_le32(p->base + i);
  slots[PTL_MY_HPU] += s;
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)c;
  const int o = naa_builtin_result_region();
  if (o < 0 || NAA_SPIN_ENV->regions[o].size < 8) return PTL_FAIL;
  const uint64_t* slots = (const uint64_t*)state;
  uint64_t total = 0;
  for (uint32_t h = 0; h < PTL_NUM_HPUS; ++h)
    total += slots[h];
  PtlHandlerDMAToHostB(&total, (uint32_t)o, 0, 8);
  PtlHandlerPutFromDevice(&total, 8, (uint32_t)o, 0);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(FN, 8, NULL, payload, completion);
