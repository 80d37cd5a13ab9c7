// The libfabric provider naa (ofi/) driven through the libfabric API alone, as an application
// would: libfabric loads build/lib/libnaa-fi.so from FI_PROVIDER_PATH (set by CTest). Server and
// client are two fabrics of this process on .1 and .2 of the test's address block.
#include <arpa/inet.h>
#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "ofi_side.hpp"
#include "test_addresses.hpp"

namespace {

using naa::testbench::ofi::expect_cm;
using naa::testbench::ofi::Side;

// Only our provider: libfabric reads FI_PROVIDER once, at its first initialisation.
const int kOnlyNaa = ::setenv("FI_PROVIDER", "naa", 1);

constexpr const char* kPort = "7471";
constexpr std::uint32_t kVersion = FI_VERSION(1, 17);

std::string ip(int host) {
  return naa::testbench::test_addresses().ip(host);
}

fi_info* hints(bool auto_progress, std::size_t tx_size = 0) {
  fi_info* h = fi_allocinfo();
  h->ep_attr->type = FI_EP_MSG;
  h->caps = FI_MSG | FI_RMA;
  h->mode = FI_RX_CQ_DATA;
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  h->domain_attr->data_progress = auto_progress ? FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL;
  h->fabric_attr->prov_name = strdup("naa");
  if (tx_size != 0) h->tx_attr->size = tx_size;
  return h;
}

// One side: fabric, EQ, domain, one CQ for both directions, endpoint, a registered buffer.
// A connected pair: server listens on .(host), client on .(host + 1) connects.
struct Pair {
  Side server, client;
  Pair(bool server_auto, bool client_auto, std::size_t client_tx_size = 0,
       fi_wait_obj client_wait = FI_WAIT_NONE, int host = 1) {
    fi_info* sh = hints(server_auto);
    REQUIRE(fi_getinfo(kVersion, ip(host).c_str(), kPort, FI_SOURCE, sh, &server.info) == 0);
    fi_freeinfo(sh);
    server.open_fabric(server.info);
    REQUIRE(fi_passive_ep(server.fabric, server.info, &server.pep, nullptr) == 0);
    REQUIRE(fi_pep_bind(server.pep, &server.eq->fid, 0) == 0);
    REQUIRE(fi_listen(server.pep) == 0);

    fi_info* ch = hints(client_auto, client_tx_size);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    inet_pton(AF_INET, ip(host + 1).c_str(), &src.sin_addr);
    ch->src_addr = malloc(sizeof src);
    std::memcpy(ch->src_addr, &src, sizeof src);
    ch->src_addrlen = sizeof src;
    REQUIRE(fi_getinfo(kVersion, ip(host).c_str(), kPort, 0, ch, &client.info) == 0);
    fi_freeinfo(ch);
    client.open_fabric(client.info);
    client.open_endpoint(client.info, FI_CQ_FORMAT_DATA, client_wait);
    REQUIRE(fi_connect(client.ep, client.info->dest_addr, "hi", 3) == 0);

    std::array<std::uint8_t, sizeof(fi_eq_cm_entry) + 64> raw{};
    auto& entry = *reinterpret_cast<fi_eq_cm_entry*>(raw.data());
    REQUIRE(expect_cm(server.eq, entry, raw.size()) == FI_CONNREQ);
    REQUIRE(entry.info != nullptr);
    CHECK(std::string(reinterpret_cast<const char*>(raw.data() + sizeof entry)) == "hi");
    fi_info* req = entry.info;
    server.open_endpoint(req);
    REQUIRE(fi_accept(server.ep, nullptr, 0) == 0);
    fi_freeinfo(req);
    fi_eq_cm_entry e{};
    REQUIRE(expect_cm(server.eq, e) == FI_CONNECTED);
    CHECK(e.fid == &server.ep->fid);
    REQUIRE(expect_cm(client.eq, e) == FI_CONNECTED);
    CHECK(e.fid == &client.ep->fid);
  }
};

// Reads one completion (sread: progress while waiting); -FI_EAVAIL etc. returned as is.
ssize_t read_one(fid_cq* cq, fi_cq_data_entry& e, int timeout_ms = 10000) {
  return fi_cq_sread(cq, &e, 1, nullptr, timeout_ms);
}

// Reads one completion of `self` while also progressing `other` (both may be manual): fi_trywait
// on the other's CQ progresses its domain without taking its completions.
ssize_t read_one(Side& self, Side& other, fi_cq_data_entry& e) {
  fid* fids[] = {&other.cq->fid};
  for (int i = 0; i < 20000; ++i) {
    const ssize_t r = fi_cq_read(self.cq, &e, 1);
    if (r != -FI_EAGAIN) return r;
    (void)fi_trywait(other.fabric, fids, 1);
    if (i > 100) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return -FI_EAGAIN;
}

}  // namespace

TEST_CASE("ofi: send/recv, writedata with remote CQ data and read between two naa endpoints",
          "[ofi]") {
  const bool automatic = GENERATE(false, true);
  INFO("progress " << (automatic ? "auto" : "manual"));
  Pair p(automatic, automatic);
  std::iota(p.client.buf.begin(), p.client.buf.end(), std::uint8_t{1});
  int rx_ctx = 0, tx_ctx = 0;

  // fi_send (multi-packet) into a posted fi_recv.
  REQUIRE(fi_recv(p.server.ep, p.server.at(0), 100000, p.server.desc(), 0, &rx_ctx) == 0);
  REQUIRE(fi_send(p.client.ep, p.client.at(0), 70000, p.client.desc(), 0, &tx_ctx) == 0);
  fi_cq_data_entry e{};
  REQUIRE(read_one(p.server, p.client, e) == 1);
  CHECK(e.op_context == &rx_ctx);
  CHECK(e.flags == (FI_RECV | FI_MSG));
  CHECK(e.len == 70000);
  CHECK(std::memcmp(p.server.at(0), p.client.at(0), 70000) == 0);
  REQUIRE(read_one(p.client, p.server, e) == 1);
  CHECK(e.op_context == &tx_ctx);
  CHECK(e.flags == (FI_SEND | FI_MSG));

  // fi_writedata: RDMA WRITE WITH IMM; the server's receive completes with FI_REMOTE_CQ_DATA.
  REQUIRE(fi_recv(p.server.ep, nullptr, 0, nullptr, 0, &rx_ctx) == 0);
  REQUIRE(fi_writedata(p.client.ep, p.client.at(1000), 5000, p.client.desc(), 0xA1B2C3D4, 0,
                       p.server.va(200000), fi_mr_key(p.server.mr), &tx_ctx) == 0);
  REQUIRE(read_one(p.server, p.client, e) == 1);
  CHECK(e.op_context == &rx_ctx);
  CHECK((e.flags & FI_REMOTE_CQ_DATA) != 0);
  CHECK((e.flags & FI_REMOTE_WRITE) != 0);
  CHECK(e.data == 0xA1B2C3D4);
  CHECK(std::memcmp(p.server.at(200000), p.client.at(1000), 5000) == 0);
  REQUIRE(read_one(p.client, p.server, e) == 1);
  CHECK(e.flags == (FI_RMA | FI_WRITE));

  // fi_read of server memory; fi_inject completes nothing but arrives.
  std::memset(p.server.at(300000), 0x5A, 3000);
  REQUIRE(fi_read(p.client.ep, p.client.at(500000), 3000, p.client.desc(), 0, p.server.va(300000),
                  fi_mr_key(p.server.mr), &tx_ctx) == 0);
  REQUIRE(read_one(p.client, p.server, e) == 1);
  CHECK(e.flags == (FI_RMA | FI_READ));
  CHECK(std::memcmp(p.client.at(500000), p.server.at(300000), 3000) == 0);
  REQUIRE(fi_recv(p.server.ep, p.server.at(400000), 64, p.server.desc(), 0, &rx_ctx) == 0);
  REQUIRE(fi_inject(p.client.ep, "injected", 9, 0) == 0);
  REQUIRE(read_one(p.server, p.client, e) == 1);
  CHECK(std::string(reinterpret_cast<const char*>(p.server.at(400000))) == "injected");
  CHECK(fi_cq_read(p.client.cq, &e, 1) == -FI_EAGAIN);  // an inject reports no completion

  // fi_shutdown: the peer sees FI_SHUTDOWN.
  REQUIRE(fi_shutdown(p.client.ep, 0) == 0);
  fi_eq_cm_entry cm{};
  REQUIRE(expect_cm(p.server.eq, cm) == FI_SHUTDOWN);
  CHECK(cm.fid == &p.server.ep->fid);
}

TEST_CASE(
    "ofi: a rejection arrives as fi_eq_readerr FI_ECONNREFUSED with REJ reason 28 and its "
    "private data",
    "[ofi]") {
  Side server, client;
  fi_info* sh = hints(true);
  REQUIRE(fi_getinfo(kVersion, ip(3).c_str(), kPort, FI_SOURCE, sh, &server.info) == 0);
  server.open_fabric(server.info);
  REQUIRE(fi_passive_ep(server.fabric, server.info, &server.pep, nullptr) == 0);
  REQUIRE(fi_pep_bind(server.pep, &server.eq->fid, 0) == 0);
  REQUIRE(fi_listen(server.pep) == 0);
  REQUIRE(fi_getinfo(kVersion, ip(3).c_str(), kPort, 0, sh, &client.info) == 0);
  fi_freeinfo(sh);
  client.open_fabric(client.info);
  client.open_endpoint(client.info);
  REQUIRE(fi_connect(client.ep, client.info->dest_addr, nullptr, 0) == 0);
  fi_eq_cm_entry entry{};
  REQUIRE(expect_cm(server.eq, entry) == FI_CONNREQ);
  REQUIRE(fi_reject(server.pep, entry.info->handle, "busy now", 9) == 0);
  fi_freeinfo(entry.info);
  std::uint32_t event = 0;
  CHECK(fi_eq_sread(client.eq, &event, &entry, sizeof entry, 10000, 0) == -FI_EAVAIL);
  fi_eq_err_entry err{};
  REQUIRE(fi_eq_readerr(client.eq, &err, 0) == sizeof err);
  CHECK(err.fid == &client.ep->fid);
  CHECK(err.err == FI_ECONNREFUSED);
  CHECK(err.prov_errno == 28);
  REQUIRE(err.err_data_size >= 9);
  CHECK(std::string(static_cast<const char*>(err.err_data)) == "busy now");
  char text[64];
  CHECK(std::string(fi_eq_strerror(client.eq, err.prov_errno, err.err_data, text, sizeof text)) ==
        "CM REJ reason 28");
}

TEST_CASE(
    "ofi: a bad key is NAK 0x62 and a silent peer is retry exceeded, both as "
    "fi_cq_readerr entries",
    "[ofi]") {
  // The server's progress is manual and this test never progresses it after the connection:
  // first, though, it answers one WRITE with a bad key (NAK 0x62) while we progress it.
  Pair p(false, true);
  fi_cq_data_entry e{};
  int ctx = 0;
  REQUIRE(fi_write(p.client.ep, p.client.at(0), 100, p.client.desc(), 0, p.server.va(0),
                   fi_mr_key(p.server.mr) ^ 0x5555, &ctx) == 0);
  ssize_t r = -FI_EAGAIN;
  for (int i = 0; i < 5000 && r == -FI_EAGAIN; ++i) {
    (void)fi_cq_read(p.server.cq, &e, 1);  // progresses the (manual) server
    r = fi_cq_read(p.client.cq, &e, 1);
    if (r == -FI_EAGAIN) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(r == -FI_EAVAIL);
  fi_cq_err_entry err{};
  REQUIRE(fi_cq_readerr(p.client.cq, &err, 0) == 1);
  CHECK(err.op_context == &ctx);
  CHECK(err.err == FI_EACCES);
  CHECK(err.prov_errno == 0x62);
  char text[64];
  CHECK(std::string(fi_cq_strerror(p.client.cq, err.prov_errno, nullptr, text, sizeof text)) ==
        "NAK 0x62 (remote access error)");

  // A second connection whose server nobody progresses any more: the send is retried until the
  // retry count is used up (PROTOCOL.md 3) and completes with FI_ETIMEDOUT. Without
  // FI_NAA_PROGRESS_THREAD=0 the server's domain would acknowledge on its own thread (issue 29).
  ::setenv("FI_NAA_PROGRESS_THREAD", "0", 1);
  Pair q(false, true, 0, FI_WAIT_NONE, 5);
  ::unsetenv("FI_NAA_PROGRESS_THREAD");
  REQUIRE(fi_send(q.client.ep, q.client.at(0), 10, q.client.desc(), 0, &ctx) == 0);
  REQUIRE(read_one(q.client.cq, e, 30000) == -FI_EAVAIL);
  REQUIRE(fi_cq_readerr(q.client.cq, &err, 0) == 1);
  CHECK(err.op_context == &ctx);
  CHECK(err.err == FI_ETIMEDOUT);
}

TEST_CASE("ofi: manual progress sends what was posted while the application makes no call",
          "[ofi]") {
  // Issue 29: a manually progressed domain's NIC thread moves the wire, the transmit queue
  // included, once the application has not called in for a millisecond (ofi_rxm posts from its
  // connection handling and relies on it). Before, a post waited for the next CQ read.
  Pair p(true, false);  // server automatic (receives on its own), client manual
  int ctx = 0;
  std::memcpy(p.client.at(0), "posted, never read", 19);
  REQUIRE(fi_recv(p.server.ep, p.server.at(0), 64, p.server.desc(), 0, &ctx) == 0);
  REQUIRE(fi_send(p.client.ep, p.client.at(0), 19, p.client.desc(), 0, &ctx) == 0);
  // The server's reads do not progress the client; the client's application makes no call.
  fi_cq_data_entry e{};
  REQUIRE(read_one(p.server.cq, e) == 1);
  CHECK(e.len == 19);
  CHECK(std::memcmp(p.server.at(0), "posted, never read", 19) == 0);
  fi_cq_data_entry tx{};
  REQUIRE(read_one(p.client.cq, tx) == 1);
  CHECK(tx.op_context == &ctx);
}

TEST_CASE("ofi: automatic progress completes with nobody calling (FI_WAIT_FD, fi_trywait)",
          "[ofi]") {
  Pair p(true, true, 0, FI_WAIT_FD);
  int fd = -1;
  REQUIRE(fi_control(&p.client.cq->fid, FI_GETWAIT, &fd) == 0);
  REQUIRE(fd >= 0);
  fid* fids[] = {&p.client.cq->fid};
  CHECK(fi_trywait(p.client.fabric, fids, 1) == 0);  // nothing there: the caller may block
  int rx_ctx = 0, tx_ctx = 0;
  REQUIRE(fi_recv(p.server.ep, p.server.at(0), 64, p.server.desc(), 0, &rx_ctx) == 0);
  REQUIRE(fi_send(p.client.ep, p.client.at(0), 64, p.client.desc(), 0, &tx_ctx) == 0);
  // No libfabric call from here until the fd is readable: the provider's thread completes it.
  pollfd pfd{fd, POLLIN, 0};
  REQUIRE(::poll(&pfd, 1, 10000) == 1);
  CHECK(fi_trywait(p.client.fabric, fids, 1) == -FI_EAGAIN);
  fi_cq_data_entry e{};
  REQUIRE(fi_cq_read(p.client.cq, &e, 1) == 1);
  CHECK(e.op_context == &tx_ctx);
  REQUIRE(read_one(p.server.cq, e) == 1);
  CHECK(e.op_context == &rx_ctx);
}

TEST_CASE("ofi: a full transmit queue answers -FI_EAGAIN and loses or reorders nothing", "[ofi]") {
  constexpr std::size_t kQueue = 4;
  Pair p(true, false, kQueue);  // client manual: nothing completes until it reads its CQ
  std::array<int, kQueue + 1> rx_ctx{}, tx_ctx{};
  for (std::size_t i = 0; i <= kQueue; ++i) {
    REQUIRE(fi_recv(p.server.ep, p.server.at(i * 100), 100, p.server.desc(), 0, &rx_ctx[i]) == 0);
    std::memset(p.client.at(i * 100), static_cast<int>('a' + i), 100);
  }
  for (std::size_t i = 0; i < kQueue; ++i) {
    REQUIRE(fi_send(p.client.ep, p.client.at(i * 100), 100, p.client.desc(), 0, &tx_ctx[i]) == 0);
  }
  CHECK(fi_send(p.client.ep, p.client.at(kQueue * 100), 100, p.client.desc(), 0, &tx_ctx[kQueue]) ==
        -FI_EAGAIN);
  // Reap: the four complete in order; then the fifth goes.
  fi_cq_data_entry e{};
  for (std::size_t i = 0; i < kQueue; ++i) {
    REQUIRE(read_one(p.client.cq, e) == 1);
    CHECK(e.op_context == &tx_ctx[i]);
  }
  REQUIRE(fi_send(p.client.ep, p.client.at(kQueue * 100), 100, p.client.desc(), 0,
                  &tx_ctx[kQueue]) == 0);
  REQUIRE(read_one(p.client.cq, e) == 1);
  CHECK(e.op_context == &tx_ctx[kQueue]);
  for (std::size_t i = 0; i <= kQueue; ++i) {
    REQUIRE(read_one(p.server.cq, e) == 1);
    CHECK(e.op_context == &rx_ctx[i]);
    CHECK(p.server.at(i * 100)[0] == 'a' + i);
    CHECK(p.server.at(i * 100)[99] == 'a' + i);
  }
  CHECK(fi_cq_read(p.server.cq, &e, 1) == -FI_EAGAIN);
}

TEST_CASE("ofi: counters count completions and errors", "[ofi]") {
  Pair p(true, true);
  fid_cntr* sent = nullptr;
  fi_cntr_attr ca{};
  ca.events = FI_CNTR_EVENTS_COMP;
  REQUIRE(fi_cntr_open(p.client.domain, &ca, &sent, nullptr) == 0);
  // Counters bind before enable in libfabric; ours accept it afterwards too.
  REQUIRE(fi_ep_bind(p.client.ep, &sent->fid, FI_SEND | FI_WRITE) == 0);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(fi_recv(p.server.ep, p.server.at(0), 64, p.server.desc(), 0, nullptr) == 0);
    REQUIRE(fi_send(p.client.ep, p.client.at(0), 64, p.client.desc(), 0, nullptr) == 0);
  }
  REQUIRE(fi_cntr_wait(sent, 3, 10000) == 0);
  CHECK(fi_cntr_read(sent) == 3);
  CHECK(fi_cntr_readerr(sent) == 0);
  REQUIRE(fi_write(p.client.ep, p.client.at(0), 8, p.client.desc(), 0, p.server.va(0),
                   fi_mr_key(p.server.mr) + 1, nullptr) == 0);
  for (int i = 0; i < 10000 && fi_cntr_readerr(sent) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(fi_cntr_readerr(sent) == 1);
  fi_close(&p.client.ep->fid);
  p.client.ep = nullptr;
  CHECK(fi_close(&sent->fid) == 0);
}

// Issue 26 (thread safety), for the tsan preset: the provider's state shared between application
// threads and the transport's progress thread. Catch's assertions are not thread-safe, so the
// helper threads count failures.

TEST_CASE("ofi threads: counters bound while the progress thread completes writes", "[ofi]") {
  Pair p(true, true);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, writes{0};
  // Writes keep completing on the transport's progress thread (automatic progress), which
  // dispatches each completion to the endpoint's CQ and write counter.
  std::thread writer([&] {
    fi_cq_data_entry e{};
    while (!stop) {
      if (fi_write(p.client.ep, p.client.at(0), 64, p.client.desc(), 0, p.server.va(0),
                   fi_mr_key(p.server.mr), nullptr) != 0 ||
          read_one(p.client.cq, e) != 1) {
        ++failures;
        return;
      }
      ++writes;
    }
  });
  std::vector<fid_cntr*> counters;
  for (int i = 0; i < 20; ++i) {
    while (writes < 5 * (i + 1) && failures == 0)
      std::this_thread::yield();
    fid_cntr* c = nullptr;
    fi_cntr_attr ca{};
    ca.events = FI_CNTR_EVENTS_COMP;
    REQUIRE(fi_cntr_open(p.client.domain, &ca, &c, nullptr) == 0);
    counters.push_back(c);
    CHECK(fi_ep_bind(p.client.ep, &c->fid, FI_WRITE) == 0);
  }
  // A write that started after the last bind must have completed before the writer stops: the
  // write after the one in flight when `bound` was read began after that read, so after the bind
  // (stopping at once left the last counter at 0 when the in-flight write was the last one).
  const int bound = writes;
  while (writes < bound + 2 && failures == 0)
    std::this_thread::yield();
  stop = true;
  writer.join();
  CHECK(failures == 0);
  CHECK(fi_cntr_read(counters.back()) > 0);  // the last one bound counts the writes after it
  fi_close(&p.client.ep->fid);
  p.client.ep = nullptr;
  for (fid_cntr* c : counters)
    CHECK(fi_close(&c->fid) == 0);
}

TEST_CASE("ofi threads: endpoints close while another thread reads their event queue", "[ofi]") {
  Side s;
  fi_info* h = hints(true);
  REQUIRE(fi_getinfo(kVersion, ip(7).c_str(), nullptr, FI_SOURCE, h, &s.info) == 0);
  fi_freeinfo(h);
  s.open_fabric(s.info);
  REQUIRE(fi_domain(s.fabric, s.info, &s.domain, nullptr) == 0);
  std::atomic<bool> stop{false};
  // fi_eq_read looks at every endpoint and passive endpoint bound to the queue (for connection
  // requests and shutdowns) while this thread opens, binds and closes them.
  std::thread reader([&] {
    fi_eq_cm_entry entry{};
    std::uint32_t event = 0;
    while (!stop)
      (void)fi_eq_read(s.eq, &event, &entry, sizeof entry, 0);
  });
  for (int i = 0; i < 1000; ++i) {
    fid_ep* ep = nullptr;
    REQUIRE(fi_endpoint(s.domain, s.info, &ep, nullptr) == 0);
    REQUIRE(fi_ep_bind(ep, &s.eq->fid, 0) == 0);
    fid_pep* pep = nullptr;
    REQUIRE(fi_passive_ep(s.fabric, s.info, &pep, nullptr) == 0);
    REQUIRE(fi_pep_bind(pep, &s.eq->fid, 0) == 0);
    REQUIRE(fi_listen(pep) == 0);
    REQUIRE(fi_close(&ep->fid) == 0);
    REQUIRE(fi_close(&pep->fid) == 0);
  }
  stop = true;
  reader.join();
}
