// libfabric semantics of the provider naa beyond its ops tables (issue 29), through the libfabric
// API alone: fi_cancel of posted receives (fi_endpoint(3): an FI_ECANCELED error completion with
// the operation's context, the other receives unaffected), and a peer that makes no libfabric call
// for 10 s losing no connection (the transport's reliability work goes on without the
// application, as a NIC's does).
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "ofi_side.hpp"

namespace {

using naa::testbench::ofi::Pair;
using naa::testbench::ofi::Side;

void fill(std::uint8_t* p, std::size_t n, std::uint8_t seed) {
  for (std::size_t i = 0; i < n; ++i)
    p[i] = static_cast<std::uint8_t>(seed + i * 11);
}

// The next completion of `cq`: an entry, or the error entry behind -FI_EAVAIL (is_error).
struct Completion {
  bool is_error = false;
  fi_cq_data_entry entry{};
  fi_cq_err_entry err{};
};
Completion next_completion(fid_cq* cq) {
  Completion c;
  const ssize_t n = fi_cq_sread(cq, &c.entry, 1, nullptr, 5000);
  if (n == -FI_EAVAIL) {
    c.is_error = true;
    REQUIRE(fi_cq_readerr(cq, &c.err, 0) == 1);
    return c;
  }
  INFO("fi_cq_sread: " << n);
  REQUIRE(n == 1);
  return c;
}

}  // namespace

TEST_CASE("ofi semantics: fi_cancel of a posted receive completes it with FI_ECANCELED", "[ofi]") {
  // Go-back-N (FI_NAA_IRN=0): an IRN connection cannot take a receive back (the IRN case below).
  REQUIRE(::setenv("FI_NAA_IRN", "0", 1) == 0);
  Pair p;
  ::unsetenv("FI_NAA_IRN");
  Side& server = p.server;
  Side& client = p.client;
  int ctx[4] = {};
  // Three receives: a plain one, one over two iovecs (a bounce buffer), and a plain one.
  REQUIRE(fi_recv(server.ep, server.at(0), 4096, server.desc(), 0, &ctx[0]) == 0);
  iovec iov[2] = {{server.at(4096), 1000}, {server.at(6000), 3000}};
  void* descs[2] = {server.desc(), server.desc()};
  REQUIRE(fi_recvv(server.ep, iov, descs, 2, 0, &ctx[1]) == 0);
  REQUIRE(fi_recv(server.ep, server.at(12288), 4096, server.desc(), 0, &ctx[2]) == 0);
  const ssize_t left = server.ep->ops->rx_size_left(server.ep);

  REQUIRE(fi_cancel(&server.ep->fid, &ctx[1]) == 0);
  CHECK(server.ep->ops->rx_size_left(server.ep) == left + 1);
  CHECK(fi_cancel(&server.ep->fid, &ctx[1]) == -FI_ENOENT);  // already cancelled
  CHECK(fi_cancel(&server.ep->fid, &ctx[3]) == -FI_ENOENT);  // never posted
  Completion c = next_completion(server.cq);
  REQUIRE(c.is_error);
  CHECK(c.err.err == FI_ECANCELED);
  CHECK(c.err.op_context == &ctx[1]);
  CHECK((c.err.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG));
  CHECK(c.err.len == 0);

  // The next two messages take the receives before and after the cancelled one.
  fill(client.at(0), 3000, 3);
  fill(client.at(4096), 1500, 9);
  int tx_ctx = 0;
  REQUIRE(fi_send(client.ep, client.at(0), 3000, client.desc(), 0, &tx_ctx) == 0);
  REQUIRE(fi_send(client.ep, client.at(4096), 1500, client.desc(), 0, &tx_ctx) == 0);
  // A send is not cancelled: it is on its way.
  CHECK(fi_cancel(&client.ep->fid, &tx_ctx) == -FI_ENOENT);
  for (int i = 0; i < 2; ++i) {
    c = next_completion(client.cq);
    REQUIRE_FALSE(c.is_error);
    CHECK(c.entry.op_context == &tx_ctx);
  }
  c = next_completion(server.cq);
  REQUIRE_FALSE(c.is_error);
  CHECK(c.entry.op_context == &ctx[0]);
  CHECK(c.entry.len == 3000);
  c = next_completion(server.cq);
  REQUIRE_FALSE(c.is_error);
  CHECK(c.entry.op_context == &ctx[2]);
  CHECK(c.entry.len == 1500);
  CHECK(std::memcmp(server.at(0), client.at(0), 3000) == 0);
  CHECK(std::memcmp(server.at(12288), client.at(4096), 1500) == 0);
  // Nothing reached the cancelled receive's iovecs.
  CHECK(std::all_of(server.at(4096), server.at(9000), [](std::uint8_t b) { return b == 0; }));
  CHECK(fi_cancel(&server.ep->fid, &ctx[0]) == -FI_ENOENT);  // completed
  fi_cq_data_entry none{};
  CHECK(fi_cq_read(server.cq, &none, 1) == -FI_EAGAIN);
}

// The criterion (issue 29, "What to build" 1): the server posts its receives and then
// makes no libfabric call for 10 s while the client sends a 20000-byte message each second and
// is itself silent in between. Every send must complete without error (nobody but the server's
// NIC thread acknowledges: without it the retry budget, about 1.07 s, runs out, see the next
// test), and after the silence every message is there, bytes checked, and the connection still
// carries data both ways. This asserts outcomes, not durations: the 10 s is the silence asked for.
TEST_CASE("ofi semantics: a peer that makes no libfabric call for 10 s loses no connection",
          "[ofi]") {
  constexpr int kMessages = 10;
  constexpr std::size_t kLen = 20000, kStride = 20480;
  Pair p;
  Side& server = p.server;
  Side& client = p.client;
  int rx_ctx[kMessages + 1] = {};
  int tx_ctx = 0;
  for (int i = 0; i < kMessages; ++i) {
    REQUIRE(fi_recv(server.ep, server.at(static_cast<std::size_t>(i) * kStride), kLen,
                    server.desc(), 0, &rx_ctx[i]) == 0);
  }
  const auto silence_begins = std::chrono::steady_clock::now();
  // From here the server makes no call until the silence has lasted 10 s.
  for (int i = 0; i < kMessages; ++i) {
    std::uint8_t* msg = client.at(static_cast<std::size_t>(i) * kStride);
    fill(msg, kLen, static_cast<std::uint8_t>(17 * i + 1));
    REQUIRE(fi_send(client.ep, msg, kLen, client.desc(), 0, &tx_ctx) == 0);
    const Completion c = next_completion(client.cq);
    INFO("message " << i << ": " << fi_strerror(c.err.err));
    REQUIRE_FALSE(c.is_error);
    CHECK(c.entry.op_context == &tx_ctx);
    std::this_thread::sleep_until(silence_begins + std::chrono::seconds(i + 1));
  }
  REQUIRE(std::chrono::steady_clock::now() - silence_begins >= std::chrono::seconds(10));
  for (int i = 0; i < kMessages; ++i) {
    const Completion c = next_completion(server.cq);
    REQUIRE_FALSE(c.is_error);
    CHECK(c.entry.op_context == &rx_ctx[i]);
    CHECK(c.entry.len == kLen);
    const std::size_t off = static_cast<std::size_t>(i) * kStride;
    CHECK(std::memcmp(server.at(off), client.at(off), kLen) == 0);
  }
  // And back: the server's first data call after the silence.
  const std::size_t back = kMessages * kStride;
  fill(server.at(back), 5000, 99);
  REQUIRE(fi_recv(client.ep, client.at(back), 5000, client.desc(), 0, &rx_ctx[kMessages]) == 0);
  REQUIRE(fi_send(server.ep, server.at(back), 5000, server.desc(), 0, &tx_ctx) == 0);
  REQUIRE_FALSE(next_completion(server.cq).is_error);
  const Completion c = next_completion(client.cq);
  REQUIRE_FALSE(c.is_error);
  CHECK(c.entry.op_context == &rx_ctx[kMessages]);
  CHECK(std::memcmp(client.at(back), server.at(back), 5000) == 0);
}

// What the NIC thread is for, and that the test above can fail: without progress threads
// (FI_NAA_PROGRESS_THREAD=0) a silent receiver acknowledges nothing, and the sender's retries run
// out (FI_ETIMEDOUT) well within the silence.
TEST_CASE("ofi semantics: without progress threads a silent receiver's peer gets FI_ETIMEDOUT",
          "[ofi]") {
  REQUIRE(::setenv("FI_NAA_PROGRESS_THREAD", "0", 1) == 0);
  {
    Pair p;
    int rx_ctx = 0, tx_ctx = 0;
    REQUIRE(fi_recv(p.server.ep, p.server.at(0), 20000, p.server.desc(), 0, &rx_ctx) == 0);
    REQUIRE(fi_send(p.client.ep, p.client.at(0), 20000, p.client.desc(), 0, &tx_ctx) == 0);
    const Completion c = next_completion(p.client.cq);
    REQUIRE(c.is_error);
    CHECK(c.err.err == FI_ETIMEDOUT);
    CHECK(c.err.op_context == &tx_ctx);
  }
  ::unsetenv("FI_NAA_PROGRESS_THREAD");
}

// An IRN connection's SENDs name their receive by its position in the queue (docs/protocol.md
// "IRN"), so none can be taken out: fi_cancel answers -FI_ENOSYS and the receive still completes.
TEST_CASE("ofi semantics: fi_cancel on an IRN connection answers -FI_ENOSYS", "[ofi]") {
  REQUIRE(::setenv("FI_NAA_IRN", "1", 1) == 0);
  {
    Pair p;
    int rx_ctx = 0, tx_ctx = 0;
    REQUIRE(fi_recv(p.server.ep, p.server.at(0), 4096, p.server.desc(), 0, &rx_ctx) == 0);
    CHECK(fi_cancel(&p.server.ep->fid, &rx_ctx) == -FI_ENOSYS);
    fill(p.client.at(0), 100, 5);
    REQUIRE(fi_send(p.client.ep, p.client.at(0), 100, p.client.desc(), 0, &tx_ctx) == 0);
    REQUIRE_FALSE(next_completion(p.client.cq).is_error);
    const Completion c = next_completion(p.server.cq);
    REQUIRE_FALSE(c.is_error);
    CHECK(c.entry.op_context == &rx_ctx);
    CHECK(std::memcmp(p.server.at(0), p.client.at(0), 100) == 0);
  }
  ::unsetenv("FI_NAA_IRN");
}

// A receive posted before the connection exists waits in the provider, not in a QP: fi_cancel
// takes it from there. The receive counter counts the cancel as an error completion.
TEST_CASE("ofi semantics: fi_cancel of a receive posted before the connection, counted as an error",
          "[ofi]") {
  int ctx[2] = {};
  fid_cntr* cntr = nullptr;
  Pair p(FI_WAIT_NONE, {}, [&](Side& c) {
    fi_cntr_attr ca{};
    ca.events = FI_CNTR_EVENTS_COMP;
    REQUIRE(fi_cntr_open(c.domain, &ca, &cntr, nullptr) == 0);
    REQUIRE(fi_ep_bind(c.ep, &cntr->fid, FI_RECV) == 0);
    REQUIRE(fi_recv(c.ep, c.at(0), 4096, c.desc(), 0, &ctx[0]) == 0);
    REQUIRE(fi_recv(c.ep, c.at(4096), 4096, c.desc(), 0, &ctx[1]) == 0);
    CHECK(fi_cancel(&c.ep->fid, &ctx[0]) == 0);
  });
  Completion c = next_completion(p.client.cq);
  REQUIRE(c.is_error);
  CHECK(c.err.err == FI_ECANCELED);
  CHECK(c.err.op_context == &ctx[0]);
  fill(p.server.at(0), 700, 21);
  int tx_ctx = 0;
  REQUIRE(fi_send(p.server.ep, p.server.at(0), 700, p.server.desc(), 0, &tx_ctx) == 0);
  REQUIRE_FALSE(next_completion(p.server.cq).is_error);
  c = next_completion(p.client.cq);
  REQUIRE_FALSE(c.is_error);
  CHECK(c.entry.op_context == &ctx[1]);
  CHECK(c.entry.len == 700);
  CHECK(std::memcmp(p.client.at(4096), p.server.at(0), 700) == 0);
  CHECK(fi_cntr_read(cntr) == 1);
  CHECK(fi_cntr_readerr(cntr) == 1);
  REQUIRE(fi_close(&p.client.ep->fid) == 0);  // before the counter it is bound to
  p.client.ep = nullptr;
  CHECK(fi_close(&cntr->fid) == 0);
}

// ofi_rxm's teardown (libfabric 1.17 to today, prov/rxm/src/rxm_conn.c rxm_close_conn): it closes
// a connection's msg endpoint, then reads the msg CQ, and for a receive completion found there
// reposts the buffer with fi_recv on the endpoint it has just closed. The provider keeps a closed
// endpoint's fid valid until the domain closes and answers every call on it with
// -FI_EOPBADSTATE; when it deleted the endpoint, that fi_recv wrote into freed memory (the heap
// corruption ofi_rxm's tests hit at exit, docs/host/libfabric.md "Closed endpoints").
TEST_CASE("ofi semantics: calls on a closed endpoint answer -FI_EOPBADSTATE, as ofi_rxm makes them",
          "[ofi]") {
  Pair p;
  Side& server = p.server;
  Side& client = p.client;
  int ctx[2] = {};
  REQUIRE(fi_recv(server.ep, server.at(0), 4096, server.desc(), 0, &ctx[0]) == 0);
  REQUIRE(fi_recv(server.ep, server.at(4096), 4096, server.desc(), 0, &ctx[1]) == 0);
  fill(client.at(0), 2000, 5);
  int tx_ctx = 0;
  REQUIRE(fi_send(client.ep, client.at(0), 2000, client.desc(), 0, &tx_ctx) == 0);
  REQUIRE(fi_send(client.ep, client.at(0), 1000, client.desc(), 0, &tx_ctx) == 0);
  for (int i = 0; i < 2; ++i) {
    const Completion c = next_completion(client.cq);
    REQUIRE_FALSE(c.is_error);
  }
  Completion c = next_completion(server.cq);
  REQUIRE_FALSE(c.is_error);
  CHECK(c.entry.op_context == &ctx[0]);

  fid_ep* closed = server.ep;
  server.ep = nullptr;  // closed here, not by Side
  REQUIRE(fi_close(&closed->fid) == 0);
  // What ofi_rxm does next: read the CQ (the second receive's completion may be there) and
  // repost a buffer on the closed endpoint.
  fi_cq_data_entry e{};
  (void)fi_cq_read(server.cq, &e, 1);
  CHECK(fi_recv(closed, server.at(8192), 4096, server.desc(), 0, &ctx[0]) == -FI_EOPBADSTATE);
  CHECK(fi_send(closed, server.at(0), 16, server.desc(), 0, &tx_ctx) == -FI_EOPBADSTATE);
  CHECK(fi_write(closed, server.at(0), 16, server.desc(), 0, 0, 0, &tx_ctx) == -FI_EOPBADSTATE);
  CHECK(fi_shutdown(closed, 0) == -FI_EOPBADSTATE);
  CHECK(closed->ops->rx_size_left(closed) == -FI_EOPBADSTATE);
  CHECK(fi_close(&closed->fid) == -FI_EOPBADSTATE);  // a second close
}

// What a QP completed before fi_close is still reported after it, as verbs keeps it (prov/verbs
// vrb_cleanup_cq): ofi_rxm closes a msg endpoint on FI_SHUTDOWN and then reads the CQ for what it
// owes the application. The EQ's poll moves the transport (receive, ACK, complete) without
// dispatching into the CQs, so without threads (FI_NAA_PROGRESS_THREAD=0) the server's receives
// complete in its QP while only its EQ is read, and its CQ sees them only at or after the close.
// When fi_close dropped them, fi_pingpong over ofi_rxm waited forever for its last transmit.
TEST_CASE("ofi semantics: completions a QP finished before fi_close are read after it", "[ofi]") {
  REQUIRE(::setenv("FI_NAA_PROGRESS_THREAD", "0", 1) == 0);
  Pair p;
  ::unsetenv("FI_NAA_PROGRESS_THREAD");
  Side& server = p.server;
  Side& client = p.client;
  int ctx[2] = {};
  REQUIRE(fi_recv(server.ep, server.at(0), 4096, server.desc(), 0, &ctx[0]) == 0);
  REQUIRE(fi_recv(server.ep, server.at(4096), 4096, server.desc(), 0, &ctx[1]) == 0);
  fill(client.at(0), 3000, 7);
  int tx_ctx = 0;
  REQUIRE(fi_send(client.ep, client.at(0), 3000, client.desc(), 0, &tx_ctx) == 0);
  REQUIRE(fi_send(client.ep, client.at(0), 100, client.desc(), 0, &tx_ctx) == 0);
  // The client's sends complete once the server's transport has received and ACKed them; the
  // server reads only its EQ meanwhile (nothing comes there).
  int sent = 0;
  for (int turn = 0; turn < 20000 && sent < 2; ++turn) {
    fi_cq_data_entry e{};
    const ssize_t n = fi_cq_read(client.cq, &e, 1);
    if (n == 1) ++sent;
    REQUIRE((n == 1 || n == -FI_EAGAIN));
    std::uint32_t event = 0;
    fi_eq_cm_entry cm{};
    REQUIRE(fi_eq_read(server.eq, &event, &cm, sizeof cm, 0) == -FI_EAGAIN);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  REQUIRE(sent == 2);

  fid_ep* ep = server.ep;
  server.ep = nullptr;
  REQUIRE(fi_close(&ep->fid) == 0);
  fi_cq_data_entry got[2]{};
  REQUIRE(fi_cq_read(server.cq, got, 2) == 2);
  CHECK(got[0].op_context == &ctx[0]);
  CHECK(got[0].len == 3000);
  CHECK(got[1].op_context == &ctx[1]);
  CHECK(got[1].len == 100);
  CHECK(std::memcmp(server.at(0), client.at(0), 3000) == 0);
}
