/* A C consumer of the installed NAAICE-compatible APIs, built with nothing but
 *   cc naaice_main.c $(pkg-config --cflags --libs naaice)
 * It includes the headers the way NAAICE programs do (<naaice.h>, "naaice_ap2.h", <ulog.h>).
 * Without arguments it checks the constants and a refused call (no NAA needed); with
 * `<local-ip> <naa-ip>` it also makes one AP1 call (add1) and checks every result byte.
 * Prints "naaice consumer OK" on success. */
#include <naaice.h>
#include <ulog.h>

#include "naaice_ap2.h"

static int call_naa(const char* local_ip, const char* naa_ip) {
  enum { kSize = 5000 };
  static char data[kSize];
  for (int i = 0; i < kSize; i++)
    data[i] = (char)(i % 200);
  char* params[] = {data};
  size_t sizes[] = {kSize};
  struct naaice_communication_context* ctx = NULL;
  if (naaice_init_communication_context(&ctx, 0, sizes, params, 1, 0, NULL, 1, local_ip, naa_ip,
                                        SERVER_CONNECTION_PORT)) {
    return 1;
  }
  ctx->timeout = 30; /* seconds: a test must not wait the default hour */
  if (naaice_setup_connection(ctx) || naaice_set_input_mr(ctx, 0) || naaice_set_output_mr(ctx, 0) ||
      naaice_register_mrs(ctx) || naaice_do_mrsp(ctx) || naaice_do_data_transfer(ctx)) {
    return 1;
  }
  const int ok =
      ctx->state == NAAICE_FINISHED && ctx->naa_returncode == 0 && ctx->bytes_received == kSize;
  if (naaice_disconnect_and_cleanup(ctx)) return 1;
  free(ctx);
  for (int i = 0; i < kSize; i++) {
    if ((unsigned char)data[i] != (unsigned char)(i % 200 + 1)) return 1;
  }
  return ok ? 0 : 1;
}

int main(int argc, char* argv[]) {
  ulog_output_level_set_all(ULOG_LEVEL_WARN);
  if (MAX_MRS != 32 || SERVER_CONNECTION_PORT != 12345 || NAAICE_FINISHED != 30) return 1;
  naa_param_t p = {NULL, 0, false};
  if (naa_create(1, &p, 1, NULL, 0, NULL) != -1) return 1; /* no handle: refused */
  if (naa_last_error(NULL)[0] == '\0') return 1;
  if (argc == 3 && call_naa(argv[1], argv[2]) != 0) return 1;
  printf("naaice consumer OK\n");
  return 0;
}
