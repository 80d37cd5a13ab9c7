/* PROCEED against PROCESS_DATA (seed 004 B.3; docs/spin.md "Return codes"), function code 33.
 *
 * Every message starts with a 16-byte user header. With the descriptor's argument 1 the header
 * handler returns PTL_PROCEED: no payload handler runs and the NAA deposits the message, user
 * header included, as a plain RDMA WRITE (sPIN's fallback to the default action, as its
 * rendezvous protocol does for small messages, 5.1). With argument 0 it returns
 * PTL_PROCESS_DATA after copying the user header to its place, and the payload handlers copy
 * each packet into NAA memory themselves. Either way the completion handler sends the STREAM
 * region back (PtlHandlerPutFromHost), so the host gets its message back unchanged. */
#include <naa/spin.h>

typedef struct {
  uint32_t words[4];
} user_hdr_t;

static int header(const ptl_header_t* h, void* state) {
  (void)state;
  if (NAA_SPIN_ENV->arg & 1) return PTL_PROCEED;
  PtlHandlerDMAToHostB(h->user_hdr, h->region, h->offset, h->user_hdr_length);
  return PTL_PROCESS_DATA;
}

static int payload(const ptl_payload_t* p, void* state) {
  (void)state;
  if (NAA_SPIN_ENV->arg & 1) return PTL_FAIL; /* after PROCEED none may run: the call fails */
  PtlHandlerDMAToHostB(p->base, p->region, p->offset, p->length);
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  (void)c;
  (void)state;
  const int stream = naa_spin_find_region(NAA_SPIN_REGION_STREAM | NAA_SPIN_REGION_OUTPUT,
                                          NAA_SPIN_REGION_INTERNAL, 0);
  if (stream < 0) return PTL_FAIL;
  PtlHandlerPutFromHost((uint32_t)stream, NAA_SPIN_ENV->regions[stream].size);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS_USER_HDR(33, 0, user_hdr_t, header, payload, completion);
