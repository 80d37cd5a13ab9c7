/* xor_stream: a streaming handler for function code 30 (docs/spin.md). Every packet of the call's
 * STREAM region is XORed with the low byte of the descriptor's argument (naa-call --stream-arg)
 * as it arrives, written to NAA memory at its offset and put straight back to the host from HPU
 * memory, in chunks that fit the HPU's 4 KiB stack. No completion handler: every result left
 * with its packet, and the NAA answers the call when the last payload handler is done. */
#include <naa/spin.h>

enum { kChunk = 1024 };

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  const uint8_t key = (uint8_t)NAA_SPIN_ENV->arg;
  uint8_t out[kChunk];
  for (uint32_t done = 0; done < p->length; done += kChunk) {
    const uint32_t n = p->length - done < kChunk ? p->length - done : kChunk;
    for (uint32_t i = 0; i < n; ++i)
      out[i] = p->base[done + i] ^ key;
    PtlHandlerDMAToHostB(out, p->region, p->offset + done, n);
    PtlHandlerPutFromDevice(out, n, p->region, p->offset + done);
  }
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(30, 0, NULL, payload, NULL);
