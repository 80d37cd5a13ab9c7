/* Binomial-tree broadcast across NAAs (seed 004, Fig. 5a and C.3.3; docs/spin.md "Puts to other
 * nodes"). Every NAA of the tree runs this image on its connection's STREAM region; the host bound
 * the NAA's children as peers 0..c-1 (Session::bind_peer), largest subtree first, and set the
 * descriptor's argument to c. Each packet that arrives is deposited into this NAA's memory and
 * put from there to every child at the same offset: the message moves through the tree packet by
 * packet, like a wormhole, instead of being stored before it is sent on. Function code 33.
 *
 * -DFROM_DEVICE=1 puts each packet from HPU memory instead (PtlHandlerPutFromDevicePeer, as the
 * paper's C.3.3 handler does): the HPU copies it once per child at its width, which costs more
 * HPU time than reading it back from NAA memory through the DMA engine (docs/spin.md). */
#include <naa/spin.h>

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const uint32_t children = (uint32_t)NAA_SPIN_ENV->arg;
  PtlHandlerDMAToHostB(p->base, p->region, p->offset, p->length);
  for (uint32_t k = 0; k < children && k < NAA_SPIN_MAX_PEERS; ++k) {
#if FROM_DEVICE
    PtlHandlerPutFromDevicePeer(p->base, p->length, k, p->offset);
#else
    PtlHandlerPutFromHostPeer(p->region, p->length, k, p->offset);
#endif
  }
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(33, 0, NULL, payload, NULL);
