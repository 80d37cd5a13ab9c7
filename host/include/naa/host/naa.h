/* The NAAICE middleware ("AP2", MPI-like) C API, source-compatible with the NAAICE host library's
 * naaice_ap2.h (github.com/naaice-greenhpc/naa-communication-library, lib/naaice_ap2.h), on top of
 * naa::host::Session. Programs written against that header compile unchanged: include
 * "naaice_ap2.h" with -I<include>/naa/host/compat, or this header directly.
 *
 *   NAA_SPEC      <address>:<port>:<fn_code>:<param_count>[,...]  which NAA serves which function
 *                 code (as set by the resource manager); an empty port means 12345. param_count
 *                 must equal naa_create's input_amount.
 *   NAA_LOCAL_IP  local IPv4 of the endpoint (default: the first free 127.0.0.x, x >= 3, for an
 *                 NAA on loopback, else the address routed towards the NAA).
 * Extensions of this implementation (all optional):
 *   NAA_PROGRESS          "automatic" (default: a background thread) or "manual" (progress is made
 *                         inside naa_test/naa_wait)
 *   NAA_CONNECT_TIMEOUT_MS  connection + MRSP timeout (default 5000)
 *   NAA_CALL_TIMEOUT_MS   how long naa_wait waits for the NAA's reply (default 60000)
 *   NAA_DISCONNECT_TIMEOUT_MS  how long naa_finalize waits for the NAA's DREP (default 1000);
 *                         without one the handle is closed anyway (the reference NAA sends none)
 *   NAA_PCAP              write a pcap of the endpoint's traffic to this file
 *   NAA_PATH_MTU          256..4096 (default 4096)
 *   NAA_TRANSPORT         "udp" (default: the UdpRoce endpoint) or "verbs" (rdma-core: a RoCE
 *                         NIC or Soft-RoCE; NAA_PCAP does not apply, and bytes_received is the
 *                         length of the NAA's last write, as in the reference, because verbs
 *                         cannot see RDMA WRITEs into host memory; docs/real-nic.md)
 *
 * Differences from the reference implementation, on purpose:
 * - naa_status.bytes_received counts every byte the NAA wrote into the output regions during the
 *   call (the reference reports the length of the last write only);
 * - naa_status carries the return code under both names the reference versions used
 *   (naa_error and user_immediate: bits 8-31 of the NAA's immediate, PROTOCOL.md 5.2);
 * - every failure prints one line "naa: <function>: <what happened>" to stderr, and
 *   naa_last_error() returns it.
 * Requested NAA addresses: regions are placed one after another, 4 KiB aligned, continuing across
 * the handles of a process that use the same NAA (so two live handles never overlap).
 *
 * Thread safety: different handles may be used from different threads at once; one handle by one
 * thread at a time. */
#ifndef NAA_HOST_NAA_H
#define NAA_HOST_NAA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The reference's connection states (naaice.h); naa_status.state holds one of them. */
#include "naa/host/naaice_state.h"

/* Return codes of an NAA routine (PROTOCOL.md 5.2). 0x05-0x0F reserved, 0x10-0x7F kernel-specific.
 */
enum naa_error {
  NAA_SUCCESS = 0x00,
  SOCKET_UNAVAIL = 0x01,
  KERNEL_TIMEOUT = 0x02,
  NAA_UNKNOWN_FUNCTION = 0x03, /* extension: named here, reserved in the reference */
  NAA_INVALID_ARGUMENTS = 0x04 /* extension */
};

typedef uint32_t naa_function_code_t;

/* One input or output parameter. An output whose addr equals an input's is one region that is
 * both (sent to the NAA and written back). */
typedef struct naa_param_t {
  void* addr;
  size_t size;      /* bytes */
  bool single_send; /* input sent with the first call only */
} naa_param_t;

typedef struct naa_handle {
  naa_function_code_t function_code;
  struct naaice_communication_context* comm_ctx; /* opaque */
} naa_handle;

typedef struct naa_status {
  naaice_communication_state state;
  union {
    enum naa_error naa_error; /* the NAA's return code (reference naming, 2025-12) */
    uint32_t user_immediate;  /* the same value (reference naming, earlier) */
  };
  uint64_t bytes_received;
} naa_status;

/* Finds the NAA for function_code in NAA_SPEC, connects (IB CM), registers the parameters and runs
 * the memory region setup protocol. 0 on success, -1 on failure. */
int naa_create(const naa_function_code_t function_code, naa_param_t* input_params,
               unsigned int input_amount, naa_param_t* output_params, unsigned int output_amount,
               naa_handle* handle);

/* Extension (docs/protocol.md "Streaming regions"): naa_create, but input i streams when
 * stream_inputs[i] is true: the NAA's handlers for function_code process it packet by packet as it
 * arrives and results may come back before the last input packet was sent. stream_argument is
 * the handlers' 64-bit argument (unpack_strided: stride << 32 | blocksize; else 0). Routines on
 * the handle must use function_code. 0 on success, -1 on failure. */
int naa_create_streaming(const naa_function_code_t function_code, naa_param_t* input_params,
                         unsigned int input_amount, naa_param_t* output_params,
                         unsigned int output_amount, const bool* stream_inputs,
                         uint64_t stream_argument, naa_handle* handle);

/* Writes the inputs to the NAA and starts the routine (the last write carries the function code in
 * its immediate). Returns at once; 0 on success, -1 on failure. */
int naa_invoke(naa_handle* handle);

/* Non-blocking, like MPI_Test: *flag = true once the routine finished, and then *status holds its
 * return code and the bytes received. 0 on success, -1 if the call failed (transport error). */
int naa_test(naa_handle* handle, bool* flag, naa_status* status);

/* Blocking, like MPI_Wait: returns when the NAA has written its results back (or on error / after
 * NAA_CALL_TIMEOUT_MS). 0 on success, -1 on failure. */
int naa_wait(naa_handle* handle, naa_status* status);

/* Disconnects and frees the handle's resources. 0 on success, -1 on failure. */
int naa_finalize(naa_handle* handle);

/* Extension: the last failure on this handle (or, for NULL or a failed naa_create, on this thread)
 * as one line; "" if none. Valid until the next call on the handle / thread. */
const char* naa_last_error(const naa_handle* handle);

#ifdef __cplusplus
}
#endif

#endif /* NAA_HOST_NAA_H */
