/* Accumulate into memory (seed 004, Fig. 3d): each packet of the STREAM region carries uint32
 * values; the payload handler reads the matching part of the call's first non-streamed INOUT
 * region from NAA memory (DMA from memory), adds the packet to it (wrapping) and writes it back
 * (DMA to memory). The completion handler sends the region to the host. Packets cover disjoint
 * offsets, so no two handlers touch the same words. Function code 25. */
#include <naa/spin.h>

enum { kChunk = 256 }; /* words per DMA */

static int acc_region(void) {
  return naa_spin_find_region(NAA_SPIN_REGION_INPUT | NAA_SPIN_REGION_OUTPUT,
                              NAA_SPIN_REGION_STREAM | NAA_SPIN_REGION_INTERNAL, 0);
}

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const int acc = acc_region();
  if (acc < 0 || p->offset % 4 != 0 || p->length % 4 != 0) return PTL_FAIL;
  uint32_t sum[kChunk];
  const uint32_t words = p->length / 4;
  for (uint32_t done = 0; done < words; done += kChunk) {
    const uint32_t n = words - done < kChunk ? words - done : kChunk;
    const uint64_t at = p->offset + 4ull * done;
    const ptl_dma_h h = PtlHandlerDMAFromHostNB(sum, (uint32_t)acc, at, 4 * n);
    PtlHandlerDMAWait(h);
    const uint32_t* in = (const uint32_t*)(p->base + 4 * done);
    for (uint32_t i = 0; i < n; ++i)
      sum[i] += in[i];
    PtlHandlerDMAToHostB(sum, (uint32_t)acc, at, 4 * n);
  }
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)c;
  (void)state;
  const int acc = acc_region();
  if (acc < 0) return PTL_FAIL;
  PtlHandlerPutFromHost((uint32_t)acc, NAA_SPIN_ENV->regions[acc].size);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(25, 0, NULL, payload, completion);
