/* Handlers that break the rules, for the spin tests: FAULT=1 reads outside the HPU's memory
 * (PTL_SEGV), FAULT=2 never returns (the watchdog), FAULT=3 returns PTL_FAIL, FAULT=4 executes an
 * ECALL; each serves function code 20 + FAULT. FAULT=5 (function code 34): the header handler
 * reads outside the HPU's memory after a DMA (dropped with it, all or none); the payload handler
 * would succeed, so only the header's SEGV can fail the call. */
#include <naa/spin.h>

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
#if FAULT == 1
  return *(volatile const int*)0x50000000u + (int)p->length;
#elif FAULT == 2
  for (volatile uint32_t i = p->length;; ++i) {
  }
#elif FAULT == 3
  (void)p;
  return PTL_FAIL;
#elif FAULT == 4
  (void)p;
  __asm__ volatile("ecall");
  return PTL_SUCCESS;
#else
  (void)p;
  return PTL_SUCCESS;
#endif
}

#if FAULT == 5
static int header(const ptl_header_t* h, void* state) {
  (void)state;
  const uint8_t marker[4] = {0xDE, 0xAD, 0xBE, 0xEF};
  PtlHandlerDMAToHostB(marker, h->region, h->offset, sizeof marker);
  return *(volatile const int*)0x50000000u;
}
NAA_SPIN_HANDLERS(34, 0, header, payload, NULL);
#else
NAA_SPIN_HANDLERS(20 + FAULT, 0, NULL, payload, NULL);
#endif
