// libfabric's conventions and what ofi_rxm needs of an FI_EP_MSG provider (issue 29), checked on
// the provider naa through the libfabric API alone: no NULL entry in any ops table of any object
// it hands out, the ops it lacks answer -FI_ENOSYS, fi_getinfo refuses what it cannot honour,
// OFI_MR_NOCACHE, FI_OPT_CM_DATA_SIZE, FI_GETWAITOBJ, fi_cq_signal, and the reliability work of
// a manually progressed domain going on while the application does not call in.
#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "ofi_side.hpp"
#include "test_addresses.hpp"

namespace {

using naa::testbench::ofi::base_hints;
using naa::testbench::ofi::expect_cm;
using naa::testbench::ofi::ip;
using naa::testbench::ofi::kPort;
using naa::testbench::ofi::kVersion;
using naa::testbench::ofi::Pair;
using naa::testbench::ofi::Side;

const int kOnlyNaa = ::setenv("FI_PROVIDER", "naa", 1);
// An ops table is { size_t size; function pointers... }: every entry up to `size` must be set,
// and the table must be as large as the libfabric the test is built against knows it.
template <class Table>
void check_table(const Table* ops, const char* name) {
  INFO(name);
  REQUIRE(ops != nullptr);
  CHECK(ops->size == sizeof(Table));
  const std::size_t n = (ops->size - sizeof(std::size_t)) / sizeof(void*);
  void* entries[64] = {};
  REQUIRE(n <= 64);
  std::memcpy(entries, reinterpret_cast<const char*>(ops) + sizeof(std::size_t), n * sizeof(void*));
  for (std::size_t i = 0; i < n; ++i) {
    INFO("entry " << i);
    CHECK(entries[i] != nullptr);
  }
}

}  // namespace

TEST_CASE("ofi conformance: no ops table of any naa object holds a NULL entry", "[ofi]") {
  fid* connreq = nullptr;
  Pair p(FI_WAIT_NONE, [&](fi_info* info) {
    REQUIRE(info->handle != nullptr);
    connreq = info->handle;
    check_table(info->handle->ops, "connection request fi_ops");
  });
  Side& s = p.server;
  check_table(s.fabric->fid.ops, "fabric fi_ops");
  check_table(s.fabric->ops, "fi_ops_fabric");
  check_table(s.domain->fid.ops, "domain fi_ops");
  check_table(s.domain->ops, "fi_ops_domain");
  check_table(s.domain->mr, "fi_ops_mr");
  check_table(s.mr->fid.ops, "MR fi_ops");
  check_table(s.cq->fid.ops, "CQ fi_ops");
  check_table(s.cq->ops, "fi_ops_cq");
  check_table(s.eq->fid.ops, "EQ fi_ops");
  check_table(s.eq->ops, "fi_ops_eq");
  check_table(s.pep->fid.ops, "PEP fi_ops");
  check_table(s.pep->ops, "PEP fi_ops_ep");
  check_table(s.pep->cm, "PEP fi_ops_cm");
  check_table(s.ep->fid.ops, "EP fi_ops");
  check_table(s.ep->ops, "EP fi_ops_ep");
  check_table(s.ep->cm, "EP fi_ops_cm");
  check_table(s.ep->msg, "fi_ops_msg");
  check_table(s.ep->rma, "fi_ops_rma");
  check_table(s.ep->tagged, "fi_ops_tagged");
  check_table(s.ep->atomic, "fi_ops_atomic");
  check_table(s.ep->collective, "fi_ops_collective");
  fid_cntr* cntr = nullptr;
  fi_cntr_attr ca{};
  ca.events = FI_CNTR_EVENTS_COMP;
  REQUIRE(fi_cntr_open(s.domain, &ca, &cntr, nullptr) == 0);
  check_table(cntr->fid.ops, "counter fi_ops");
  check_table(cntr->ops, "fi_ops_cntr");

  // What the provider lacks answers -FI_ENOSYS (what ofi_rxm's domain open relies on).
  void* ops = nullptr;
  CHECK(fi_open_ops(&s.domain->fid, "ofix_flow_ctrl_v1", 0, &ops, nullptr) == -FI_ENOSYS);
  CHECK(fi_open_ops(&s.fabric->fid, "x", 0, &ops, nullptr) == -FI_ENOSYS);
  CHECK(fi_control(&cntr->fid, FI_GETWAIT, &ops) == -FI_ENOSYS);
  CHECK(fi_mr_bind(s.mr, &s.ep->fid, 0) == -FI_ENOSYS);
  CHECK(fi_tsend(s.ep, s.buf.data(), 8, fi_mr_desc(s.mr), 0, 1, nullptr) == -FI_ENOSYS);
  fid_av* av = nullptr;
  fi_av_attr aa{};
  CHECK(fi_av_open(s.domain, &aa, &av, nullptr) == -FI_ENOSYS);
  CHECK(fi_close(&cntr->fid) == 0);
  (void)connreq;
}

TEST_CASE("ofi conformance: fi_getinfo refuses hints it cannot honour with -FI_ENODATA", "[ofi]") {
  fi_info* out = nullptr;
  {
    fi_info* h = base_hints();
    REQUIRE(fi_getinfo(kVersion, ip(1).c_str(), kPort, FI_SOURCE, h, &out) == 0);
    fi_freeinfo(out);
    fi_freeinfo(h);
  }
  struct Case {
    const char* what;
    std::function<void(fi_info&)> change;
  };
  const std::vector<Case> cases = {
      {"tagged messages", [](fi_info& h) { h.caps |= FI_TAGGED; }},
      {"an order beyond ours (FI_ORDER_ATOMIC_RAW)",
       [](fi_info& h) { h.tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_ATOMIC_RAW; }},
      {"mr_mode without FI_MR_LOCAL", [](fi_info& h) { h.domain_attr->mr_mode &= ~FI_MR_LOCAL; }},
      {"mr_mode FI_MR_UNSPEC (API 1.5+)", [](fi_info& h) { h.domain_attr->mr_mode = 0; }},
      {"FI_MR_BASIC without the FI_LOCAL_MR mode bit",
       [](fi_info& h) { h.domain_attr->mr_mode = FI_MR_BASIC; }},
      {"FI_MR_SCALABLE", [](fi_info& h) { h.domain_attr->mr_mode = FI_MR_SCALABLE; }},
      {"a domain capability we lack (FI_SHARED_AV)",
       [](fi_info& h) { h.domain_attr->caps = FI_SHARED_AV; }},
      {"shared transmit contexts", [](fi_info& h) { h.ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT; }},
      {"shared receive contexts", [](fi_info& h) { h.ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT; }},
      {"shared context counts", [](fi_info& h) { h.domain_attr->max_ep_srx_ctx = 1; }},
      {"more iovecs", [](fi_info& h) { h.tx_attr->iov_limit = 64; }},
      {"a larger inject size", [](fi_info& h) { h.tx_attr->inject_size = 1 << 20; }},
      {"buffered receives", [](fi_info& h) { h.rx_attr->total_buffered_recv = 4096; }},
      {"datagram endpoints", [](fi_info& h) { h.ep_attr->type = FI_EP_DGRAM; }},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    fi_info* h = base_hints();
    c.change(*h);
    out = nullptr;
    CHECK(fi_getinfo(kVersion, ip(1).c_str(), kPort, FI_SOURCE, h, &out) == -FI_ENODATA);
    if (out != nullptr) fi_freeinfo(out);
    fi_freeinfo(h);
  }
  // Automatic control progress with manual data progress: the EQ's CM thread, so honoured, and
  // refused when FI_NAA_PROGRESS_THREAD=0 takes that thread away.
  {
    fi_info* c = base_hints();
    c->domain_attr->control_progress = FI_PROGRESS_AUTO;
    REQUIRE(fi_getinfo(kVersion, ip(1).c_str(), kPort, FI_SOURCE, c, &out) == 0);
    CHECK(out->domain_attr->control_progress == FI_PROGRESS_AUTO);
    CHECK(out->domain_attr->data_progress == FI_PROGRESS_MANUAL);
    fi_freeinfo(out);
    ::setenv("FI_NAA_PROGRESS_THREAD", "0", 1);
    out = nullptr;
    CHECK(fi_getinfo(kVersion, ip(1).c_str(), kPort, FI_SOURCE, c, &out) == -FI_ENODATA);
    ::unsetenv("FI_NAA_PROGRESS_THREAD");
    if (out != nullptr) fi_freeinfo(out);
    fi_freeinfo(c);
  }
  // FI_MR_BASIC with FI_LOCAL_MR is the pre-1.5 way of asking for what we need: honoured.
  fi_info* h = base_hints();
  h->domain_attr->mr_mode = FI_MR_BASIC;
  h->mode |= FI_LOCAL_MR;
  REQUIRE(fi_getinfo(kVersion, ip(1).c_str(), kPort, FI_SOURCE, h, &out) == 0);
  CHECK(out->domain_attr->mr_mode == FI_MR_BASIC);
  CHECK((out->mode & FI_LOCAL_MR) != 0);
  fi_freeinfo(out);
  fi_freeinfo(h);
}

TEST_CASE(
    "ofi conformance: what ofi_rxm asks of the msg provider (MR flag, CM data size, wait "
    "objects)",
    "[ofi]") {
  Pair p(FI_WAIT_UNSPEC);
  Side& s = p.server;
  // OFI_MR_NOCACHE (libfabric's include/ofi_util.h, bit 60): rxm's bounce buffers.
  fid_mr* mr = nullptr;
  CHECK(fi_mr_reg(s.domain, s.buf.data(), 4096, FI_SEND | FI_RECV, 0, 0, 1ULL << 60, &mr,
                  nullptr) == 0);
  if (mr != nullptr) CHECK(fi_close(&mr->fid) == 0);
  mr = nullptr;
  CHECK(fi_mr_reg(s.domain, s.buf.data(), 4096, FI_SEND, 0, 0, 1ULL << 59, &mr, nullptr) ==
        -FI_EBADFLAGS);

  // FI_OPT_CM_DATA_SIZE on the passive and active endpoints: at least rxm's 24-byte connect data.
  for (fid* f : {&s.pep->fid, &s.ep->fid}) {
    std::size_t size = 0, len = sizeof size;
    REQUIRE(fi_getopt(f, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size, &len) == 0);
    CHECK(len == sizeof size);
    CHECK(size == 40);  // IRN offered by default: its block takes 16 of the 56 bytes
    size = 24;
    CHECK(fi_setopt(f, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size, sizeof size) == 0);
    size = 4096;
    CHECK(fi_setopt(f, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size, sizeof size) == -FI_EINVAL);
    CHECK(fi_getopt(f, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &size, &len) == -FI_ENOPROTOOPT);
  }

  // FI_GETWAITOBJ: FI_WAIT_UNSPEC became an fd, which FI_GETWAIT hands out; none stays none.
  fi_wait_obj obj = FI_WAIT_UNSPEC;
  REQUIRE(fi_control(&s.cq->fid, FI_GETWAITOBJ, &obj) == 0);
  CHECK(obj == FI_WAIT_FD);
  int fd = -1;
  CHECK(fi_control(&s.cq->fid, FI_GETWAIT, &fd) == 0);
  CHECK(fd >= 0);
  REQUIRE(fi_control(&p.client.cq->fid, FI_GETWAITOBJ, &obj) == 0);
  CHECK(obj == FI_WAIT_NONE);
  CHECK(fi_control(&p.client.cq->fid, FI_GETWAIT, &fd) == -FI_ENODATA);
  REQUIRE(fi_control(&s.eq->fid, FI_GETWAITOBJ, &obj) == 0);
  CHECK(obj == FI_WAIT_FD);
  CHECK(fi_control(&s.eq->fid, FI_GETWAIT, &fd) == 0);
}

TEST_CASE("ofi conformance: fi_cq_signal ends an fi_cq_sread, also one that starts after it",
          "[ofi]") {
  Pair p;
  fi_cq_data_entry e{};
  // Signalled first: the state is kept, the next sread returns -FI_EAGAIN at once, not after -1.
  REQUIRE(fi_cq_signal(p.server.cq) == 0);
  auto first =
      std::async(std::launch::async, [&] { return fi_cq_sread(p.server.cq, &e, 1, nullptr, -1); });
  REQUIRE(first.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK(first.get() == -FI_EAGAIN);
  // Signalled while a thread waits with no timeout.
  auto second =
      std::async(std::launch::async, [&] { return fi_cq_sread(p.server.cq, &e, 1, nullptr, -1); });
  for (int i = 0;
       i < 50 && second.wait_for(std::chrono::milliseconds(10)) == std::future_status::timeout;
       ++i) {
  }
  REQUIRE(fi_cq_signal(p.server.cq) == 0);
  REQUIRE(second.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK(second.get() == -FI_EAGAIN);
}

TEST_CASE("ofi conformance: manual progress, a CQ's fd wakes epoll_wait with nobody calling",
          "[ofi]") {
  Pair p(FI_WAIT_FD);
  int rx_ctx = 0, tx_ctx = 0;
  REQUIRE(fi_recv(p.server.ep, p.server.buf.data(), 64, fi_mr_desc(p.server.mr), 0, &rx_ctx) == 0);
  int fd = -1;
  REQUIRE(fi_control(&p.server.cq->fid, FI_GETWAIT, &fd) == 0);
  fid* fids[] = {&p.server.cq->fid};
  REQUIRE(fi_trywait(p.server.fabric, fids, 1) == 0);  // nothing yet: the server may block
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  REQUIRE(ep >= 0);
  epoll_event ev{};
  ev.events = EPOLLIN;
  REQUIRE(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
  std::memcpy(p.client.buf.data(), "wake up", 8);
  // The client sends and waits for its completion on another thread; this one blocks in
  // epoll_wait, as libfabric's fabtests do (fi_trywait, then epoll), and makes no libfabric call.
  auto sender = std::async(std::launch::async, [&] {
    if (fi_send(p.client.ep, p.client.buf.data(), 8, fi_mr_desc(p.client.mr), 0, &tx_ctx) != 0) {
      return ssize_t{-1};
    }
    fi_cq_data_entry e{};
    return fi_cq_sread(p.client.cq, &e, 1, nullptr, 10000);
  });
  epoll_event out{};
  const int woke = epoll_wait(ep, &out, 1, 10000);
  ::close(ep);
  CHECK(woke == 1);
  CHECK(sender.get() == 1);
  fi_cq_data_entry e{};
  REQUIRE(fi_cq_read(p.server.cq, &e, 1) == 1);
  CHECK(e.op_context == &rx_ctx);
  CHECK(std::memcmp(p.server.buf.data(), "wake up", 8) == 0);
}

namespace {

// Reads one completion of `cq`, failing with the error entry's text if it is one.
void expect_completion(fid_cq* cq, void* context, std::size_t len = 0) {
  fi_cq_data_entry e{};
  const ssize_t n = fi_cq_sread(cq, &e, 1, nullptr, 10000);
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    REQUIRE(fi_cq_readerr(cq, &err, 0) == 1);
    FAIL("error completion: " << fi_strerror(err.err));
  }
  REQUIRE(n == 1);
  CHECK(e.op_context == context);
  if (len != 0) CHECK(e.len == len);
}

}  // namespace

TEST_CASE("ofi conformance: fi_sendv, fi_recvv, fi_writev and fi_readv over four iovecs", "[ofi]") {
  Pair p;
  fi_info* info = p.client.info;
  REQUIRE(info->tx_attr->iov_limit >= 4);
  REQUIRE(info->rx_attr->iov_limit >= 4);
  std::vector<std::uint8_t>& cb = p.client.buf;
  std::vector<std::uint8_t>& sb = p.server.buf;
  for (std::size_t i = 0; i < cb.size(); ++i)
    cb[i] = static_cast<std::uint8_t>(i * 31 + 7);
  // Four pieces of the client's buffer, of odd sizes and out of order, with a multi-packet one.
  const std::array<std::pair<std::size_t, std::size_t>, 4> pieces = {
      {{30000, 5000}, {100, 1}, {0, 9000}, {12000, 333}}};
  std::array<iovec, 4> tx_iov{};
  std::array<void*, 4> tx_desc{};
  std::vector<std::uint8_t> expect;
  for (std::size_t i = 0; i < 4; ++i) {
    tx_iov[i] = {cb.data() + pieces[i].first, pieces[i].second};
    tx_desc[i] = fi_mr_desc(p.client.mr);
    expect.insert(expect.end(), cb.begin() + static_cast<std::ptrdiff_t>(pieces[i].first),
                  cb.begin() + static_cast<std::ptrdiff_t>(pieces[i].first + pieces[i].second));
  }
  const std::size_t total = expect.size();  // 14334 bytes
  // The server receives into four iovecs of other sizes.
  const std::array<std::size_t, 4> rx_len = {7000, 3, 7000, 1000};
  std::array<iovec, 4> rx_iov{};
  std::array<void*, 4> rx_desc{};
  std::size_t at = 40000;
  for (std::size_t i = 0; i < 4; ++i) {
    rx_iov[i] = {sb.data() + at, rx_len[i]};
    rx_desc[i] = fi_mr_desc(p.server.mr);
    at += rx_len[i] + 17;
  }
  int rx_ctx = 0, tx_ctx = 0;
  REQUIRE(fi_recvv(p.server.ep, rx_iov.data(), rx_desc.data(), 4, 0, &rx_ctx) == 0);
  REQUIRE(fi_sendv(p.client.ep, tx_iov.data(), tx_desc.data(), 4, 0, &tx_ctx) == 0);
  expect_completion(p.client.cq, &tx_ctx);
  expect_completion(p.server.cq, &rx_ctx, total);
  std::vector<std::uint8_t> got;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto* b = static_cast<const std::uint8_t*>(rx_iov[i].iov_base);
    got.insert(got.end(), b, b + rx_iov[i].iov_len);
  }
  got.resize(total);
  CHECK(got == expect);

  // fi_writev: the four pieces land back to back at the server's offset 0.
  REQUIRE(fi_writev(p.client.ep, tx_iov.data(), tx_desc.data(), 4, 0,
                    reinterpret_cast<std::uint64_t>(sb.data()), fi_mr_key(p.server.mr),
                    &tx_ctx) == 0);
  expect_completion(p.client.cq, &tx_ctx);
  CHECK(std::memcmp(sb.data(), expect.data(), total) == 0);

  // fi_readv: the same bytes read back into four other iovecs of the client's buffer.
  const std::array<std::size_t, 4> rd_len = {1, 8000, 6000, 333};
  std::array<iovec, 4> rd_iov{};
  at = 50000;
  for (std::size_t i = 0; i < 4; ++i) {
    rd_iov[i] = {cb.data() + at, rd_len[i]};
    at += rd_len[i] + 5;
  }
  REQUIRE(fi_readv(p.client.ep, rd_iov.data(), tx_desc.data(), 4, 0,
                   reinterpret_cast<std::uint64_t>(sb.data()), fi_mr_key(p.server.mr),
                   &tx_ctx) == 0);
  expect_completion(p.client.cq, &tx_ctx);
  got.clear();
  for (std::size_t i = 0; i < 4; ++i) {
    const auto* b = static_cast<const std::uint8_t*>(rd_iov[i].iov_base);
    got.insert(got.end(), b, b + rd_iov[i].iov_len);
  }
  CHECK(got == expect);

  // More iovecs than iov_limit: refused, nothing sent.
  std::array<iovec, 5> five{};
  for (auto& v : five)
    v = {cb.data(), 1};
  CHECK(fi_sendv(p.client.ep, five.data(), nullptr, 5, 0, &tx_ctx) == -FI_EINVAL);
}

TEST_CASE("ofi conformance: fi_inject of a full MTU payload", "[ofi]") {
  Pair p;
  REQUIRE(p.client.info->tx_attr->inject_size >= 4096);
  std::vector<std::uint8_t> msg(4096);
  for (std::size_t i = 0; i < msg.size(); ++i)
    msg[i] = static_cast<std::uint8_t>(i ^ 0x5A);
  int rx_ctx = 0;
  REQUIRE(fi_recv(p.server.ep, p.server.buf.data(), 8192, fi_mr_desc(p.server.mr), 0, &rx_ctx) ==
          0);
  REQUIRE(fi_inject(p.client.ep, msg.data(), msg.size(), 0) == 0);
  std::fill(msg.begin(), msg.end(), 0);  // the buffer is the caller's again at once
  fi_cq_data_entry e{};
  (void)fi_cq_read(p.client.cq, &e, 1);  // submits (manual progress)
  expect_completion(p.server.cq, &rx_ctx, 4096);
  for (std::size_t i = 0; i < 4096; ++i) {
    if (p.server.buf[i] != static_cast<std::uint8_t>(i ^ 0x5A)) FAIL("byte " << i);
  }
  CHECK(fi_inject(p.client.ep, msg.data(), 4097, 0) == -FI_EMSGSIZE);
}

TEST_CASE("ofi conformance: FI_NAA_IRN=1 offers IRN (the NAAX block on the wire) and carries data",
          "[ofi]") {
  const bool irn = GENERATE(false, true);
  INFO("FI_NAA_IRN=" << irn);
  char dir[] = "/tmp/naa-ofi-irn-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string prefix = std::string(dir) + "/cap";
  ::setenv("FI_NAA_IRN", irn ? "1" : "0", 1);
  ::setenv("FI_NAA_PCAP", prefix.c_str(), 1);
  {
    Pair p;
    ::unsetenv("FI_NAA_IRN");
    ::unsetenv("FI_NAA_PCAP");
    // The IRN capability block rides in the REQ's private data (docs/protocol.md 8.1).
    std::size_t size = 0, len = sizeof size;
    REQUIRE(fi_getopt(&p.client.ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size, &len) == 0);
    CHECK(size == (irn ? 40u : 56u));
    REQUIRE(fi_getopt(&p.server.pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size, &len) == 0);
    CHECK(size == (irn ? 40u : 56u));
    for (std::size_t i = 0; i < 60000; ++i)
      p.client.buf[i] = static_cast<std::uint8_t>(i * 3 + 11);
    int rx_ctx = 0, tx_ctx = 0;
    REQUIRE(fi_recv(p.server.ep, p.server.buf.data(), 60000, fi_mr_desc(p.server.mr), 0, &rx_ctx) ==
            0);
    REQUIRE(fi_send(p.client.ep, p.client.buf.data(), 60000, fi_mr_desc(p.client.mr), 0, &tx_ctx) ==
            0);
    expect_completion(p.client.cq, &tx_ctx);
    expect_completion(p.server.cq, &rx_ctx, 60000);
    CHECK(std::memcmp(p.server.buf.data(), p.client.buf.data(), 60000) == 0);
  }
  // The captures (both transports, closed with the Pair): the block's magic "NAAX" is on the wire
  // exactly when FI_NAA_IRN=1 (the host library's UdpRoceOptions::irn got the variable).
  bool magic = false;
  int files = 0;
  for (int n = 0; n < 8; ++n) {
    const std::string path = prefix + "-" + std::to_string(n) + ".pcap";
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) continue;
    ++files;
    std::vector<char> bytes;
    char chunk[4096];
    for (std::size_t got = 0; (got = std::fread(chunk, 1, sizeof chunk, f)) > 0;)
      bytes.insert(bytes.end(), chunk, chunk + got);
    std::fclose(f);
    std::remove(path.c_str());
    const std::string text(bytes.begin(), bytes.end());
    if (text.find("NAAX") != std::string::npos) magic = true;
  }
  ::rmdir(dir);
  CHECK(files == 2);
  CHECK(magic == irn);
}
