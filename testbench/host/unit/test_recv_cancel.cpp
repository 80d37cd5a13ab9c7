#include <algorithm>
// QueuePair::cancel_recv on a UdpRoce RC QP (issue 29: libfabric's fi_cancel on posted receives),
// against the scripted fake peer (fake_peer.hpp): a cancelled receive is skipped by the next
// SEND, which lands in the receive posted after it; a receive a multi-packet SEND is filling is
// busy and completes; an unknown or completed wr_id is invalid_argument.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <vector>

#include "eventually.hpp"
#include "fake_peer.hpp"
#include "naa/host/error.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/headers.hpp"
#include "naa/protocol/opcode.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::Errc;
using naa::testbench::FakePeer;
namespace host = naa::host;
namespace protocol = naa::protocol;
namespace op = protocol::opcode;

namespace {

struct CancelRig {
  std::unique_ptr<FakePeer> peer;
  std::shared_ptr<host::Transport> ep;
  std::unique_ptr<host::QueuePair> qp;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1 << 16);
  host::MemoryRegion mr;

  CancelRig() {
    FakePeer::Options po;
    po.ip = naa::testbench::test_addresses().ip_u32(101);
    peer = std::make_unique<FakePeer>(po);
    host::UdpRoceOptions o;
    o.local_ip = naa::testbench::test_addresses().ip_u32(1);
    std::error_code ec;
    std::string detail;
    ep = host::open_udp_roce(o, ec, &detail);
    INFO(detail);
    REQUIRE(ep);
    REQUIRE_FALSE(ep->register_memory(buf.data(), buf.size(), host::Access::local_write, mr));
    host::ConnectParams params;
    params.remote_ip = po.ip;
    params.path_mtu = 512;
    params.timeout = 2000ms;
    qp = ep->connect(params, ec, &detail);
    INFO(detail);
    REQUIRE_FALSE(ec);
    REQUIRE(qp);
  }

  void post(std::uint64_t wr_id, std::size_t off, std::uint32_t len) {
    REQUIRE_FALSE(qp->post_recv(
        host::RecvWr{wr_id, {reinterpret_cast<std::uint64_t>(buf.data() + off), len, mr.lkey}}));
  }

  // One SEND packet of `opcode` from the peer, answered (ACK requested) before this returns.
  void send(std::uint8_t opcode, std::uint32_t psn, const std::vector<std::uint8_t>& payload) {
    protocol::PacketHeaders h;
    h.bth.opcode = opcode;
    h.bth.psn = psn & 0xFFFFFF;
    h.bth.ack_req = true;
    peer->send_raw(h, payload);
    const auto r = peer->next_response(2000ms);
    REQUIRE(r);
    REQUIRE(r->headers.aeth);
    CHECK(r->headers.aeth->syndrome == protocol::kAethAck);
  }

  host::WorkCompletion wait_one() {
    host::WorkCompletion wc;
    REQUIRE(qp->wait_cq(std::span(&wc, 1), naa::testbench::kLivenessLimit) == 1);
    return wc;
  }
};

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::uint8_t>(seed + i * 13);
  return v;
}

}  // namespace

TEST_CASE("cancel_recv: a cancelled receive is skipped, the next SEND lands in the one after it") {
  CancelRig rig;
  rig.post(1, 0, 4096);
  rig.post(2, 4096, 4096);
  rig.post(3, 8192, 4096);
  CHECK_FALSE(rig.qp->cancel_recv(2));
  CHECK(rig.qp->cancel_recv(2) == make_error_code(Errc::invalid_argument));  // already gone
  CHECK(rig.qp->cancel_recv(99) == make_error_code(Errc::invalid_argument));
  const std::uint32_t psn = rig.peer->host_start_psn();
  const auto a = pattern(300, 1), b = pattern(200, 2);
  rig.send(op::kSendOnly, psn, a);
  rig.send(op::kSendOnly, psn + 1, b);
  host::WorkCompletion wc = rig.wait_one();
  CHECK(wc.wr_id == 1);
  CHECK_FALSE(wc.status);
  CHECK(wc.byte_len == 300);
  wc = rig.wait_one();
  CHECK(wc.wr_id == 3);
  CHECK_FALSE(wc.status);
  CHECK(wc.byte_len == 200);
  CHECK(std::memcmp(rig.buf.data(), a.data(), a.size()) == 0);
  CHECK(std::memcmp(rig.buf.data() + 8192, b.data(), b.size()) == 0);
  CHECK(std::all_of(rig.buf.begin() + 4096, rig.buf.begin() + 8192, [](auto x) { return x == 0; }));
  CHECK(rig.qp->cancel_recv(1) == make_error_code(Errc::invalid_argument));  // completed
  host::WorkCompletion extra;
  CHECK(rig.qp->wait_cq(std::span(&extra, 1), 50ms) == 0);  // the cancel completes nothing
}

TEST_CASE("cancel_recv: a receive a multi-packet SEND is filling is busy and still completes") {
  CancelRig rig;
  rig.post(7, 0, 4096);
  rig.post(8, 4096, 4096);
  const std::uint32_t psn = rig.peer->host_start_psn();
  const auto msg = pattern(700, 5);
  rig.send(op::kSendFirst, psn, {msg.begin(), msg.begin() + 512});
  CHECK(rig.qp->cancel_recv(7) == make_error_code(Errc::busy));
  CHECK_FALSE(rig.qp->cancel_recv(8));  // not the one being filled
  rig.send(op::kSendLast, psn + 1, {msg.begin() + 512, msg.end()});
  const host::WorkCompletion wc = rig.wait_one();
  CHECK(wc.wr_id == 7);
  CHECK_FALSE(wc.status);
  CHECK(wc.byte_len == 700);
  CHECK(std::memcmp(rig.buf.data(), msg.data(), msg.size()) == 0);
}
