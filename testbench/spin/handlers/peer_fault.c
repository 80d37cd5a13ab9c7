/* Faulty puts to peers (testbench/spin test_spin_peer.cpp): FAULT=1 puts to peer 5, which nobody
 * bound; FAULT=2 puts to peer 0 at 4 GiB, past the end of its region. Either ends the handler with
 * PTL_SEGV (the call answers 0x7E) and nothing reaches the peer. Function code 33, like the
 * broadcast it stands in for. */
#include <naa/spin.h>

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
#if FAULT == 1
  PtlHandlerPutFromDevicePeer(p->base, p->length, 5, p->offset);
#else
  PtlHandlerPutFromDevicePeer(p->base, p->length, 0, p->offset + (1ull << 32));
#endif
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS(33, 0, NULL, payload, NULL);
