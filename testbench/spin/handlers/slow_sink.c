/* A slow end of a broadcast (testbench/spin test_spin_peer.cpp, flow control): each packet is
 * deposited like broadcast.c does, after SPIN_ITERATIONS rounds of a loop the compiler must keep,
 * so that the NAA takes packets several times slower than its parent forwards them and RNR-NAKs
 * the parent's puts. Function code 33. */
#include <naa/spin.h>

#ifndef SPIN_ITERATIONS
#define SPIN_ITERATIONS 600
#endif

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  volatile uint32_t n = 0;
  for (uint32_t i = 0; i < SPIN_ITERATIONS; ++i)
    n = n + i;
  PtlHandlerDMAToHostB(p->base, p->region, p->offset, p->length);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(33, 0, NULL, payload, NULL);
