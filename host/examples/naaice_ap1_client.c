/* A C11 program written against the NAAICE low-level API (naaice.h, "AP1") in the style of the
 * NAAICE examples (naaice_client.c): it offloads add1 (function code 1: the NAA adds 1 to every
 * byte of every region) and checks every result byte.
 *
 *   naaice-ap1-client [local-ip] remote-ip number-of-regions 'region-sizes' [calls]
 *   e.g. naaice-ap1-client 127.0.0.3 127.0.0.2 3 '1024 70000 4096' 3
 *
 * Every region is an input, the last one is also the output, the first one is single-send when
 * there are several (written by the first call only), and the first call sends only 2 bytes of
 * region 0 (naaice_set_bytes_to_send). Odd calls block (naaice_do_data_transfer), even calls poll
 * (naaice_init_data_transfer + naaice_poll_cq_nonblocking). After N calls every byte of the last
 * region has grown by N, the others are unchanged on the host. Exit status: 0 verified, 1 wrong
 * results, 2 an API call failed, 3 bad arguments. */
#include <naaice.h>
#include <stdint.h>
#include <stdlib.h>
#include <ulog.h>

#define FNCODE 1 /* add1 */

typedef struct options {
  const char* local_ip;
  const char* remote_ip;
  unsigned int regions;
  size_t sizes[MAX_MRS];
  int calls;
} options;

static unsigned char pattern(unsigned int region, size_t j) {
  return (unsigned char)(10U + region + (unsigned int)(j % 251U) * 7U);
}

static int run(const options* o) {
  char* params[MAX_MRS];
  for (unsigned int i = 0; i < o->regions; i++) {
    params[i] = malloc(o->sizes[i] > 0 ? o->sizes[i] : 1);
    if (params[i] == NULL) return 2;
    for (size_t j = 0; j < o->sizes[i]; j++)
      params[i][j] = (char)pattern(i, j);
  }
  size_t sizes[MAX_MRS];
  memcpy(sizes, o->sizes, sizeof sizes);

  ulog_info("-- Initializing Communication Context --");
  struct naaice_communication_context* comm_ctx = NULL;
  if (naaice_init_communication_context(&comm_ctx, 0, sizes, params, o->regions, 0, NULL, FNCODE,
                                        o->local_ip, o->remote_ip, SERVER_CONNECTION_PORT)) {
    return 2;
  }
  ulog_info("-- Setting Up Connection --");
  if (naaice_setup_connection(comm_ctx)) return 2;
  for (unsigned int i = 0; i < o->regions; i++) {
    if (naaice_set_input_mr(comm_ctx, i)) return 2;
  }
  if (naaice_set_output_mr(comm_ctx, o->regions - 1)) return 2;
  if (o->regions > 1 && naaice_set_singlesend_mr(comm_ctx, 0)) return 2;
  uint8_t imm_bytes[3] = {0, 0, 0};
  if (naaice_set_immediate(comm_ctx, imm_bytes)) return 2;
  ulog_info("-- Registering Memory Regions --");
  if (naaice_register_mrs(comm_ctx)) return 2;
  if (o->regions > 1 && o->sizes[0] >= 2 && naaice_set_bytes_to_send(comm_ctx, 0, 2)) return 2;
  ulog_info("-- Doing MRSP --");
  if (naaice_do_mrsp(comm_ctx)) return 2;
  if (comm_ctx->state != NAAICE_MRSP_DONE) return 2;
  for (unsigned int i = 0; i < o->regions; i++) {
    printf("region %u: NAA address 0x%" PRIx64 " size %zu\n", i, comm_ctx->mr_peer_data[i].addr,
           comm_ctx->mr_peer_data[i].size);
  }

  int status = 0;
  for (int c = 0; c < o->calls; c++) {
    ulog_info("-- RPC Invocation #%d --", c + 1);
    if (c % 2 == 0) {
      if (naaice_do_data_transfer(comm_ctx)) return 2;
    } else {
      if (naaice_init_data_transfer(comm_ctx)) return 2;
      while (comm_ctx->state < NAAICE_FINISHED) {
        if (naaice_poll_cq_nonblocking(comm_ctx)) return 2;
      }
    }
    if (naaice_set_bytes_to_send(comm_ctx, 0, -1)) return 2;
    printf("call %d: state %d return code %u bytes received %" PRIu32 "\n", c + 1,
           (int)comm_ctx->state, (unsigned)comm_ctx->naa_returncode, comm_ctx->bytes_received);
    if (comm_ctx->state != NAAICE_FINISHED || comm_ctx->naa_returncode != 0 ||
        comm_ctx->bytes_received != o->sizes[o->regions - 1]) {
      status = 1;
    }
  }
  printf("rpc calls: %u\n", comm_ctx->no_rpc_calls);
  ulog_info("-- Cleaning Up --");
  if (naaice_disconnect_and_cleanup(comm_ctx)) return 2;
  free(comm_ctx); /* the context stays allocated after cleanup, as in the NAAICE library */

  for (unsigned int i = 0; i < o->regions; i++) {
    const unsigned int grow = i + 1 == o->regions ? (unsigned int)o->calls : 0U;
    for (size_t j = 0; j < o->sizes[i]; j++) {
      const unsigned char want = (unsigned char)(pattern(i, j) + grow);
      if ((unsigned char)params[i][j] != want) {
        printf("region %u byte %zu: %u, expected %u\n", i, j, (unsigned char)params[i][j], want);
        status = 1;
        break;
      }
    }
    free(params[i]);
  }
  printf(status == 0 ? "results verified\n" : "WRONG RESULTS\n");
  return status;
}

static int usage(void) {
  fprintf(stderr,
          "usage: naaice-ap1-client [local-ip] remote-ip number-of-regions 'region-sizes' "
          "[calls]\n");
  return 3;
}

int main(int argc, char* argv[]) {
#ifndef ULOG_BUILD_DISABLED
  ulog_output_level_set_all(LOG_LEVEL);
#endif
  options o = {NULL, NULL, 0, {0}, 1};
  /* The local address is optional: the regions argument is the first all-digit one. */
  int a = 1;
  if (argc < 4 || argc > 6) return usage();
  if (argc == 6 || (argc == 5 && strchr(argv[2], '.') != NULL)) o.local_ip = argv[a++];
  o.remote_ip = argv[a++];
  char* end = NULL;
  long n = strtol(argv[a++], &end, 10);
  if (*end != '\0' || n < 1 || n > MAX_MRS) return usage();
  o.regions = (unsigned int)n;
  char* sizes = argv[a++];
  for (unsigned int i = 0; i < o.regions; i++) {
    char* tok = strtok(i == 0 ? sizes : NULL, " ,");
    if (tok == NULL) return usage();
    long long s = strtoll(tok, &end, 10);
    if (*end != '\0' || s < 0) return usage();
    o.sizes[i] = (size_t)s;
  }
  if (strtok(NULL, " ,") != NULL) return usage();
  if (a < argc) {
    long c = strtol(argv[a], &end, 10);
    if (*end != '\0' || c < 1 || c > 1000) return usage();
    o.calls = (int)c;
  }
  return run(&o);
}
