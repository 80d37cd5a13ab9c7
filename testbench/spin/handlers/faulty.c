/* Handlers that break the rules, for the spin tests: FAULT=1 reads outside the HPU's memory
 * (PTL_SEGV), FAULT=2 never returns (the watchdog), FAULT=3 returns PTL_FAIL, FAULT=4 executes an
 * ECALL. Each serves function code 20 + FAULT. */
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
#else
  (void)p;
  __asm__ volatile("ecall");
  return PTL_SUCCESS;
#endif
}

NAA_SPIN_HANDLERS(20 + FAULT, 0, NULL, payload, NULL);
