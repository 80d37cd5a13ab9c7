// Many endpoints on one IPv4 address (UdpRoceOptions::share_address, docs/adr/0006): three
// endpoints share .31 and three share .32 of the test's block; each sharing endpoint is a socket
// of the address's SO_REUSEPORT group, as each process of a host would be, and the group's cBPF
// program must deliver every datagram to the endpoint that owns its destination QPN (REQs to the
// listener of their port, other CM MADs by comm ID). Raw datagrams from .33 check the steering
// one endpoint at a time, and a seccomp filter in a child process plays a kernel without
// SO_ATTACH_REUSEPORT_CBPF.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <future>
#include <random>
#include <set>
#include <thread>

#include "eventually.hpp"
#include "naa/host/error.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"
#include "seed.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::Errc;
namespace host = naa::host;
namespace protocol = naa::protocol;
using naa::testbench::test_addresses;

namespace {

constexpr std::size_t kSharers = 3;

std::shared_ptr<host::Transport> open_shared(int n, std::error_code& ec, std::string& detail) {
  host::UdpRoceOptions o;
  o.local_ip = test_addresses().ip_u32(n);
  o.share_address = true;
  return host::open_udp_roce(o, ec, &detail);
}

std::shared_ptr<host::Transport> open_shared(int n) {
  std::error_code ec;
  std::string detail;
  auto t = open_shared(n, ec, detail);
  INFO(detail);
  REQUIRE(t);
  return t;
}

struct Buffer {
  std::vector<std::uint8_t> bytes;
  host::MemoryRegion mr;
  bool registered = false;  // no Catch2 assertion here: it runs on the exchanges' threads
  void allocate(host::Transport& t, std::size_t n) {
    bytes.assign(n, 0);
    registered = !t.register_memory(bytes.data(), n, host::Access::local_write, mr);
  }
  host::Sge sge(std::uint32_t len, std::size_t off) const {
    return {reinterpret_cast<std::uint64_t>(bytes.data() + off), len, mr.lkey};
  }
};

// A connected pair: `active` on one transport connected to `passive` listening on `port`. The
// buffers are declared before the QPs, so they outlive them (receives may still be posted).
struct Link {
  std::shared_ptr<host::Transport> a_transport, p_transport;
  Buffer a_out, a_in, p_out, p_in;
  std::unique_ptr<host::QueuePair> active, passive;
};

std::unique_ptr<Link> connect(std::shared_ptr<host::Transport> from,
                              std::shared_ptr<host::Transport> to, std::uint16_t port) {
  auto l = std::make_unique<Link>();
  l->a_transport = from;
  l->p_transport = to;
  host::ConnectParams p;
  p.remote_ip = to->local_ip();
  p.cm_port = port;
  auto fut = std::async(std::launch::async, [&] {
    std::error_code ec;
    std::string detail;
    auto qp = from->connect(p, ec, &detail);
    return std::make_tuple(std::move(qp), ec, detail);
  });
  auto req = host::udp_roce_next_request(*to, 5s);
  REQUIRE(req);
  std::error_code ec;
  std::string detail;
  l->passive = host::udp_roce_accept(*to, req->id, {}, ec, &detail);
  INFO(detail);
  REQUIRE(l->passive);
  auto [qp, cec, cdetail] = fut.get();
  INFO(cdetail);
  REQUIRE_FALSE(cec);
  l->active = std::move(qp);
  return l;
}

// `count` messages of `size` random bytes each way over the link (both QPs polled by this one
// thread: a QP's completions of both directions come from one queue); true if every byte arrived.
bool exchange(Link& l, std::uint64_t seed, std::size_t count, std::uint32_t size) {
  const std::size_t total = std::size_t{size} * count;
  l.a_out.allocate(*l.a_transport, total);
  l.a_in.allocate(*l.a_transport, total);
  l.p_out.allocate(*l.p_transport, total);
  l.p_in.allocate(*l.p_transport, total);
  if (!l.a_out.registered || !l.a_in.registered || !l.p_out.registered || !l.p_in.registered) {
    return false;
  }
  std::mt19937_64 rng(seed);
  for (auto& b : l.a_out.bytes)
    b = static_cast<std::uint8_t>(rng());
  for (auto& b : l.p_out.bytes)
    b = static_cast<std::uint8_t>(rng());
  for (std::size_t i = 0; i < count; ++i) {
    if (l.active->post_recv({i, l.a_in.sge(size, size * i)}) ||
        l.passive->post_recv({i, l.p_in.sge(size, size * i)})) {
      return false;
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    host::SendWr wr;
    wr.wr_id = i;
    wr.sge = l.a_out.sge(size, size * i);
    if (l.active->post_send(wr)) return false;
    wr.sge = l.p_out.sge(size, size * i);
    if (l.passive->post_send(wr)) return false;
  }
  std::size_t done = 0;  // 4 completions per message: a send and a receive on each side
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (done < 4 * count && std::chrono::steady_clock::now() < deadline) {
    for (host::QueuePair* qp : {l.active.get(), l.passive.get()}) {
      host::WorkCompletion wc;
      while (qp->wait_cq(std::span(&wc, 1), 1ms) == 1) {
        if (wc.status) return false;
        if (wc.opcode == host::WcOpcode::recv && wc.byte_len != size) return false;
        ++done;
      }
    }
  }
  return done == 4 * count && l.a_in.bytes == l.p_out.bytes && l.p_in.bytes == l.a_out.bytes;
}

// An RC SEND ONLY for `qpn` on `to`:4791, from a plain socket on `from` (PROTOCOL.md 1: DF, so
// the IPv4 ID is 0 and the ICRC verifies).
void send_raw(std::uint32_t from, std::uint32_t to, std::uint32_t qpn) {
  protocol::PacketHeaders h;
  h.bth.opcode = protocol::opcode::kSendOnly;
  h.bth.dest_qpn = qpn;
  const std::array<std::uint8_t, 8> payload{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<std::uint8_t> buf(protocol::packet_size(h, payload.size()));
  auto n = protocol::encode_packet(h, payload, buf);
  REQUIRE(n);
  const std::uint16_t src_port = 50000;
  protocol::write_icrc(protocol::make_roce_headers(from, src_port, to, *n),
                       protocol::MutableByteView(buf.data(), *n));
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  int df = IP_PMTUDISC_DO;
  REQUIRE(::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &df, sizeof df) == 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(src_port);
  a.sin_addr.s_addr = htonl(from);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  a.sin_port = htons(protocol::kRoceUdpPort);
  a.sin_addr.s_addr = htonl(to);
  CHECK(::sendto(fd, buf.data(), *n, 0, reinterpret_cast<sockaddr*>(&a), sizeof a) ==
        static_cast<ssize_t>(*n));
  ::close(fd);
}

std::uint64_t unknown_qp_drops(const std::vector<std::shared_ptr<host::Transport>>& ts) {
  std::uint64_t n = 0;
  for (const auto& t : ts)
    n += t->stats().dropped_unknown_qp;
  return n;
}

// For each endpoint of `sharers` (slot[k] its slot) a datagram for a QPN of its range that it
// never handed out: only that endpoint may count it as an unknown QP, four rounds.
void check_steering(const std::vector<std::shared_ptr<host::Transport>>& sharers,
                    const std::vector<std::uint32_t>& slot, std::uint32_t from, std::uint32_t to) {
  for (int round = 0; round < 4; ++round) {
    for (std::size_t k = 0; k < sharers.size(); ++k) {
      std::vector<std::uint64_t> before;
      for (const auto& t : sharers)
        before.push_back(t->stats().dropped_unknown_qp);
      const std::uint64_t total = unknown_qp_drops(sharers);
      send_raw(from, to, slot[k] << 16 | 0xFFF0);
      REQUIRE(
          naa::testbench::eventually([&] { return unknown_qp_drops(sharers) == total + 1; }, 5s));
      for (std::size_t j = 0; j < sharers.size(); ++j) {
        INFO("datagram for slot " << slot[k] << ", endpoint " << j);
        CHECK(sharers[j]->stats().dropped_unknown_qp == before[j] + (j == k ? 1 : 0));
      }
    }
  }
}

}  // namespace

TEST_CASE(
    "shared address: three endpoints per address, each with its own peer, concurrently, "
    "every byte checked",
    "[shared_address]") {
  std::vector<std::shared_ptr<host::Transport>> a, b;
  for (std::size_t k = 0; k < kSharers; ++k) {
    a.push_back(open_shared(31));
    b.push_back(open_shared(32));
  }
  for (std::size_t k = 0; k < kSharers; ++k) {
    CHECK(a[k]->local_ip() == test_addresses().ip_u32(31));
    // Each .31 endpoint listens on its own port: REQs are steered by it.
    REQUIRE_FALSE(host::udp_roce_listen(*a[k], static_cast<std::uint16_t>(7471 + k)));
  }
  // A port is the address's, not the endpoint's.
  CHECK(host::udp_roce_listen(*a[1], 7471) == Errc::address_in_use);

  // b[k] -> a[k] across addresses (REQ by port on .31, REP by comm ID on .32), and a[0] -> a[1]
  // within .31 (both ends behind the same group).
  std::vector<std::unique_ptr<Link>> links;
  for (std::size_t k = 0; k < kSharers; ++k) {
    links.push_back(connect(b[k], a[k], static_cast<std::uint16_t>(7471 + k)));
  }
  REQUIRE_FALSE(host::udp_roce_listen(*a[1], 7480));
  links.push_back(connect(a[0], a[1], 7480));
  // Every QPN carries its endpoint's slot (top byte), distinct per address.
  std::set<std::uint32_t> slots_a, slots_b;
  for (std::size_t k = 0; k < kSharers; ++k) {
    slots_a.insert(links[k]->passive->qp_num() >> 16);
    slots_b.insert(links[k]->active->qp_num() >> 16);
  }
  CHECK(slots_a.size() == kSharers);
  CHECK(slots_b.size() == kSharers);
  CHECK_FALSE(slots_a.contains(0));

  const std::uint64_t seed = naa::testbench::seed_for("shared address streams");
  std::vector<std::future<bool>> results;
  for (std::size_t i = 0; i < links.size(); ++i) {
    Link& l = *links[i];
    results.push_back(
        std::async(std::launch::async, [&l, seed, i] { return exchange(l, seed + i, 64, 5000); }));
  }
  for (auto& r : results)
    CHECK(r.get());
  // Nothing reached an endpoint that does not own it.
  CHECK(unknown_qp_drops(a) == 0);
  CHECK(unknown_qp_drops(b) == 0);
}

TEST_CASE(
    "shared address: a datagram reaches exactly the endpoint owning its QPN, and one for a QPN "
    "nobody owns is dropped and counted once",
    "[shared_address]") {
  std::vector<std::shared_ptr<host::Transport>> a;
  for (std::size_t k = 0; k < kSharers; ++k)
    a.push_back(open_shared(34));
  for (std::size_t k = 0; k < kSharers; ++k) {
    REQUIRE_FALSE(host::udp_roce_listen(*a[k], static_cast<std::uint16_t>(7471 + k)));
  }
  auto peer = open_shared(35);
  // The slot of a[k]: its QP's top byte.
  std::vector<std::uint32_t> slot(kSharers);
  std::vector<std::unique_ptr<Link>> links;
  for (std::size_t k = 0; k < kSharers; ++k) {
    links.push_back(connect(peer, a[k], static_cast<std::uint16_t>(7471 + k)));
    slot[k] = links.back()->passive->qp_num() >> 16;
  }
  const std::uint32_t from = test_addresses().ip_u32(33);
  const std::uint32_t to = test_addresses().ip_u32(34);
  check_steering(a, slot, from, to);
  // A slot nobody holds, and a QPN below every slot's range: the kernel's hash picks one
  // endpoint, which drops and counts it, once.
  const std::uint64_t total = unknown_qp_drops(a);
  send_raw(from, to, 0xEE0011);
  send_raw(from, to, 0x000123);
  REQUIRE(naa::testbench::eventually([&] { return unknown_qp_drops(a) == total + 2; }, 5s));
  std::this_thread::sleep_for(50ms);
  CHECK(unknown_qp_drops(a) == total + 2);
}

TEST_CASE(
    "shared address: a leaver's place goes to the others, and exclusive and shared endpoints "
    "exclude each other",
    "[shared_address]") {
  auto first = open_shared(36);
  auto second = open_shared(36);
  auto third = open_shared(36);
  REQUIRE_FALSE(host::udp_roce_listen(*second, 7471));
  REQUIRE_FALSE(host::udp_roce_listen(*third, 7472));
  // The first leaves: the kernel moves the third into its index, and the program follows.
  first.reset();
  auto peer = open_shared(37);
  auto to_second = connect(peer, second, 7471);
  auto to_third = connect(peer, third, 7472);
  CHECK(exchange(*to_third, naa::testbench::seed_for("leaver"), 16, 4000));
  // A REQ for a port nobody on the address listens on: one endpoint (the kernel's hash) answers
  // REJ reason 8, as a lone endpoint does.
  host::ConnectParams nobody;
  nobody.remote_ip = test_addresses().ip_u32(36);
  nobody.cm_port = 7499;
  std::error_code rec;
  std::string rdetail;
  CHECK_FALSE(peer->connect(nobody, rec, &rdetail));
  INFO(rdetail);
  CHECK(rec == Errc::connection_refused);
  check_steering({second, third},
                 {to_second->passive->qp_num() >> 16, to_third->passive->qp_num() >> 16},
                 test_addresses().ip_u32(33), test_addresses().ip_u32(36));
  // An endpoint that does not share cannot take the address, nor a sharer one held alone.
  host::UdpRoceOptions alone;
  alone.local_ip = test_addresses().ip_u32(36);
  std::error_code ec;
  std::string detail;
  CHECK_FALSE(host::open_udp_roce(alone, ec, &detail));
  CHECK(ec == Errc::address_in_use);
  alone.local_ip = test_addresses().ip_u32(38);
  auto exclusive = host::open_udp_roce(alone, ec, &detail);
  REQUIRE(exclusive);
  CHECK_FALSE(open_shared(38, ec, detail));
  CHECK(ec == Errc::address_in_use);
  INFO(detail);
  CHECK(detail.find("does not share") != std::string::npos);
  // share_address names the address to share.
  host::UdpRoceOptions nowhere;
  nowhere.share_address = true;
  CHECK_FALSE(host::open_udp_roce(nowhere, ec, &detail));
  CHECK(ec == Errc::invalid_argument);
}

TEST_CASE("shared address: without SO_ATTACH_REUSEPORT_CBPF the endpoint refuses with the reason",
          "[shared_address]") {
  (void)test_addresses();  // claimed by the parent, inherited by the child
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // A seccomp filter makes setsockopt(SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF) fail with
    // ENOPROTOOPT, as on a kernel without it (before 4.5) or in a sandbox that filters it.
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setsockopt, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SO_ATTACH_REUSEPORT_CBPF, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOPROTOOPT),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(std::size(filter)), filter};
    std::string result = "seccomp unavailable";
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0) {
      std::error_code ec;
      std::string detail;
      auto t = open_shared(39, ec, detail);
      result =
          t ? "opened" : std::string(host::errc_name(static_cast<Errc>(ec.value()))) + " " + detail;
    }
    (void)!::write(pipe_fds[1], result.data(), result.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string result;
  char chunk[512];
  ssize_t n = 0;
  while ((n = ::read(pipe_fds[0], chunk, sizeof chunk)) > 0)
    result.append(chunk, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO(result);
  CHECK(result.rfind("not_supported", 0) == 0);
  CHECK(result.find("SO_ATTACH_REUSEPORT_CBPF") != std::string::npos);
  CHECK(result.find("Protocol not available") != std::string::npos);
  // The refused endpoint left nothing behind: the address can be shared at once.
  auto t = open_shared(39);
  CHECK(t);
}

TEST_CASE(
    "shared address: a killed process's place is found by the next joiner, which steers around "
    "it",
    "[shared_address]") {
  (void)test_addresses();  // claimed before the fork: the child inherits the block's lock
  int go[2];
  int ready[2];
  REQUIRE(::pipe(go) == 0);
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();  // before any endpoint: the child starts without the parent's threads
  REQUIRE(pid >= 0);
  if (pid == 0) {
    char c = 0;
    (void)!::read(go[0], &c, 1);
    std::error_code ec;
    std::string detail;
    auto t = open_shared(40, ec, detail);
    c = t ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();  // until SIGKILL: it never leaves the group cleanly
    ::_exit(0);
  }
  ::close(go[0]);
  ::close(ready[1]);
  // Join order: first (here), the child, third (here).
  auto first = open_shared(40);
  char c = 'g';
  REQUIRE(::write(go[1], &c, 1) == 1);
  REQUIRE(::read(ready[0], &c, 1) == 1);
  CHECK(c == 'y');
  auto third = open_shared(40);
  // Killed: the kernel closes its socket and moves the third into its index; nobody rewrote the
  // program, so the next joiner must find the dead slot (its lock is free) and fix the table.
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  auto fourth = open_shared(40);
  std::vector<std::shared_ptr<host::Transport>> sharers{first, third, fourth};
  auto peer = open_shared(41);
  std::vector<std::uint32_t> slot;
  std::vector<std::unique_ptr<Link>> links;
  for (std::size_t k = 0; k < sharers.size(); ++k) {
    const auto port = static_cast<std::uint16_t>(7471 + k);
    REQUIRE_FALSE(host::udp_roce_listen(*sharers[k], port));
    links.push_back(connect(peer, sharers[k], port));
    slot.push_back(links.back()->passive->qp_num() >> 16);
  }
  check_steering(sharers, slot, test_addresses().ip_u32(33), test_addresses().ip_u32(40));
  ::close(go[1]);
  ::close(ready[0]);
}
