/* An MPI job over whatever transport mpirun selects (testbench/ofi/mpi_ofi.sh runs it over
 * libfabric's naa;ofi_rxm, issue 29): ping-pong from rank 0 with every other rank at sizes 1 B to
 * 1 MiB, an allreduce, and one-sided MPI_Put / MPI_Get between neighbours in fence epochs. Every
 * received byte and every result is checked; rank 0 prints "mpi_check: <ranks> ranks, <n> errors"
 * and the job exits non-zero if any rank found an error. Usage: mpi_check [--iterations N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct options {
  int iterations; /* ping-pong round trips per size and peer */
};

static int parse_options(int argc, char** argv, struct options* o) {
  o->iterations = 3;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      char* end = NULL;
      const long v = strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1 || v > 1000) {
        fprintf(stderr, "mpi_check: --iterations wants 1..1000, not '%s'\n", argv[i]);
        return -1;
      }
      o->iterations = (int)v;
    } else {
      fprintf(stderr, "mpi_check: unknown option '%s' (usage: mpi_check [--iterations N])\n",
              argv[i]);
      return -1;
    }
  }
  return 0;
}

static unsigned char pattern(int i, int peer, int n, int it) {
  return (unsigned char)(i * 7 + peer * 13 + n + it);
}

/* Rank 0 sends a pattern to each peer, which adds 1 to every byte and sends it back. */
static int ping_pong(int rank, int size, int iterations) {
  int errors = 0;
  for (int n = 1; n <= (1 << 20); n *= 4) {
    unsigned char* b = malloc((size_t)n);
    for (int peer = 1; peer < size; ++peer) {
      for (int it = 0; it < iterations; ++it) {
        if (rank == 0) {
          for (int i = 0; i < n; ++i)
            b[i] = pattern(i, peer, n, it);
          MPI_Send(b, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          MPI_Status st;
          MPI_Recv(b, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st);
          int count = 0;
          MPI_Get_count(&st, MPI_BYTE, &count);
          if (count != n) ++errors;
          for (int i = 0; i < n; ++i) {
            if (b[i] != (unsigned char)(pattern(i, peer, n, it) + 1)) {
              fprintf(stderr, "mpi_check: ping-pong %d B with rank %d: byte %d wrong\n", n, peer,
                      i);
              ++errors;
              break;
            }
          }
        } else if (rank == peer) {
          MPI_Recv(b, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          for (int i = 0; i < n; ++i)
            b[i]++;
          MPI_Send(b, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
      }
    }
    free(b);
  }
  return errors;
}

static int allreduce(int rank, int size) {
  enum { kCount = 10000 };
  static long v[kCount], r[kCount];
  for (int i = 0; i < kCount; ++i)
    v[i] = (long)rank * 1000 + i;
  MPI_Allreduce(v, r, kCount, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < kCount; ++i) {
    const long want = 1000L * size * (size - 1) / 2 + (long)i * size;
    if (r[i] != want) {
      fprintf(stderr, "mpi_check: allreduce element %d: %ld, want %ld\n", i, r[i], want);
      return 1;
    }
  }
  return 0;
}

/* Each rank puts its pattern into its right neighbour's window, then gets it back. */
static int one_sided(int rank, int size) {
  enum { kInts = 16384 };
  int errors = 0;
  int* window = NULL;
  MPI_Win win;
  MPI_Win_allocate(kInts * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &window, &win);
  for (int i = 0; i < kInts; ++i)
    window[i] = -1;
  static int src[kInts], got[kInts];
  for (int i = 0; i < kInts; ++i)
    src[i] = rank * 100000 + i;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Win_fence(0, win);
  MPI_Put(src, kInts, MPI_INT, right, 0, kInts, MPI_INT, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < kInts; ++i) {
    if (window[i] != left * 100000 + i) {
      fprintf(stderr, "mpi_check: put from rank %d: int %d is %d\n", left, i, window[i]);
      ++errors;
      break;
    }
  }
  MPI_Get(got, kInts, MPI_INT, right, 0, kInts, MPI_INT, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < kInts; ++i) {
    if (got[i] != rank * 100000 + i) {
      fprintf(stderr, "mpi_check: get from rank %d: int %d is %d\n", right, i, got[i]);
      ++errors;
      break;
    }
  }
  MPI_Win_free(&win);
  return errors;
}

static int run(const struct options* o) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int errors = ping_pong(rank, size, o->iterations);
  errors += allreduce(rank, size);
  errors += one_sided(rank, size);
  int total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_check: %d ranks, %d errors\n", size, total);
  return total == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  struct options o;
  if (parse_options(argc, argv, &o) != 0) {
    MPI_Finalize();
    return 2;
  }
  const int rc = run(&o);
  MPI_Finalize();
  return rc;
}
