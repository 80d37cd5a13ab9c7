/* A sPIN handler for test_spin_header.cpp: the user header, the header handler's return codes and
 * the counters (seed 004 3.2.1, B.3, B.6; docs/spin.md "Return codes", "Counters").
 *
 * Each message starts with a user header {magic, action, value, 0}. The header handler records
 * what it saw in the handler state, copies the user header unchanged to the message's place in
 * NAA memory, counts the message in counter 0 and returns according to `action`. The payload
 * handlers XOR their packet with the descriptor's argument into NAA memory and count bytes in
 * counter 1. The completion handler puts every STREAM region back to the host and then a report
 * (report_t) into the call's first OUTPUT region that is not streamed. */
#include <naa/spin.h>

#define HEADER_CHECK_FN 32

typedef struct {
  uint32_t magic;
  uint32_t action;
  uint32_t value;
  uint32_t reserved;
} user_hdr_t;

enum {
  kProcess = 0,        /* PTL_PROCESS_DATA */
  kDrop = 1,           /* PTL_DROP */
  kProceed = 2,        /* PTL_PROCEED */
  kProcessPending = 3, /* PTL_PROCESS_DATA_PENDING: the same as PROCESS_DATA here */
  kSetCounter = 4,     /* PtlHandlerCTSet(1, {value, 7}), then PROCESS_DATA */
  kPayloadProceed = 5  /* the payload handlers return PTL_PROCEED, not one of theirs */
};

/* The report, in 32-bit words (the test reads the same layout). */
typedef struct {
  uint32_t header_runs;
  uint32_t header_length;
  uint32_t user_hdr_length;
  uint32_t message_offset;
  uint32_t magic;
  uint32_t action;
  uint32_t payload_runs;
  uint32_t payload_bytes;
  uint32_t first_payload_offset;
  uint32_t completion_bytes;
  uint32_t completion_dropped;
  uint32_t ct0_success;
  uint32_t ct1_success;
  uint32_t ct1_failure;
  uint32_t bad_handle_result;
  uint32_t user_hdr_present;
} report_t;

static int header(const ptl_header_t* h, void* state) {
  report_t* r = (report_t*)state;
  r->header_runs += 1;
  r->header_length = h->length;
  r->user_hdr_length = h->user_hdr_length;
  r->message_offset = (uint32_t)h->offset;
  r->user_hdr_present = h->user_hdr != NULL;
  r->first_payload_offset = 0xFFFFFFFFu;
  if (h->user_hdr_length < sizeof(user_hdr_t)) return PTL_PROCESS_DATA; /* a short message */
  const user_hdr_t* u = (const user_hdr_t*)h->user_hdr;
  r->magic = u->magic;
  r->action = u->action;
  PtlHandlerDMAToHostB(u, h->region, h->offset, sizeof *u);
  const ptl_ct_event_t one = {1, 0};
  PtlHandlerCTInc(0, one);
  r->bad_handle_result = (uint32_t)PtlHandlerCTInc(NAA_SPIN_MAX_CTS, one);
  switch (u->action) {
    case kDrop:
      return PTL_DROP;
    case kProceed:
      return PTL_PROCEED;
    case kProcessPending:
      return PTL_PROCESS_DATA_PENDING;
    case kSetCounter: {
      const ptl_ct_event_t set = {u->value, 7};
      PtlHandlerCTSet(1, set);
      return PTL_PROCESS_DATA;
    }
    default:
      return PTL_PROCESS_DATA;
  }
}

enum { kChunk = 512 };

static int payload(const ptl_payload_t* p, void* state) {
  report_t* r = (report_t*)state;
  if (r->action == kPayloadProceed) return PTL_PROCEED;
  const uint8_t key = (uint8_t)NAA_SPIN_ENV->arg;
  uint8_t out[kChunk];
  for (uint32_t done = 0; done < p->length; done += kChunk) {
    const uint32_t n = p->length - done < kChunk ? p->length - done : kChunk;
    for (uint32_t i = 0; i < n; ++i)
      out[i] = p->base[done + i] ^ key;
    PtlHandlerDMAToHostB(out, p->region, p->offset + done, n);
  }
  PtlHandlerFAdd(&r->payload_runs, 1);
  PtlHandlerFAdd(&r->payload_bytes, p->length);
  for (;;) { /* the lowest offset any payload handler saw */
    const uint32_t seen = r->first_payload_offset;
    if ((uint32_t)p->offset >= seen ||
        PtlHandlerCAS(&r->first_payload_offset, seen, (uint32_t)p->offset))
      break;
  }
  const ptl_ct_event_t bytes = {p->length, 0};
  PtlHandlerCTInc(1, bytes);
  return PTL_SUCCESS;
}

static int completion(const ptl_completion_t* c, void* state) {
  report_t r = *(const report_t*)state;
  r.completion_bytes = (uint32_t)c->bytes;
  r.completion_dropped = (uint32_t)c->dropped_bytes;
  ptl_ct_event_t ct;
  PtlHandlerCTGet(0, &ct);
  r.ct0_success = (uint32_t)ct.success;
  PtlHandlerCTGet(1, &ct);
  r.ct1_success = (uint32_t)ct.success;
  r.ct1_failure = (uint32_t)ct.failure;
  const int out = naa_spin_find_region(NAA_SPIN_REGION_OUTPUT,
                                       NAA_SPIN_REGION_STREAM | NAA_SPIN_REGION_INTERNAL, 0);
  if (out < 0) return PTL_FAIL;
  for (uint32_t nth = 0;; ++nth) { /* every streamed INOUT region back to the host */
    const int stream = naa_spin_find_region(NAA_SPIN_REGION_STREAM | NAA_SPIN_REGION_OUTPUT,
                                            NAA_SPIN_REGION_INTERNAL, nth);
    if (stream < 0) break;
    PtlHandlerPutFromHost((uint32_t)stream, NAA_SPIN_ENV->regions[stream].size);
  }
  PtlHandlerDMAToHostB(&r, (uint32_t)out, 0, sizeof r);
  PtlHandlerPutFromHost((uint32_t)out, sizeof r);
  return PTL_SUCCESS;
}

NAA_SPIN_HANDLERS_USER_HDR(HEADER_CHECK_FN, sizeof(report_t), user_hdr_t, header, payload,
                           completion);
