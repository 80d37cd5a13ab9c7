/* Ping-pong, streamed (seed 004 section 4.1, Fig. 3b/c "stream"): every packet of the ping (the
 * call's STREAM input) is put straight back to the requester from the packet buffer as it
 * arrives (B.6 PtlHandlerPutFromDevice), at the same offset of the call's OUTPUT region, the pong
 * buffer. The pong leaves while the rest of the ping is still on the wire. Nothing is stored in
 * NAA memory and no completion handler runs: the NAA answers the call when the last payload
 * handler is done. Function code 26. */
#include <naa/spin.h>

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const int pong = naa_spin_find_region(NAA_SPIN_REGION_OUTPUT, NAA_SPIN_REGION_STREAM, 0);
  if (pong < 0) return PTL_FAIL;
  PtlHandlerPutFromDevice(p->base, p->length, (uint32_t)pong, p->offset);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(26, 0, NULL, payload, NULL);
