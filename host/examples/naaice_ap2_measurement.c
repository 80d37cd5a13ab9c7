/* A C11 measurement program against the NAAICE middleware API (naaice_ap2.h), in the style of the
 * NAAICE tests (naaice_client_middleware_measurement.c): one inout region of the given size on
 * the NAA named in NAA_SPEC (<address>:<port>:1:1), add1 (function code 1), the average call time
 * appended to a CSV log as "size,call_s". It also checks every result byte.
 *
 *   NAA_SPEC=127.0.0.2:12345:1:1 naaice-ap2-measurement region-size logfile [calls]
 *
 * Exit status: 0 verified and logged, 1 wrong results, 2 an API call failed, 3 bad arguments. */
#include <sys/time.h>

#include "naaice_ap2.h"

#define FNCODE 1 /* add1 */

static double timestamp(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + (double)tv.tv_usec / 1.0e6;
}

static int run(size_t size, const char* logfile, int calls) {
  unsigned char* data = malloc(size);
  if (data == NULL) return 2;
  for (size_t j = 0; j < size; j++)
    data[j] = (unsigned char)(j * 29U);
  naa_param_t params[1] = {{data, size, false}};
  naa_handle handle;
  if (naa_create(FNCODE, params, 1, params, 1, &handle)) return 2;
  int status = 0;
  const double start = timestamp();
  for (int c = 0; c < calls; c++) {
    naa_status st;
    if (naa_invoke(&handle) || naa_wait(&handle, &st)) return 2;
    if (st.naa_error != NAA_SUCCESS || st.bytes_received != size) status = 1;
  }
  const double end = timestamp();
  if (naa_finalize(&handle)) return 2;
  for (size_t j = 0; j < size; j++) {
    if (data[j] != (unsigned char)(j * 29U + (unsigned int)calls)) {
      printf("byte %zu wrong\n", j);
      status = 1;
      break;
    }
  }
  free(data);
  if (status != 0) return status;
  FILE* log = fopen(logfile, "a");
  if (log == NULL) return 2;
  fprintf(log, "%zu,%f\n", size, (end - start) / calls);
  fclose(log);
  printf("results verified\n");
  return 0;
}

int main(int argc, char* argv[]) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: naaice-ap2-measurement region-size logfile [calls]\n");
    return 3;
  }
  char* end = NULL;
  long long size = strtoll(argv[1], &end, 10);
  if (*end != '\0' || size < 1 || size > (1LL << 31)) {
    fprintf(stderr, "naaice-ap2-measurement: region-size must be 1..2147483648\n");
    return 3;
  }
  int calls = 1;
  if (argc == 4) {
    long c = strtol(argv[3], &end, 10);
    if (*end != '\0' || c < 1 || c > 100000) {
      fprintf(stderr, "naaice-ap2-measurement: calls must be 1..100000\n");
      return 3;
    }
    calls = (int)c;
  }
  return run((size_t)size, argv[2], calls);
}
