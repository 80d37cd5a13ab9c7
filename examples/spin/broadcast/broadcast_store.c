/* The store-and-forward baseline of the binomial-tree broadcast (seed 004 Fig. 5a: "RDMA" store
 * and forward; docs/spin.md "Puts to other nodes"): the same tree and bindings as broadcast.c,
 * but a node forwards only once it holds the whole message, as a host CPU relaying after the
 * RDMA completion would. The payload handlers only deposit; the completion handler (B.5), which
 * runs once the message ended, puts the deposited message from NAA memory to every child in
 * turn, largest subtree first (PtlHandlerPutFromHostPeer, in chunks of kChunk bytes so that the
 * DMA engine's read of the next chunk overlaps the link sending the last). Function code 33,
 * argument: the number of children, as broadcast.c. */
#include <naa/spin.h>

/* 16 packets of 4 KiB: one action reads its bytes from memory before the requester sends any. */
#define kChunk (64u * 1024u)

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  PtlHandlerDMAToHostB(p->base, p->region, p->offset, p->length);
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)state;
  const uint32_t children = (uint32_t)NAA_SPIN_ENV->arg;
  const int region = naa_spin_find_region(NAA_SPIN_REGION_STREAM, 0, 0);
  if (region < 0) return PTL_FAIL;
  for (uint32_t k = 0; k < children && k < NAA_SPIN_MAX_PEERS; ++k) {
    for (uint64_t off = 0; off < c->bytes; off += kChunk) {
      const uint64_t left = c->bytes - off;
      PtlHandlerPutFromHostPeer((uint32_t)region, left < kChunk ? (uint32_t)left : kChunk, k, off);
    }
  }
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(33, 0, NULL, payload, completion);
