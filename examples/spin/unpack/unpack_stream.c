/* Strided unpack, streamed (seed 004 section 5.2, Fig. 7a "sPIN"): each packet of the packed
 * message (the call's STREAM input) knows its offset, so its blocks go straight to their places
 * in the result region as it arrives, on whichever HPU runs it; the completion handler sends the
 * result to the requester. Function code 28. */
#include "unpack.h"

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const int result = unpack_result_region();
  if (result < 0) return PTL_FAIL;
  return unpack_bytes(p->base, (uint32_t)p->offset, p->length, (uint32_t)result);
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)c;
  (void)state;
  const int result = unpack_result_region();
  if (result < 0) return PTL_FAIL;
  PtlHandlerPutFromHost((uint32_t)result, NAA_SPIN_ENV->regions[result].size);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(28, 0, NULL, payload, completion);
