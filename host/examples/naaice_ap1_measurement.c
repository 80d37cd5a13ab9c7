/* A C11 measurement program against the NAAICE low-level API (naaice.h), in the style of the
 * NAAICE tests (naaice_client_low_level_measurement.c): one region of the given size, sent and
 * written back by add1 (function code 1), the setup (registration + MRSP) and transfer times
 * appended to a CSV log as "size,setup_s,transfer_s". Unlike the reference it also checks every
 * result byte, so a fast wrong answer is not a measurement.
 *
 *   naaice-ap1-measurement local-ip remote-ip region-size logfile [calls]
 *
 * Exit status: 0 verified and logged, 1 wrong results, 2 an API call failed, 3 bad arguments. */
#include <naaice.h>
#include <sys/time.h>
#include <ulog.h>

#define FNCODE 1 /* add1 */

typedef struct options {
  const char* local_ip;
  const char* remote_ip;
  size_t size;
  const char* logfile;
  int calls;
} options;

static double timestamp(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + (double)tv.tv_usec / 1.0e6;
}

static int run(const options* o) {
  char* data = malloc(o->size > 0 ? o->size : 1);
  if (data == NULL) return 2;
  for (size_t j = 0; j < o->size; j++)
    data[j] = (char)(j * 13U);
  char* params[1] = {data};
  size_t sizes[1] = {o->size};
  struct naaice_communication_context* comm_ctx = NULL;
  if (naaice_init_communication_context(&comm_ctx, 0, sizes, params, 1, 0, NULL, FNCODE,
                                        o->local_ip, o->remote_ip, SERVER_CONNECTION_PORT) ||
      naaice_setup_connection(comm_ctx) || naaice_set_input_mr(comm_ctx, 0) ||
      naaice_set_output_mr(comm_ctx, 0)) {
    return 2;
  }
  const double pre_setup = timestamp();
  if (naaice_register_mrs(comm_ctx) || naaice_do_mrsp(comm_ctx)) return 2;
  const double start = timestamp();
  int status = 0;
  for (int c = 0; c < o->calls; c++) {
    if (naaice_do_data_transfer(comm_ctx)) return 2;
    if (comm_ctx->naa_returncode != 0 || comm_ctx->bytes_received != o->size) status = 1;
  }
  const double end = timestamp();
  if (naaice_disconnect_and_cleanup(comm_ctx)) return 2;
  free(comm_ctx);
  for (size_t j = 0; j < o->size; j++) {
    if ((unsigned char)data[j] != (unsigned char)(j * 13U + (unsigned int)o->calls)) {
      printf("byte %zu wrong\n", j);
      status = 1;
      break;
    }
  }
  free(data);
  if (status != 0) return status;
  FILE* log = fopen(o->logfile, "a");
  if (log == NULL) {
    ulog_error("cannot open %s", o->logfile);
    return 2;
  }
  fprintf(log, "%zu,%f,%f\n", o->size, start - pre_setup, (end - start) / o->calls);
  fclose(log);
  printf("results verified\n");
  return 0;
}

int main(int argc, char* argv[]) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr,
            "usage: naaice-ap1-measurement local-ip remote-ip region-size logfile [calls]\n");
    return 3;
  }
  options o = {argv[1], argv[2], 0, argv[4], 1};
  char* end = NULL;
  long long size = strtoll(argv[3], &end, 10);
  if (*end != '\0' || size < 1 || size > (1LL << 31)) {
    fprintf(stderr, "naaice-ap1-measurement: region-size must be 1..2147483648\n");
    return 3;
  }
  o.size = (size_t)size;
  if (argc == 6) {
    long c = strtol(argv[5], &end, 10);
    if (*end != '\0' || c < 1 || c > 100000) {
      fprintf(stderr, "naaice-ap1-measurement: calls must be 1..100000\n");
      return 3;
    }
    o.calls = (int)c;
  }
  return run(&o);
}
