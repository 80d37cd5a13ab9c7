/* naa/spin.h: sPIN handlers in C for the NAA's HPU cores (seed 004, "sPIN: High-performance
 * streaming Processing in the Network", Appendix B; docs/spin.md). Compiled with clang for
 * riscv32 (rv32im, ilp32, freestanding) by naa_add_handler() (find_package(naa)), run cycle by
 * cycle on rtl/hpu by the NAA's HandlerEngine.
 *
 * A handler image declares its function code and its three handlers with NAA_SPIN_HANDLERS():
 *
 *   #include <naa/spin.h>
 *   static int payload(const ptl_payload_t *p, void *state) { ...; return PTL_SUCCESS; }
 *   NAA_SPIN_HANDLERS(9, 0, NULL, payload, NULL);
 *
 * Names follow sPIN where the concept maps; "host memory" is the NAA's memory (the regions of the
 * call, by their index in the MRSP region list).
 *
 * The HPU's address space (docs/spin.md "Memory map"): the image at 0x00010000 (code read-only and
 * executable, data per HPU); the handler state, shared by the connection's HPUs, at
 * NAA_SPIN_STATE; the packet (read-only) at NAA_SPIN_PACKET; the handler's arguments and the
 * environment (PTL_MY_HPU, PTL_NUM_HPUS, the descriptor's argument) read-only; a private stack;
 * the actions' registers at NAA_SPIN_MMIO. Any other access ends the handler with PTL_SEGV. */
#ifndef NAA_SPIN_H
#define NAA_SPIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI 2 added naa_spin_info_t.user_hdr_bytes; the loader still takes ABI 1 images (no user
 * header). */
#define NAA_SPIN_ABI 2u
#define NAA_SPIN_MAGIC 0x4E535049u /* "IPSN": an image's naa_spin_info starts with it */

/* The memory map (docs/spin.md). */
#define NAA_SPIN_IMAGE_BASE 0x00010000u
#define NAA_SPIN_STATE 0x20000000u
#define NAA_SPIN_PACKET 0x30000000u
#define NAA_SPIN_ARGS 0x31000000u
#define NAA_SPIN_STACK_TOP 0x70000000u
#define NAA_SPIN_MMIO 0xF0000000u

/* Handler return codes (Appendix B.3-B.5; docs/spin.md "Return codes").
 * Header handler: PROCESS_DATA runs the payload handlers of the message; DROP discards the
 * message (no payload handler runs; its bytes count in the completion's dropped_bytes); PROCEED
 * runs no further handler of the message and deposits it, user header included, as a plain RDMA
 * WRITE into the STREAM region's NAA memory. Payload handler: SUCCESS, or DROP (the packet's
 * bytes count as dropped). Any handler: FAIL (the call answers 0x7F), SEGV (0x7E).
 * The NAA answers every call, so a PENDING variant means the same as its plain one (there is no
 * matching entry that stays posted; docs/spin.md). PROCEED from a payload or completion handler
 * is not one of its codes (B.4, B.5): it fails the call. */
enum {
  PTL_SUCCESS = 0,
  PTL_PROCESS_DATA = 0,
  PTL_DROP = 1,
  PTL_FAIL = 2,
  PTL_SEGV = 3,
  PTL_PROCEED = 4,
  PTL_SUCCESS_PENDING = 0x100,
  PTL_PROCESS_DATA_PENDING = 0x100,
  PTL_DROP_PENDING = 0x101,
  PTL_PROCEED_PENDING = 0x104
};

/* The header handler's argument (B.3): the message's header packet, the first packet of one
 * RDMA WRITE into a STREAM region. The user header (3.2.1: "user-defined headers (the first
 * bytes of the payload)") is the first sizeof(user_header_t) bytes of the message, as the image
 * declares with NAA_SPIN_HANDLERS_USER_HDR; the payload handlers do not see them (3.2.2). */
typedef struct {
  uint32_t region;          /* the STREAM region, index in the MRSP region list */
  uint32_t length;          /* bytes of the header packet's payload, user header included */
  const void* user_hdr;     /* the user header bytes (read-only), NULL if none is declared */
  uint32_t user_hdr_length; /* bytes at user_hdr: the declared size, less if the message is */
  uint64_t offset;          /* of the header packet's first byte in the region */
} ptl_header_t;
/* On an IRN connection the header packet is the first of the message to arrive, which may be any
 * of them (docs/spin.md "Streaming on IRN"); a user header is refused there (0x7C). */

/* The payload handler's argument (B.4): one packet. */
typedef struct {
  const uint8_t* base; /* the packet's payload, in the packet buffer */
  uint32_t length;
  uint32_t region; /* the STREAM region it belongs to */
  uint64_t offset; /* of base[0] in the region */
} ptl_payload_t;

/* The completion handler's argument (B.5). */
typedef struct {
  uint64_t dropped_bytes;
  uint64_t bytes; /* payload bytes the payload handlers processed */
  uint32_t flow_control_triggered;
} ptl_completion_t;

/* The call's regions, in the order of the connection's MRSP region list (PROTOCOL.md 5.1): the
 * index actions take. flags are MRSP's (docs/protocol.md "Streaming regions"). */
#define NAA_SPIN_REGION_INTERNAL 0x01u
#define NAA_SPIN_REGION_INPUT 0x04u
#define NAA_SPIN_REGION_OUTPUT 0x08u
#define NAA_SPIN_REGION_STREAM 0x10u
#define NAA_SPIN_MAX_REGIONS 16u
typedef struct {
  uint32_t flags;
  uint32_t size;
} naa_spin_region_t;

/* What every handler may read: which HPU it runs on, how many there are, the argument of the
 * call's streaming descriptor (naa-call --stream-arg), the call's regions. */
typedef struct {
  uint32_t my_hpu;
  uint32_t num_hpus;
  uint64_t arg;
  uint32_t num_regions; /* at most NAA_SPIN_MAX_REGIONS are listed */
  uint32_t state_bytes; /* the size of the handler state (`state`, the descriptor's bytes) */
  naa_spin_region_t regions[NAA_SPIN_MAX_REGIONS];
} naa_spin_env_t;
#define NAA_SPIN_ENV ((const naa_spin_env_t*)(NAA_SPIN_ARGS + 0x100u))
#define PTL_MY_HPU (NAA_SPIN_ENV->my_hpu)
#define PTL_NUM_HPUS (NAA_SPIN_ENV->num_hpus)

/* The index of the nth (0-based) region that has every flag of `all` and none of `none`, or -1. */
static inline int naa_spin_find_region(uint32_t all, uint32_t none, uint32_t nth) {
  for (uint32_t i = 0; i < NAA_SPIN_ENV->num_regions; ++i) {
    const uint32_t f = NAA_SPIN_ENV->regions[i].flags;
    if ((f & all) == all && (f & none) == 0 && nth-- == 0) return (int)i;
  }
  return -1;
}

typedef int (*ptl_header_handler_t)(const ptl_header_t* h, void* state);
typedef int (*ptl_payload_handler_t)(const ptl_payload_t* p, void* state);
typedef int (*ptl_completion_handler_t)(const ptl_completion_t* c, void* state);

/* What the loader reads: the symbol naa_spin_info (docs/spin.md "Images"). */
typedef struct {
  uint32_t magic;              /* NAA_SPIN_MAGIC */
  uint32_t abi;                /* NAA_SPIN_ABI */
  uint32_t function;           /* the MRSP function code the handlers serve, 1..127 */
  uint32_t state_per_hpu;      /* HPU memory the handlers need per HPU (bytes) */
  ptl_header_handler_t header; /* may be NULL */
  ptl_payload_handler_t payload;
  ptl_completion_handler_t completion; /* may be NULL */
  uint32_t user_hdr_bytes; /* the user header's size (ABI 2), at most NAA_SPIN_MAX_USER_HDR */
} naa_spin_info_t;

/* B.2.1 max_user_hdr_size: a user header fits in the header packet of any RoCEv2 MTU. */
#define NAA_SPIN_MAX_USER_HDR 256u

#define NAA_SPIN_HANDLERS(fn, state_per_hpu, header, payload, completion) \
  __attribute__((used)) const naa_spin_info_t naa_spin_info = {           \
      NAA_SPIN_MAGIC, NAA_SPIN_ABI, (fn), (state_per_hpu), (header), (payload), (completion), 0}
/* The same with a user header of type user_header_t (3.2.1): the header handler reads it through
 * ptl_header_t.user_hdr, the payload handlers get the message without it. */
/* clang-format off */
#define NAA_SPIN_HANDLERS_USER_HDR(fn, state_per_hpu, user_header_t, header, payload, completion) \
  __attribute__((used)) const naa_spin_info_t naa_spin_info = {                                   \
      NAA_SPIN_MAGIC, NAA_SPIN_ABI, (fn), (state_per_hpu), (header), (payload), (completion),      \
      (uint32_t)sizeof(user_header_t)}
/* clang-format on */

/* ---- actions (B.6): memory-mapped registers, one action at a time per HPU ---- */
enum {
  NAA_SPIN_ACT_DMA_TO_HOST = 1,     /* args: local, region, offset lo, offset hi, len */
  NAA_SPIN_ACT_PUT_FROM_DEVICE = 2, /* args: local, region, offset lo, offset hi, len */
  NAA_SPIN_ACT_PUT_FROM_HOST = 3,   /* args: region, length lo, length hi */
  NAA_SPIN_ACT_CAS = 4,             /* args: address, cmpval, swapval; result: swapped */
  NAA_SPIN_ACT_FADD = 5,            /* args: address, inc; result: the old value */
  NAA_SPIN_ACT_DMA_FROM_HOST = 6,   /* args: local, region, offset lo, offset hi, len */
  NAA_SPIN_ACT_CT_INC = 7,          /* args: ct, success lo, hi, failure lo, hi; result 0/-1 */
  NAA_SPIN_ACT_CT_SET = 8,          /* args: ct, success lo, hi, failure lo, hi; result 0/-1 */
  NAA_SPIN_ACT_CT_GET = 9,          /* args: ct, local (16 bytes written); result 0/-1 */
  NAA_SPIN_ACT_PUT_FROM_DEVICE_PEER = 10, /* args: local, len, peer, offset lo, offset hi */
  NAA_SPIN_ACT_PUT_FROM_HOST_PEER = 11    /* args: region, length, peer, offset lo, offset hi */
};
typedef struct {
  uint32_t command; /* +0x00: writing it performs the action */
  uint32_t arg[6];  /* +0x04.. */
  uint32_t result;  /* +0x1C */
} naa_spin_mmio_t;
#define NAA_SPIN_REGS ((volatile naa_spin_mmio_t*)NAA_SPIN_MMIO)

/* The compiler barriers: an action reads and writes memory the compiler cannot see through the
 * registers (a DMA reads the caller's buffer, fetch-and-add writes the state), so every store
 * before it must have happened and nothing may be kept in registers across it. */
static inline uint32_t naa_spin_action(uint32_t command, uint32_t a0, uint32_t a1, uint32_t a2,
                                       uint32_t a3, uint32_t a4) {
  __asm__ volatile("" ::: "memory");
  NAA_SPIN_REGS->arg[0] = a0;
  NAA_SPIN_REGS->arg[1] = a1;
  NAA_SPIN_REGS->arg[2] = a2;
  NAA_SPIN_REGS->arg[3] = a3;
  NAA_SPIN_REGS->arg[4] = a4;
  NAA_SPIN_REGS->command = command;
  const uint32_t result = NAA_SPIN_REGS->result;
  __asm__ volatile("" ::: "memory");
  return result;
}

/* Copies len bytes of HPU memory to offset of region `region` of NAA memory (B.6
 * PtlHandlerDMAToHostB: a posted write; later actions see it). */
static inline void PtlHandlerDMAToHostB(const void* local, uint32_t region, uint64_t offset,
                                        uint32_t len) {
  naa_spin_action(NAA_SPIN_ACT_DMA_TO_HOST, (uint32_t)(uintptr_t)local, region, (uint32_t)offset,
                  (uint32_t)(offset >> 32), len);
}
/* Copies len bytes at offset of region `region` of NAA memory into HPU memory (B.6
 * PtlHandlerDMAFromHostB). It sees every earlier handler's DMA to memory, not the calling
 * handler's own (those are applied when it returns). */
static inline void PtlHandlerDMAFromHostB(void* local, uint32_t region, uint64_t offset,
                                          uint32_t len) {
  naa_spin_action(NAA_SPIN_ACT_DMA_FROM_HOST, (uint32_t)(uintptr_t)local, region, (uint32_t)offset,
                  (uint32_t)(offset >> 32), len);
}

/* The nonblocking variants (B.6) return a handle for PtlHandlerDMATest/Wait. This runtime's DMA
 * engine has finished when the call returns (the HPU waited for it), so every handle is
 * complete: the pair is here so that handlers written for sPIN's interface build unchanged. */
typedef uint32_t ptl_dma_h;
static inline ptl_dma_h PtlHandlerDMAToHostNB(const void* local, uint32_t region, uint64_t offset,
                                              uint32_t len) {
  PtlHandlerDMAToHostB(local, region, offset, len);
  return 1;
}
static inline ptl_dma_h PtlHandlerDMAFromHostNB(void* local, uint32_t region, uint64_t offset,
                                                uint32_t len) {
  PtlHandlerDMAFromHostB(local, region, offset, len);
  return 1;
}
static inline int PtlHandlerDMATest(ptl_dma_h handle) {
  return handle != 0;
}
static inline void PtlHandlerDMAWait(ptl_dma_h handle) {
  (void)handle;
}

/* A single-packet RDMA WRITE from HPU memory to the host address of OUTPUT region `region`
 * (+ offset), at most one MTU (B.6 PtlHandlerPutFromDevice). */
static inline void PtlHandlerPutFromDevice(const void* local, uint32_t len, uint32_t region,
                                           uint64_t offset) {
  naa_spin_action(NAA_SPIN_ACT_PUT_FROM_DEVICE, (uint32_t)(uintptr_t)local, region,
                  (uint32_t)offset, (uint32_t)(offset >> 32), len);
}
/* The first `length` bytes of OUTPUT region `region` from NAA memory to the host, through the
 * normal send queue (B.6 PtlHandlerPutFromHost); the completion handler's last one carries the
 * call's result. */
static inline void PtlHandlerPutFromHost(uint32_t region, uint64_t length) {
  naa_spin_action(NAA_SPIN_ACT_PUT_FROM_HOST, region, (uint32_t)length, (uint32_t)(length >> 32), 0,
                  0);
}
/* Compare-and-swap and fetch-and-add on HPU memory, atomic across HPUs (B.6). */
static inline int PtlHandlerCAS(volatile uint32_t* value, uint32_t cmpval, uint32_t swapval) {
  return (int)naa_spin_action(NAA_SPIN_ACT_CAS, (uint32_t)(uintptr_t)value, cmpval, swapval, 0, 0);
}
static inline uint32_t PtlHandlerFAdd(volatile uint32_t* val, uint32_t inc) {
  return naa_spin_action(NAA_SPIN_ACT_FADD, (uint32_t)(uintptr_t)val, inc, 0, 0, 0);
}
/* Counters (B.6: "Counters can be manipulated with the following calls ... All three of them
 * atomically read or modify a counter"), Portals 4's counting events (ptl_ct_event_t: success
 * and failure counts) with PtlCTInc/PtlCTSet/PtlCTGet's arguments. The NAA has
 * NAA_SPIN_MAX_CTS counters per connection: zero when the connection is set up, kept across its
 * calls (the handler state restarts with every call), changed at once (not undone if the
 * handler faults later). The host sees them through a handler that puts them (CTGet) or in
 * naa-sim's statistics. Each returns 0, or -1 for a handle outside 0..NAA_SPIN_MAX_CTS-1. */
#define NAA_SPIN_MAX_CTS 4u
typedef uint32_t ptl_handle_ct_t;
typedef struct {
  uint64_t success;
  uint64_t failure;
} ptl_ct_event_t;
static inline int PtlHandlerCTInc(ptl_handle_ct_t ct, ptl_ct_event_t increment) {
  return (int)naa_spin_action(NAA_SPIN_ACT_CT_INC, ct, (uint32_t)increment.success,
                              (uint32_t)(increment.success >> 32), (uint32_t)increment.failure,
                              (uint32_t)(increment.failure >> 32));
}
static inline int PtlHandlerCTSet(ptl_handle_ct_t ct, ptl_ct_event_t new_ct) {
  return (int)naa_spin_action(NAA_SPIN_ACT_CT_SET, ct, (uint32_t)new_ct.success,
                              (uint32_t)(new_ct.success >> 32), (uint32_t)new_ct.failure,
                              (uint32_t)(new_ct.failure >> 32));
}
static inline int PtlHandlerCTGet(ptl_handle_ct_t ct, ptl_ct_event_t* event) {
  return (int)naa_spin_action(NAA_SPIN_ACT_CT_GET, ct, (uint32_t)(uintptr_t)event, 0, 0, 0);
}

/* Puts to other nodes (B.6 puts name a target; docs/spin.md "Puts to other nodes"): `peer` is
 * the index 0..NAA_SPIN_MAX_PEERS-1 under which the host bound another NAA's connection to this
 * one (Session::bind_peer), `offset` is into that connection's region the host named. The put is
 * an RDMA WRITE on a QP from this NAA to the other; the other NAA's handlers of that connection
 * process it as any message, and once this call's completion handler ran, the message ends there
 * with a zero-length WRITE_WITH_IMM that runs its completion handler (answered to nobody).
 * A peer nobody bound, or bytes past the end of its region, end the handler with PTL_SEGV. */
#define NAA_SPIN_MAX_PEERS 8u
/* One packet from HPU memory, at most one MTU (like PtlHandlerPutFromDevice). */
static inline void PtlHandlerPutFromDevicePeer(const void* local, uint32_t len, uint32_t peer,
                                               uint64_t offset) {
  naa_spin_action(NAA_SPIN_ACT_PUT_FROM_DEVICE_PEER, (uint32_t)(uintptr_t)local, len, peer,
                  (uint32_t)offset, (uint32_t)(offset >> 32));
}
/* `length` bytes at `offset` of region `region` of NAA memory to the same offset of the peer's
 * region (a packet deposited at its offset is forwarded from there), after every earlier DMA to
 * memory landed. It reads NAA memory through the DMA engine, not HPU memory at the HPU's width:
 * cheaper than a put from the device for a packet already deposited. */
static inline void PtlHandlerPutFromHostPeer(uint32_t region, uint32_t length, uint32_t peer,
                                             uint64_t offset) {
  naa_spin_action(NAA_SPIN_ACT_PUT_FROM_HOST_PEER, region, length, peer, (uint32_t)offset,
                  (uint32_t)(offset >> 32));
}

/* The runtime may ignore it (B.6); this one does. */
static inline void PtlHandlerYield(void) {}

#ifdef __cplusplus
}
#endif

#endif /* NAA_SPIN_H */
