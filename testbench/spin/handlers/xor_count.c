/* A sPIN handler for the spin tests (test_spin_handlers.cpp): every payload packet of the STREAM
 * region is XORed with the low byte of the descriptor's argument, deposited at its offset and
 * put straight back to the host from HPU memory; the handlers count packets and bytes in the
 * shared HPU memory with fetch-and-add; the completion handler writes the two counters to the
 * call's first OUTPUT region that is not streamed and sends it (PutFromHost), which carries the
 * call's result. */
#include <naa/spin.h>

#ifndef XOR_COUNT_FN
#define XOR_COUNT_FN 20
#endif

typedef struct {
  uint32_t packets;
  uint32_t bytes;
} counters_t;

enum { kChunk = 512 };

static int payload(const ptl_payload_t* p, void* state) {
  const uint8_t key = (uint8_t)NAA_SPIN_ENV->arg;
  uint8_t out[kChunk];
  for (uint32_t done = 0; done < p->length; done += kChunk) {
    const uint32_t n = p->length - done < kChunk ? p->length - done : kChunk;
    for (uint32_t i = 0; i < n; ++i)
      out[i] = p->base[done + i] ^ key;
    PtlHandlerDMAToHostB(out, p->region, p->offset + done, n);
    PtlHandlerPutFromDevice(out, n, p->region, p->offset + done);
  }
  counters_t* c = (counters_t*)state;
  PtlHandlerFAdd(&c->packets, 1);
  PtlHandlerFAdd(&c->bytes, p->length);
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* done, void* state) {
  const counters_t* c = (const counters_t*)state;
  const uint32_t result[2] = {c->packets, c->bytes};
  const int out = naa_spin_find_region(NAA_SPIN_REGION_OUTPUT,
                                       NAA_SPIN_REGION_STREAM | NAA_SPIN_REGION_INTERNAL, 0);
  if (done->bytes != c->bytes || out < 0) return PTL_FAIL;
  PtlHandlerDMAToHostB(result, (uint32_t)out, 0, sizeof result);
  PtlHandlerPutFromHost((uint32_t)out, sizeof result);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(XOR_COUNT_FN, sizeof(counters_t), NULL, payload, completion);
