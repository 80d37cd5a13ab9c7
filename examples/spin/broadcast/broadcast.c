/* Binomial-tree broadcast across NAAs (seed 004, Fig. 5a and C.3.3; docs/spin.md "Puts to other
 * nodes"). Every NAA of the tree runs this image on its connection's STREAM region; the host bound
 * the NAA's children as peers 0..c-1 (Session::bind_peer), largest subtree first, and set the
 * descriptor's argument to c. Each packet that arrives is deposited into this NAA's memory and
 * put to every child at the same offset, as the paper's C.3.3 handler does
 * (PtlHandlerPutFromDevicePeer: one packet from HPU memory): the message moves through the tree
 * packet by packet, like a wormhole, instead of being stored before it is sent on. Function
 * code 33.
 *
 * -DFROM_MEMORY=1 forwards the deposited packet from NAA memory instead
 * (PtlHandlerPutFromHostPeer): the DMA engine reads it, the HPU does not copy it once per child,
 * but each put waits until the deposits before it are in memory (docs/spin.md). */
#include <naa/spin.h>

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const uint32_t children = (uint32_t)NAA_SPIN_ENV->arg;
  PtlHandlerDMAToHostB(p->base, p->region, p->offset, p->length);
  for (uint32_t k = 0; k < children && k < NAA_SPIN_MAX_PEERS; ++k) {
#if FROM_MEMORY
    PtlHandlerPutFromHostPeer(p->region, p->length, k, p->offset);
#else
    PtlHandlerPutFromDevicePeer(p->base, p->length, k, p->offset);
#endif
  }
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(33, 0, NULL, payload, NULL);
