/* Ping-pong, stored (seed 004 section 4.1, Fig. 3b/c "store"): every packet of the ping (the
 * call's STREAM input) is deposited in NAA memory at its offset of the OUTPUT region, the pong
 * buffer (B.6 PtlHandlerDMAToHostB); when the whole message is there, the completion handler
 * sends it back to the requester in one put from memory (PtlHandlerPutFromHost), as a receiver
 * that must see the whole message before it answers. Function code 27. */
#include <naa/spin.h>

static int pong_region(void) {
  return naa_spin_find_region(NAA_SPIN_REGION_OUTPUT, NAA_SPIN_REGION_STREAM, 0);
}

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const int pong = pong_region();
  if (pong < 0) return PTL_FAIL;
  PtlHandlerDMAToHostB(p->base, (uint32_t)pong, p->offset, p->length);
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)c;
  (void)state;
  const int pong = pong_region();
  if (pong < 0) return PTL_FAIL;
  PtlHandlerPutFromHost((uint32_t)pong, NAA_SPIN_ENV->regions[pong].size);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(27, 0, NULL, payload, completion);
