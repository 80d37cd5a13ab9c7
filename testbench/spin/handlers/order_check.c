/* A sPIN handler for the IRN streaming test (testbench/spin/irn_stream_check.sh): it checks
 * sPIN's order (seed 004 B.3: a message's header handler runs once, before any payload handler
 * of it) whatever order the packets arrive in. Every payload packet of the STREAM region is XORed
 * with the low byte of the descriptor's argument, deposited at its offset and put back to the
 * host (as xor_count.c). The state counts header runs, payload runs, payload runs that found no
 * header run before them, and bytes, and keeps 1 + the offset of the first payload packet to run
 * (with one HPU: the first packet to reach the handlers). The completion handler writes these
 * five words to the first OUTPUT region that is not streamed and sends it; it returns FAIL when
 * a payload ran before the header or the header ran other than once. */
#include <naa/spin.h>

typedef struct {
  uint32_t headers;
  uint32_t payloads;
  uint32_t before_header;
  uint32_t bytes;
  uint32_t first_offset_plus1;
} order_t;

enum { kChunk = 512 };

static int header(const ptl_header_t* h, void* state) {
  (void)h;
  PtlHandlerFAdd(&((order_t*)state)->headers, 1);
  return PTL_SUCCESS;
}

static int payload(const ptl_payload_t* p, void* state) {
  order_t* o = (order_t*)state;
  if (o->headers == 0) PtlHandlerFAdd(&o->before_header, 1);
  (void)PtlHandlerCAS(&o->first_offset_plus1, 0, (uint32_t)p->offset + 1);
  const uint8_t key = (uint8_t)NAA_SPIN_ENV->arg;
  uint8_t out[kChunk];
  for (uint32_t done = 0; done < p->length; done += kChunk) {
    const uint32_t n = p->length - done < kChunk ? p->length - done : kChunk;
    for (uint32_t i = 0; i < n; ++i)
      out[i] = p->base[done + i] ^ key;
    PtlHandlerDMAToHostB(out, p->region, p->offset + done, n);
    PtlHandlerPutFromDevice(out, n, p->region, p->offset + done);
  }
  PtlHandlerFAdd(&o->payloads, 1);
  PtlHandlerFAdd(&o->bytes, p->length);
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* done, void* state) {
  const order_t* o = (const order_t*)state;
  const uint32_t result[5] = {o->headers, o->payloads, o->before_header, o->bytes,
                              o->first_offset_plus1};
  const int out = naa_spin_find_region(NAA_SPIN_REGION_OUTPUT,
                                       NAA_SPIN_REGION_STREAM | NAA_SPIN_REGION_INTERNAL, 0);
  if (out < 0) return PTL_FAIL;
  PtlHandlerDMAToHostB(result, (uint32_t)out, 0, sizeof result);
  PtlHandlerPutFromHost((uint32_t)out, sizeof result);
  if (o->headers != 1 || o->before_header != 0 || done->bytes != o->bytes) return PTL_FAIL;
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(21, sizeof(order_t), header, payload, completion);
