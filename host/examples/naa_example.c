/* A C11 program written against the NAAICE middleware API (naaice_ap2.h), as an existing NAAICE
 * host program would be. It offloads add1 (function code 1: adds 1 to every byte of every region)
 * to the NAA named in NAA_SPEC, e.g.
 *
 *   NAA_SPEC=127.0.0.2:12345:1:2 ./naa-example-c [calls]
 *
 * with two input parameters a and b, and b also as output (the same address in both lists: one
 * region that is sent and written back). After N calls every byte of b has grown by N and a is
 * unchanged on the host (inputs are never written back). Exit status: 0 results verified, 1 wrong
 * results, 2 an API call failed. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "naaice_ap2.h"

#define FN_ADD1 1
#define A_SIZE 1000
#define B_SIZE 70000 /* larger than one path MTU: several packets each way */

int main(int argc, char* argv[]) {
  int calls = argc > 1 ? atoi(argv[1]) : 5;
  if (calls < 1) calls = 1;

  unsigned char* a = malloc(A_SIZE);
  unsigned char* b = malloc(B_SIZE);
  if (a == NULL || b == NULL) return 2;
  memset(a, 7, A_SIZE);
  for (size_t i = 0; i < B_SIZE; ++i)
    b[i] = (unsigned char)(i * 31U);

  naa_param_t inputs[] = {{a, A_SIZE, false}, {b, B_SIZE, false}};
  naa_param_t outputs[] = {{b, B_SIZE, false}};
  naa_handle handle;
  if (naa_create(FN_ADD1, inputs, 2, outputs, 1, &handle) != 0) {
    fprintf(stderr, "naa_create failed: %s\n", naa_last_error(NULL));
    return 2;
  }

  for (int c = 0; c < calls; ++c) {
    if (naa_invoke(&handle) != 0) {
      fprintf(stderr, "naa_invoke failed: %s\n", naa_last_error(&handle));
      return 2;
    }
    naa_status status;
    if (c == 0) {
      /* MPI_Test style for the first call, MPI_Wait style for the others. */
      bool done = false;
      while (!done) {
        if (naa_test(&handle, &done, &status) != 0) {
          fprintf(stderr, "naa_test failed: %s\n", naa_last_error(&handle));
          return 2;
        }
      }
    } else if (naa_wait(&handle, &status) != 0) {
      fprintf(stderr, "naa_wait failed: %s\n", naa_last_error(&handle));
      return 2;
    }
    if (status.state != NAAICE_FINISHED || status.naa_error != NAA_SUCCESS ||
        status.user_immediate != 0 || status.bytes_received != B_SIZE) {
      fprintf(stderr, "call %d: state %d, return code %u, %llu bytes received\n", c + 1,
              (int)status.state, (unsigned)status.user_immediate,
              (unsigned long long)status.bytes_received);
      return 1;
    }
  }
  if (naa_finalize(&handle) != 0) return 2;

  for (size_t i = 0; i < B_SIZE; ++i) {
    if (b[i] != (unsigned char)(i * 31U + (unsigned)calls)) {
      fprintf(stderr, "b[%zu] = %u, expected %u\n", i, b[i],
              (unsigned char)(i * 31U + (unsigned)calls));
      return 1;
    }
  }
  for (size_t i = 0; i < A_SIZE; ++i) {
    if (a[i] != 7) {
      fprintf(stderr, "a[%zu] = %u: an input was written back\n", i, a[i]);
      return 1;
    }
  }
  printf("naa-example-c: %d add1 calls, results verified\n", calls);
  free(a);
  free(b);
  return 0;
}
