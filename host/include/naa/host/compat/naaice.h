/* The NAAICE low-level C API ("AP1"), source-compatible with the NAAICE host library's naaice.h
 * (github.com/naaice-greenhpc/naa-communication-library, lib/naaice.h): the same functions, types,
 * enums and constants, implemented on naa::host::Session over either transport (host/src/ap1.cpp).
 * Programs written for that header include <naaice.h> and compile unchanged with
 * `cc prog.c $(pkg-config --cflags --libs naaice)`.
 *
 * Usage, as in the reference:
 *   1. naaice_init_communication_context
 *   2. naaice_setup_connection, naaice_set_input_mr / _output_mr / _singlesend_mr,
 *      naaice_set_internal_mrs (optional), naaice_register_mrs
 *   3. naaice_set_bytes_to_send, naaice_set_immediate (optional)
 *   4. naaice_do_mrsp            (or naaice_init_mrsp + poll while state < NAAICE_MRSP_DONE)
 *   5. naaice_do_data_transfer   (or naaice_init_data_transfer + naaice_poll_cq_nonblocking while
 *                                 state < NAAICE_FINISHED), any number of times
 *   6. naaice_disconnect_and_cleanup
 *
 * Environment (all optional):
 *   NAA_TRANSPORT             "udp" (default: the UdpRoce endpoint) or "verbs" (rdma-core)
 *   NAA_LOCAL_IP              local IPv4 when the program passes no local address
 *   NAA_CONNECT_TIMEOUT_MS    connection + MRSP timeout (default 5000)
 *   NAA_DISCONNECT_TIMEOUT_MS how long to wait for the NAA's DREP (default 1000)
 *   NAA_PCAP, NAA_PATH_MTU, NAA_PROGRESS   as for naa.h
 *
 * Differences from the reference (docs/host/README.md "AP1" lists them with the reasons):
 * - the IB CM connection is made by naaice_init_mrsp / naaice_do_mrsp together with MRSP;
 *   naaice_setup_connection opens the local endpoint and checks the addresses;
 * - MAX_MRS (32) regions work; the reference's MRSP buffer holds 31;
 * - every MRSP and immediate field is big-endian on the wire on any host (PROTOCOL.md 5), and the
 *   three naaice_set_immediate bytes are user bits 0-7, 8-15, 16-23 on any host;
 * - a region larger than 2 GiB is refused by naaice_init_communication_context;
 * - the librdmacm / ibverbs members (id, ev_channel, ibv_ctx, pd, comp_channel, cq, qp,
 *   naaice_mr_local.ibv) are NULL: this library drives the connection itself; the functions that
 *   take an rdma_cm_event or ibv_wc exist for source compatibility only;
 * - naa_returncode keeps the low 8 bits of the 24-bit return code (naaice_ap1_return_code has all);
 * - every failure prints one line "naa: <function>: <what happened>" to stderr. */
#ifndef NAAICE_H
#define NAAICE_H

#ifdef __cplusplus
#include <atomic>
#define ATOMIC_TYPE(T) std::atomic<T>
#else
#include <stdatomic.h>
#define ATOMIC_TYPE(T) _Atomic(T)
#endif

/* The reference's header brings these in; its programs rely on them. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <ulog.h>
#include <unistd.h>

#include "naa/host/naaice_state.h"

/* Constants ------------------------------------------------------------------------------------ */
#define SERVER_CONNECTION_PORT 12345
#define RX_DEPTH 1025
#define ntohll be64toh
#define htonll htobe64
#define TIMEOUT_RESOLVE_ROUTE 500 /* ms */
#define POLLING_TIMEOUT 500       /* ms */
#define DEFAULT_TIMEOUT 3600      /* s: blocking calls to the NAA */
#define DEFAULT_RETRY_COUNT 7
/* Maximum number of memory regions: parameters plus internal NAA regions. */
#define MAX_MRS 32
/* The NAA's return code sits above the function code in its reply immediate (PROTOCOL.md 5.2). */
#define IMMEDIATE_OFFSET 8
#define MR_SIZE_MRSP sizeof(struct naaice_mr_advertisement_request) * MAX_MRS

/* Structs and enums (MRSP message layouts, PROTOCOL.md 5.1) ------------------------------------ */
enum message_id {
  MSG_MR_ERR = 0x00, /* error */
  MSG_MR_AAR = 0x01, /* advertisement and request (host) */
  MSG_MR_A = 0x02,   /* advertisement (NAA) */
  MSG_MR_R = 0x03    /* reserved */
};

struct naaice_mr_advertisement {
  uint64_t addr;
  uint32_t rkey;
  uint32_t size;
};

struct naaice_mr_advertisement_request {
  union {
    uint64_t mr_info; /* flags (byte 0 on the wire) and requested NAA address */
    uint8_t mr_info_bytearray[8];
  };
  uint64_t addr;
  uint32_t rkey;
  uint32_t size;
};

enum naaice_mrflags_value {
  MRFLAG_INTERNAL = 0x01,   /* NAA-internal, never transferred */
  MRFLAG_SINGLESEND = 0x02, /* written by the first call only */
  MRFLAG_INPUT = 0x04,
  MRFLAG_OUTPUT = 0x08
};

struct naaice_mr_request {
  uint64_t size;
};

struct naaice_mr_error {
  uint8_t code;
  uint8_t padding[2];
};

struct naaice_mr_hdr {
  uint8_t type;
};

struct naaice_mr_dynamic_hdr {
  uint8_t count;
  uint8_t padding[2];
};

/* A region on the NAA (after MRSP: where the NAA placed it). */
struct naaice_mr_peer {
  union {
    uint64_t addr;
    uint8_t fpgaaddr[8];
  };
  uint32_t rkey;
  size_t size;
  bool to_write; /* output: written back by the NAA */
  bool single_send;
};

struct ibv_mr;
struct ibv_wc;
struct rdma_cm_id;
struct rdma_cm_event;
struct rdma_event_channel;
struct ibv_context;
struct ibv_pd;
struct ibv_comp_channel;
struct ibv_cq;
struct ibv_qp;

/* A host region. size is the number of bytes the next calls write (naaice_set_bytes_to_send). */
struct naaice_mr_local {
  struct ibv_mr* ibv; /* NULL here (see above) */
  char* addr;
  size_t size;
  bool to_write; /* input: written to the NAA */
  bool single_send;
};

struct naaice_mr_internal {
  union {
    uint64_t addr;
    uint8_t fpgaaddr[8];
  };
  size_t size;
};

struct naaice_rpc_metadata {
  uintptr_t return_addr;
};

struct naa_ap1_state; /* this library's state behind a context */

struct naaice_communication_context {
  /* librdmacm / ibverbs objects of the reference: NULL here. */
  struct rdma_cm_id* id;
  struct rdma_event_channel* ev_channel;
  struct ibv_context* ibv_ctx;
  struct ibv_pd* pd;
  struct ibv_comp_channel* comp_channel;
  struct ibv_cq* cq;
  struct ibv_qp* qp;
  double timeout; /* seconds, for the blocking calls (DEFAULT_TIMEOUT); 0: none */
  uint8_t retry_count;
  uint16_t max_inline_data;
  ATOMIC_TYPE(naaice_communication_state) state;
  struct naaice_mr_local* mr_local_data;
  uint8_t no_local_mrs;
  uint8_t mr_return_idx;
  struct naaice_mr_peer* mr_peer_data;
  uint8_t no_peer_mrs;
  struct naaice_mr_local* mr_local_message;
  struct naaice_mr_internal* mr_internal;
  uint8_t no_internal_mrs;
  uint8_t fncode;
  uint8_t naa_returncode; /* the NAA's return code of the last call (low 8 bits) */
  uint8_t rdma_writes_done;
  uint32_t bytes_received; /* bytes the NAA wrote back in the last call */
  uint8_t no_input_mrs;
  uint8_t no_output_mrs;
  unsigned int no_rpc_calls;
  union {
    uint32_t immediate;
    uint8_t immediate_bytearr[4];
  };
  uint8_t connection_id;
  struct naa_ap1_state* naa_state; /* extension: this library's state */
};

#ifdef __cplusplus
extern "C" {
#endif

int naaice_init_communication_context(struct naaice_communication_context** comm_ctx,
                                      uint64_t addr_offset, size_t* param_sizes, char** params,
                                      unsigned int params_amount, unsigned int internal_mr_amount,
                                      size_t* internal_mr_sizes, uint8_t fncode,
                                      const char* local_address, const char* remote_address,
                                      uint16_t remote_cm_port);
int naaice_poll_connection_event(struct naaice_communication_context* comm_ctx,
                                 struct rdma_cm_event* ev, struct rdma_cm_event* ev_cp);
int naaice_handle_addr_resolved(struct naaice_communication_context* comm_ctx,
                                struct rdma_cm_event* ev);
int naaice_handle_route_resolved(struct naaice_communication_context* comm_ctx,
                                 struct rdma_cm_event* ev);
int naaice_handle_connection_established(struct naaice_communication_context* comm_ctx,
                                         struct rdma_cm_event* ev);
int naaice_handle_error(struct naaice_communication_context* comm_ctx, struct rdma_cm_event* ev);
int naaice_handle_other(struct naaice_communication_context* comm_ctx, struct rdma_cm_event* ev);
int naaice_poll_and_handle_connection_event(struct naaice_communication_context* comm_ctx);
int naaice_setup_connection(struct naaice_communication_context* comm_ctx);
int naaice_register_mrs(struct naaice_communication_context* comm_ctx);
int naaice_set_parameter_mrs(struct naaice_communication_context* comm_ctx,
                             unsigned int n_parameter_mrs, uint64_t* local_addrs,
                             uint64_t* remote_addrs, size_t* sizes);
int naaice_set_input_mr(struct naaice_communication_context* comm_ctx, unsigned int input_mr_idx);
int naaice_set_output_mr(struct naaice_communication_context* comm_ctx, unsigned int output_mr_idx);
int naaice_set_singlesend_mr(struct naaice_communication_context* comm_ctx,
                             unsigned int singlesend_mr_idx);
int naaice_set_internal_mrs(struct naaice_communication_context* comm_ctx,
                            unsigned int n_internal_mrs, uint64_t* addrs, size_t* sizes);
int naaice_set_immediate(struct naaice_communication_context* comm_ctx, uint8_t* imm_bytes);
int naaice_init_mrsp(struct naaice_communication_context* comm_ctx);
int naaice_init_data_transfer(struct naaice_communication_context* comm_ctx);
int naaice_handle_work_completion(struct ibv_wc* wc, struct naaice_communication_context* comm_ctx);
int naaice_poll_cq_nonblocking(struct naaice_communication_context* comm_ctx);
int naaice_poll_cq_blocking(struct naaice_communication_context* comm_ctx);
int naaice_poll_cq_busy(struct naaice_communication_context* comm_ctx);
int naaice_disconnect_and_cleanup(struct naaice_communication_context* comm_ctx);
int naaice_send_message(struct naaice_communication_context* comm_ctx, enum message_id message_type,
                        uint8_t errorcode);
int naaice_write_data(struct naaice_communication_context* comm_ctx, uint8_t fncode);
int naaice_post_recv_mrsp(struct naaice_communication_context* comm_ctx);
int naaice_post_recv_data(struct naaice_communication_context* comm_ctx);
int naaice_init_rdma_resources(struct naaice_communication_context* comm_ctx);
int naaice_do_mrsp(struct naaice_communication_context* comm_ctx);
int naaice_do_data_transfer(struct naaice_communication_context* comm_ctx);
int naaice_set_bytes_to_send(struct naaice_communication_context* comm_ctx, int mr_idx,
                             int number_bytes);

/* Extensions: the last call's full 24-bit return code, and the context's last failure as one
 * line ("" if none; valid until the next call on the context). */
uint32_t naaice_ap1_return_code(const struct naaice_communication_context* comm_ctx);
const char* naaice_ap1_last_error(const struct naaice_communication_context* comm_ctx);

/* Extension (docs/protocol.md "Streaming regions" and "Handler images"), before
 * naaice_init_mrsp: the input regions stream to the NAA's sPIN handlers of the context's function
 * code, with their 64-bit argument stream_argument. If image is not NULL, the connection brings
 * its own handlers: image_size bytes of a handler image (the ELF naa_add_handler builds), and
 * state_size bytes of state (may be NULL/0) every call's handler state starts as. The image and
 * state are copied. naaice_init_mrsp then fails (context NAAICE_ERROR, the MRSP error code in
 * naaice_ap1_last_error) if the NAA refuses the image. 0 or -1. */
int naaice_ap1_set_handler(struct naaice_communication_context* comm_ctx, const void* image,
                           size_t image_size, const void* state, size_t state_size,
                           uint64_t stream_argument);

#ifdef __cplusplus
}
#endif

#endif /* NAAICE_H */
