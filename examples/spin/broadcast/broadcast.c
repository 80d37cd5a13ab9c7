/* Binomial-tree broadcast across NAAs (seed 004, Fig. 5a and C.3.3; docs/spin.md "Puts to other
 * nodes"). Every NAA of the tree runs this image on its connection's STREAM region; the host bound
 * the NAA's children as peers 0..c-1 (Session::bind_peer), largest subtree first, and set the
 * descriptor's argument to c. Each packet that arrives is put to every child at once, at its own
 * offset, and deposited into this NAA's memory: the message moves through the tree packet by
 * packet, like a wormhole, instead of being stored before it is sent on. A packet is at most one
 * MTU (the peers' connections use the same path MTU), so it is one put. Function code 33. */
#include <naa/spin.h>

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const uint32_t children = (uint32_t)NAA_SPIN_ENV->arg;
  for (uint32_t k = 0; k < children && k < NAA_SPIN_MAX_PEERS; ++k)
    PtlHandlerPutFromDevicePeer(p->base, p->length, k, p->offset);
  PtlHandlerDMAToHostB(p->base, p->region, p->offset, p->length);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(33, 0, NULL, payload, NULL);
