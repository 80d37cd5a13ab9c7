/* A C11 program written against the NAAICE middleware API (naaice_ap2.h, "AP2") in the style of
 * the NAAICE examples (naaice_client_ap2.c, naaice_client_middleware_measurement.c): it offloads
 * add1 (function code 1) to the NAA named in NAA_SPEC (<address>:<port>:1:<number-of-regions>)
 * and checks every result byte.
 *
 *   NAA_SPEC=127.0.0.2:12345:1:3 naaice-ap2-client number-of-regions 'region-sizes' [calls]
 *
 * Every region is an input; the odd-numbered ones (1, 3, ...) and the last are also outputs. After
 * N calls every byte of an output has grown by N, the inputs-only are unchanged on the host.
 * Calls alternate between naa_wait and polling with naa_test. Exit status: 0 verified, 1 wrong
 * results, 2 an API call failed, 3 bad arguments. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <ulog.h>

#include "naaice_ap2.h"

#define FNCODE 1 /* add1 */

typedef struct options {
  unsigned int regions;
  size_t sizes[MAX_MRS];
  int calls;
} options;

static unsigned char pattern(unsigned int region, size_t j) {
  return (unsigned char)(3U + region * 5U + (unsigned int)(j % 253U));
}

static bool is_output(const options* o, unsigned int i) {
  return i % 2U == 1U || i + 1 == o->regions;
}

static int run(const options* o) {
  unsigned char* params[MAX_MRS];
  naa_param_t inputs[MAX_MRS];
  naa_param_t outputs[MAX_MRS];
  unsigned int n_out = 0;
  uint64_t out_bytes = 0;
  for (unsigned int i = 0; i < o->regions; i++) {
    params[i] = malloc(o->sizes[i] > 0 ? o->sizes[i] : 1);
    if (params[i] == NULL) return 2;
    for (size_t j = 0; j < o->sizes[i]; j++)
      params[i][j] = pattern(i, j);
    inputs[i] = (naa_param_t){params[i], o->sizes[i], false};
    if (is_output(o, i)) {
      outputs[n_out++] = (naa_param_t){params[i], o->sizes[i], false};
      out_bytes += o->sizes[i];
    }
  }
  naa_handle* handle = calloc(1, sizeof(naa_handle));
  if (handle == NULL) return 2;
  printf("-- Setting Up Connection --\n");
  if (naa_create(FNCODE, inputs, o->regions, outputs, n_out, handle)) {
    ulog_error("naa_create: %s", naa_last_error(NULL));
    return 2;
  }
  int status = 0;
  for (int c = 0; c < o->calls; c++) {
    printf("-- RPC Invocation #%d --\n", c + 1);
    if (naa_invoke(handle)) return 2;
    naa_status st;
    if (c % 2 == 0) {
      if (naa_wait(handle, &st)) return 2;
    } else {
      bool flag = false;
      while (!flag) {
        if (naa_test(handle, &flag, &st)) return 2;
      }
    }
    printf("Bytes received: %" PRIu64 ", RPC Return code: %d\n", st.bytes_received,
           (int)st.naa_error);
    if (st.state != NAAICE_FINISHED || st.naa_error != NAA_SUCCESS ||
        st.bytes_received != out_bytes) {
      status = 1;
    }
  }
  printf("-- Cleaning Up --\n");
  if (naa_finalize(handle)) return 2;
  free(handle);
  printf("-- Checking Results --\n");
  for (unsigned int i = 0; i < o->regions; i++) {
    const unsigned int grow = is_output(o, i) ? (unsigned int)o->calls : 0U;
    for (size_t j = 0; j < o->sizes[i]; j++) {
      const unsigned char want = (unsigned char)(pattern(i, j) + grow);
      if (params[i][j] != want) {
        printf("region %u byte %zu: %u, expected %u\n", i, j, params[i][j], want);
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
  fprintf(stderr, "usage: naaice-ap2-client number-of-regions 'region-sizes' [calls]\n");
  return 3;
}

int main(int argc, char* argv[]) {
  options o = {0, {0}, 1};
  if (argc < 3 || argc > 4) return usage();
  char* end = NULL;
  long n = strtol(argv[1], &end, 10);
  if (*end != '\0' || n < 1 || n > MAX_MRS) return usage();
  o.regions = (unsigned int)n;
  for (unsigned int i = 0; i < o.regions; i++) {
    char* tok = strtok(i == 0 ? argv[2] : NULL, " ,");
    if (tok == NULL) return usage();
    long long s = strtoll(tok, &end, 10);
    if (*end != '\0' || s < 0) return usage();
    o.sizes[i] = (size_t)s;
  }
  if (strtok(NULL, " ,") != NULL) return usage();
  if (argc == 4) {
    long c = strtol(argv[3], &end, 10);
    if (*end != '\0' || c < 1 || c > 1000) return usage();
    o.calls = (int)c;
  }
  return run(&o);
}
