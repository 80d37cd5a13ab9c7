/* ofi_call: calls an NAA kernel through the libfabric API alone (any FI_EP_MSG provider with
 * FI_MSG, FI_RMA and remote CQ data: naa over UdpRoce, or verbs over rdma_cm on a RoCE device).
 *
 * PROTOCOL.md 5: connect to the NAA's rdma_cm port; MRSP by fi_send (type 0x01: the regions and
 * our output's address and key) and fi_recv (type 0x02: where the NAA placed them); the inputs by
 * fi_write, the last one by fi_writedata whose immediate selects the kernel (0x80 | fn, user bits
 * 8-31); the NAA writes the output back into our registered buffer and its last write carries an
 * immediate, which arrives here as FI_REMOTE_CQ_DATA on a posted receive (0 = success). Every
 * result byte is checked against the kernel computed here.
 *
 *   ofi_call --naa 127.0.0.2 [--port 12345] [--provider naa] [--local IP] [--fn vadd_i32|add1]
 *            [--size BYTES] [--seed N] [--calls N]
 * Exit 0 when every call's result verified, 1 on a failed or wrong call, 2 on a bad option. */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kFnAdd1 = 1, kFnVaddI32 = 4 };
enum { kFlagInput = 0x04, kFlagOutput = 0x08 };
enum { kMaxRegions = 3, kNaaAlignment = 4096, kTimeoutSeconds = 20 };

struct options {
  const char* naa;
  const char* port;
  const char* provider;
  const char* local;
  int fn;
  size_t size;
  unsigned seed;
  int calls;
};

struct region {
  uint8_t flags;
  uint8_t* buf;
  size_t size;
  struct fid_mr* mr;
  uint64_t naa_addr; /* from the NAA's advertisement */
  uint32_t naa_rkey;
};

struct call_state {
  struct fi_info* info;
  struct fid_fabric* fabric;
  struct fid_eq* eq;
  struct fid_domain* domain;
  struct fid_cq* cq;
  struct fid_ep* ep;
  uint8_t* msg; /* MRSP send and receive buffers */
  struct fid_mr* msg_mr;
  struct region regions[kMaxRegions];
  int nregions;
  struct fi_context ctx[8];
};

static void usage(FILE* f) {
  fprintf(f,
          "usage: ofi_call --naa IP [--port 12345] [--provider naa] [--local IP]\n"
          "                [--fn vadd_i32|add1] [--size BYTES] [--seed N] [--calls N]\n");
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int fail(const char* what, long rc) {
  fprintf(stderr, "ofi_call: %s: %s (%ld)\n", what, fi_strerror((int)-rc), rc);
  return 1;
}

/* One completion, whatever the provider's progress model (reading drives manual progress). */
static int wait_completion(struct call_state* s, struct fi_cq_data_entry* e) {
  const double deadline = now_s() + kTimeoutSeconds;
  for (;;) {
    const ssize_t n = fi_cq_read(s->cq, e, 1);
    if (n == 1) return 0;
    if (n == -FI_EAVAIL) {
      struct fi_cq_err_entry err;
      char text[128];
      memset(&err, 0, sizeof err);
      fi_cq_readerr(s->cq, &err, 0);
      fprintf(stderr, "ofi_call: completion error: %s (provider: %s)\n", fi_strerror(err.err),
              fi_cq_strerror(s->cq, err.prov_errno, err.err_data, text, sizeof text));
      return 1;
    }
    if (n != -FI_EAGAIN) return fail("fi_cq_read", n);
    if (now_s() > deadline) {
      fprintf(stderr, "ofi_call: no completion within %d s\n", kTimeoutSeconds);
      return 1;
    }
  }
}

static void put_be(uint8_t* p, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8)
    p[i] = (uint8_t)v;
}
static uint64_t get_be(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | p[i];
  return v;
}

static int open_connection(const struct options* o, struct call_state* s) {
  struct fi_info* hints = fi_allocinfo();
  if (hints == NULL) return fail("fi_allocinfo", -FI_ENOMEM);
  hints->ep_attr->type = FI_EP_MSG;
  hints->caps = FI_MSG | FI_RMA;
  hints->mode = FI_CONTEXT | FI_RX_CQ_DATA;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup(o->provider);
  if (o->local != NULL) {
    struct sockaddr_in* src = calloc(1, sizeof *src);
    src->sin_family = AF_INET;
    if (inet_pton(AF_INET, o->local, &src->sin_addr) != 1) {
      fprintf(stderr, "ofi_call: --local %s is not an IPv4 address\n", o->local);
      free(src);
      fi_freeinfo(hints);
      return 2;
    }
    hints->addr_format = FI_SOCKADDR_IN;
    hints->src_addr = src;
    hints->src_addrlen = sizeof *src;
  }
  int rc = fi_getinfo(FI_VERSION(1, 17), o->naa, o->port, 0, hints, &s->info);
  fi_freeinfo(hints);
  if (rc != 0) return fail("fi_getinfo (is the provider there? FI_PROVIDER_PATH)", rc);
  struct fi_eq_attr eq_attr;
  memset(&eq_attr, 0, sizeof eq_attr);
  eq_attr.wait_obj = FI_WAIT_UNSPEC;
  struct fi_cq_attr cq_attr;
  memset(&cq_attr, 0, sizeof cq_attr);
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_NONE;
  cq_attr.size = 64;
  if ((rc = fi_fabric(s->info->fabric_attr, &s->fabric, NULL)) != 0) return fail("fi_fabric", rc);
  if ((rc = fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL)) != 0) return fail("fi_eq_open", rc);
  if ((rc = fi_domain(s->fabric, s->info, &s->domain, NULL)) != 0) return fail("fi_domain", rc);
  if ((rc = fi_cq_open(s->domain, &cq_attr, &s->cq, NULL)) != 0) return fail("fi_cq_open", rc);
  if ((rc = fi_endpoint(s->domain, s->info, &s->ep, NULL)) != 0) return fail("fi_endpoint", rc);
  if ((rc = fi_ep_bind(s->ep, &s->eq->fid, 0)) != 0) return fail("fi_ep_bind eq", rc);
  if ((rc = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV)) != 0) {
    return fail("fi_ep_bind cq", rc);
  }
  if ((rc = fi_enable(s->ep)) != 0) return fail("fi_enable", rc);
  return 0;
}

static int connect_to_naa(struct call_state* s) {
  int rc = fi_connect(s->ep, s->info->dest_addr, NULL, 0);
  if (rc != 0) return fail("fi_connect", rc);
  struct fi_eq_cm_entry entry;
  uint32_t event = 0;
  const ssize_t n = fi_eq_sread(s->eq, &event, &entry, sizeof entry, kTimeoutSeconds * 1000, 0);
  if (n == -FI_EAVAIL) {
    struct fi_eq_err_entry err;
    memset(&err, 0, sizeof err);
    fi_eq_readerr(s->eq, &err, 0);
    fprintf(stderr, "ofi_call: connection failed: %s (provider error %d)\n", fi_strerror(err.err),
            err.prov_errno);
    return 1;
  }
  if (n < 0) return fail("fi_eq_sread", n);
  if (event != FI_CONNECTED) {
    fprintf(stderr, "ofi_call: unexpected CM event %u\n", event);
    return 1;
  }
  return 0;
}

static int register_buffers(const struct options* o, struct call_state* s) {
  const size_t msg_size = 4096;
  s->msg = calloc(1, msg_size);
  int rc = fi_mr_reg(s->domain, s->msg, msg_size, FI_SEND | FI_RECV, 0, 0, 0, &s->msg_mr, NULL);
  if (rc != 0) return fail("fi_mr_reg", rc);
  if (o->fn == kFnVaddI32) {
    s->nregions = 3;
    s->regions[0].flags = kFlagInput;
    s->regions[1].flags = kFlagInput;
    s->regions[2].flags = kFlagOutput;
  } else {
    s->nregions = 1;
    s->regions[0].flags = kFlagInput | kFlagOutput;
  }
  for (int i = 0; i < s->nregions; ++i) {
    struct region* r = &s->regions[i];
    r->size = o->size;
    r->buf = calloc(1, o->size);
    const uint64_t access = FI_WRITE | FI_READ | FI_REMOTE_WRITE;
    rc = fi_mr_reg(s->domain, r->buf, r->size, access, 0, 0, 0, &r->mr, NULL);
    if (rc != 0) return fail("fi_mr_reg", rc);
  }
  return 0;
}

/* MRSP (PROTOCOL.md 5.1): 0x01 request by fi_send, the NAA's 0x02 advertisement by fi_recv. */
static int setup_regions(struct call_state* s) {
  uint8_t* req = s->msg;
  uint8_t* adv = s->msg + 2048;
  int rc = (int)fi_recv(s->ep, adv, 2048, fi_mr_desc(s->msg_mr), 0, &s->ctx[0]);
  if (rc != 0) return fail("fi_recv (MRSP)", rc);
  req[0] = 0x01;
  req[1] = (uint8_t)s->nregions;
  req[2] = req[3] = 0;
  uint64_t naa_addr = 0;
  for (int i = 0; i < s->nregions; ++i) {
    const struct region* r = &s->regions[i];
    uint8_t* e = req + 4 + 24 * i;
    put_be(e, ((uint64_t)r->flags << 56) | naa_addr, 8);
    put_be(e + 8, (uint64_t)(uintptr_t)r->buf, 8);
    put_be(e + 16, fi_mr_key(r->mr), 4);
    put_be(e + 20, r->size, 4);
    naa_addr += (r->size + kNaaAlignment - 1) / kNaaAlignment * kNaaAlignment;
  }
  rc = (int)fi_send(s->ep, req, 4 + 24 * (size_t)s->nregions, fi_mr_desc(s->msg_mr), 0, &s->ctx[1]);
  if (rc != 0) return fail("fi_send (MRSP)", rc);
  struct fi_cq_data_entry e;
  for (int got = 0; got < 2; ++got) {
    if (wait_completion(s, &e) != 0) return 1;
  }
  if (adv[0] == 0x00) {
    fprintf(stderr, "ofi_call: the NAA refused the regions: MRSP error 0x%02x\n", adv[1]);
    return 1;
  }
  if (adv[0] != 0x02 || adv[1] != s->nregions) {
    fprintf(stderr, "ofi_call: bad MRSP advertisement (type 0x%02x, %u entries)\n", adv[0], adv[1]);
    return 1;
  }
  for (int i = 0; i < s->nregions; ++i) {
    s->regions[i].naa_addr = get_be(adv + 4 + 16 * i, 8);
    s->regions[i].naa_rkey = (uint32_t)get_be(adv + 4 + 16 * i + 8, 4);
  }
  return 0;
}

static void fill_inputs(const struct options* o, struct call_state* s, int call) {
  uint32_t x = o->seed * 2654435761u + (uint32_t)call * 40503u + 1u;
  for (int i = 0; i < s->nregions; ++i) {
    struct region* r = &s->regions[i];
    if (r->flags & kFlagInput) {
      for (size_t k = 0; k < r->size; ++k) {
        x = x * 1664525u + 1013904223u;
        r->buf[k] = (uint8_t)(x >> 24);
      }
    } else {
      memset(r->buf, 0xEE, r->size); /* must be overwritten by the NAA */
    }
  }
}

/* The expected result, computed here, and the check of every byte. */
static int verify(const struct options* o, struct call_state* s, const uint8_t* before) {
  size_t bad = 0;
  if (o->fn == kFnVaddI32) {
    const uint8_t* a = s->regions[0].buf;
    const uint8_t* b = s->regions[1].buf;
    const uint8_t* out = s->regions[2].buf;
    for (size_t i = 0; i + 4 <= o->size; i += 4) {
      uint32_t va = 0, vb = 0;
      for (int k = 3; k >= 0; --k) {
        va = (va << 8) | a[i + (size_t)k];
        vb = (vb << 8) | b[i + (size_t)k];
      }
      const uint32_t sum = va + vb; /* little-endian int32, wrapping (PROTOCOL.md 5.3) */
      for (int k = 0; k < 4; ++k)
        bad += out[i + (size_t)k] != (uint8_t)(sum >> (8 * k));
    }
  } else {
    for (size_t i = 0; i < o->size; ++i)
      bad += s->regions[0].buf[i] != (uint8_t)(before[i] + 1);
  }
  if (bad != 0) fprintf(stderr, "ofi_call: %zu result bytes wrong\n", bad);
  return bad == 0 ? 0 : 1;
}

/* One call (PROTOCOL.md 5.2): post the receive for the NAA's immediate, write the inputs, the last
 * by fi_writedata with the host -> NAA immediate, wait for the result's remote CQ data. */
static int do_call(const struct options* o, struct call_state* s, int call) {
  fill_inputs(o, s, call);
  uint8_t* before = malloc(o->size);
  memcpy(before, s->regions[0].buf, o->size);
  int rc = (int)fi_recv(s->ep, NULL, 0, NULL, 0, &s->ctx[2]);
  if (rc != 0) return fail("fi_recv (result)", rc);
  int last = -1;
  for (int i = 0; i < s->nregions; ++i) {
    if (s->regions[i].flags & kFlagInput) last = i;
  }
  const uint64_t imm = 0x80u | (uint64_t)o->fn; /* user bits 0 */
  int posted = 0;
  for (int i = 0; i <= last; ++i) {
    const struct region* r = &s->regions[i];
    if (!(r->flags & kFlagInput)) continue;
    if (i == last) {
      rc = (int)fi_writedata(s->ep, r->buf, r->size, fi_mr_desc(r->mr), imm, 0, r->naa_addr,
                             r->naa_rkey, &s->ctx[3 + i]);
    } else {
      rc = (int)fi_write(s->ep, r->buf, r->size, fi_mr_desc(r->mr), 0, r->naa_addr, r->naa_rkey,
                         &s->ctx[3 + i]);
    }
    if (rc != 0) {
      free(before);
      return fail(i == last ? "fi_writedata" : "fi_write", rc);
    }
    ++posted;
  }
  int result_seen = 0;
  uint64_t result_imm = 0;
  while (posted > 0 || !result_seen) {
    struct fi_cq_data_entry e;
    if (wait_completion(s, &e) != 0) {
      free(before);
      return 1;
    }
    if (e.op_context == &s->ctx[2]) {
      if (!(e.flags & FI_REMOTE_CQ_DATA)) {
        fprintf(stderr, "ofi_call: the result's completion has no remote CQ data\n");
        free(before);
        return 1;
      }
      result_seen = 1;
      result_imm = e.data;
    } else {
      --posted;
    }
  }
  if (result_imm != 0) {
    fprintf(stderr, "ofi_call: the NAA answered return code 0x%02x (immediate 0x%08llx)\n",
            (unsigned)(result_imm >> 8), (unsigned long long)result_imm);
    free(before);
    return 1;
  }
  rc = verify(o, s, before);
  free(before);
  return rc;
}

static void close_all(struct call_state* s) {
  if (s->ep != NULL) {
    fi_shutdown(s->ep, 0);
    fi_close(&s->ep->fid);
  }
  for (int i = 0; i < s->nregions; ++i) {
    if (s->regions[i].mr != NULL) fi_close(&s->regions[i].mr->fid);
    free(s->regions[i].buf);
  }
  if (s->msg_mr != NULL) fi_close(&s->msg_mr->fid);
  free(s->msg);
  if (s->cq != NULL) fi_close(&s->cq->fid);
  if (s->domain != NULL) fi_close(&s->domain->fid);
  if (s->eq != NULL) fi_close(&s->eq->fid);
  if (s->fabric != NULL) fi_close(&s->fabric->fid);
  if (s->info != NULL) fi_freeinfo(s->info);
}

static int run(const struct options* o) {
  struct call_state s;
  memset(&s, 0, sizeof s);
  int rc = open_connection(o, &s);
  if (rc == 0) rc = register_buffers(o, &s);
  if (rc == 0) rc = connect_to_naa(&s);
  if (rc == 0) rc = setup_regions(&s);
  const double t0 = now_s();
  for (int c = 0; rc == 0 && c < o->calls; ++c)
    rc = do_call(o, &s, c);
  if (rc == 0) {
    printf(
        "ofi_call: %s over %s, %d call(s) of %zu bytes: every result byte verified (%.1f "
        "us/call)\n",
        o->fn == kFnVaddI32 ? "vadd_i32" : "add1", s.info->fabric_attr->prov_name, o->calls,
        o->size, (now_s() - t0) * 1e6 / o->calls);
  }
  close_all(&s);
  return rc;
}

static int parse_options(int argc, char** argv, struct options* o) {
  static const struct option longopts[] = {
      {"naa", required_argument, NULL, 'n'},      {"port", required_argument, NULL, 'p'},
      {"provider", required_argument, NULL, 'P'}, {"local", required_argument, NULL, 'l'},
      {"fn", required_argument, NULL, 'f'},       {"size", required_argument, NULL, 's'},
      {"seed", required_argument, NULL, 'S'},     {"calls", required_argument, NULL, 'c'},
      {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
  o->port = "12345";
  o->provider = "naa";
  o->fn = kFnVaddI32;
  o->size = 65536;
  o->seed = 1;
  o->calls = 1;
  int c;
  char* end = NULL;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'n':
        o->naa = optarg;
        break;
      case 'p':
        o->port = optarg;
        break;
      case 'P':
        o->provider = optarg;
        break;
      case 'l':
        o->local = optarg;
        break;
      case 'f':
        if (strcmp(optarg, "vadd_i32") == 0) {
          o->fn = kFnVaddI32;
        } else if (strcmp(optarg, "add1") == 0) {
          o->fn = kFnAdd1;
        } else {
          fprintf(stderr, "ofi_call: --fn must be vadd_i32 or add1\n");
          return 2;
        }
        break;
      case 's':
        o->size = strtoul(optarg, &end, 0);
        if (*end != '\0' || o->size == 0 || o->size % 4 != 0 || o->size > (1u << 30)) {
          fprintf(stderr, "ofi_call: --size must be a multiple of 4 in 4..1 GiB\n");
          return 2;
        }
        break;
      case 'S':
        o->seed = (unsigned)strtoul(optarg, NULL, 0);
        break;
      case 'c':
        o->calls = atoi(optarg);
        if (o->calls < 1) {
          fprintf(stderr, "ofi_call: --calls must be at least 1\n");
          return 2;
        }
        break;
      case 'h':
        usage(stdout);
        exit(0);
      default:
        usage(stderr);
        return 2;
    }
  }
  if (o->naa == NULL || optind != argc) {
    usage(stderr);
    return 2;
  }
  return 0;
}

int main(int argc, char** argv) {
  struct options o;
  memset(&o, 0, sizeof o);
  const int rc = parse_options(argc, argv, &o);
  if (rc != 0) return rc;
  return run(&o);
}
