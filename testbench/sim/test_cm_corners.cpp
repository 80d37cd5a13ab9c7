// naa-sim integration tests of the CM corner cases (PROTOCOL.md 4): duplicate REQ, half-open
// expiry, the first data packet as RTU, and a kernel outliving its connection. The NAA's RC
// requester is tested in test_requester_cm.cpp. Every test asserts packets, bytes and naa-sim
// counters. Addresses: the test's block (test_addresses.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "naa/protocol/immediate.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "peer.hpp"
#include "sim_tests.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;

namespace {

constexpr std::uint8_t kInOut = p::kMrspFlagInput | p::kMrspFlagOutput;
constexpr std::uint8_t kAdd1 = 1;

}  // namespace

TEST_CASE("CM: a duplicate REQ gets the same REP and no second QP", "[sim][cm]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  peer.send_req(c, TestPeer::ConnectOptions{});
  const auto rep1 = peer.wait_rep(c);
  REQUIRE(rep1);
  // The client's CM did not see the REP and retries the REQ (same comm ID, QPN, TID).
  peer.resend_req(c);
  const auto rep2 = peer.wait_rep(c);
  REQUIRE(rep2);
  CHECK(rep2->local_qpn == rep1->local_qpn);
  CHECK(rep2->starting_psn == rep1->starting_psn);
  CHECK(rep2->local_comm_id == rep1->local_comm_id);
  CHECK(*rep2 == *rep1);
  auto s = naa.stats_text();
  CHECK(st(s, "cm.req") == 2);
  CHECK(st(s, "cm.rep") == 1);
  CHECK(st(s, "cm.dup_req") == 1);
  CHECK(st(s, "cm.connections") == 1);
  peer.send_rtu(c);
  // After the RTU, too.
  peer.resend_req(c);
  const auto rep3 = peer.wait_rep(c);
  REQUIRE(rep3);
  CHECK(*rep3 == *rep1);
  // The one connection works, with the PSNs of that REP.
  const auto regs = peer.mrsp(c, {entry(kInOut, 0x1000, 32, c)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const auto imm = peer.call(c, *regs, {{0, std::vector<std::uint8_t>(32, 4)}}, kAdd1);
  REQUIRE(imm);
  CHECK(*imm == p::encode_result_immediate(kAdd1, 0));
  CHECK(all_equal(c.host_mem, 0, 32, 5));
  s = naa.stats_text();
  CHECK(st(s, "cm.dup_req") == 2);
  CHECK(st(s, "cm.connections") == 1);
  CHECK(st(s, "transport.nak_sent.sequence") == 0);
  peer.disconnect(c);
  CHECK(naa.stat("cm.connections") == 0);
}

TEST_CASE("CM: a half-open connection (no RTU, no data) expires and frees its QP", "[sim][cm]") {
  SimAndPeer rig({"--qps", "1"});
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.send_rtu = false;
  o.remote_cm_response_timeout = 8;  // 1 ms x (1 + 1) retries x 2 -> the 100 ms floor
  o.max_cm_retries = 1;
  REQUIRE(peer.connect(c, o) == 0);
  CHECK(naa.stat("cm.connections") == 1);
  Connection other;
  CHECK(peer.connect(other) == p::kCmRejConsumerDefined);  // the half-open one holds the QP
  // A well-formed packet to that QP from another address is not valid data for it: it does
  // not count as the RTU.
  {
    TestPeer intruder(peer_address(3), naa_address());
    p::PacketHeaders h;
    h.bth.opcode = p::opcode::kSendOnly;
    h.bth.dest_qpn = c.naa_qpn;
    h.bth.psn = c.send_psn;
    const std::vector<std::uint8_t> payload = {1, 2, 3, 4};
    intruder.send_packet(h, payload);
  }
  CHECK(wait_stat(naa, "cm.connections", 0) == 0);
  const auto s = naa.stats_text();
  CHECK(st(s, "sim.time_ns") >= 100'000'000);  // the expiry's 100 ms, in simulated time
  CHECK(st(s, "cm.half_open_expired") == 1);
  CHECK(st(s, "cm.established_by_data") == 0);
  CHECK(st(s, "transport.drop.wrong_peer") == 1);
  // Data for the expired QP is dropped, never answered.
  c.acks.clear();
  std::vector<std::uint8_t> msg(p::mrsp_request_size(1));
  const std::vector<p::MrspRequestEntry> req = {entry(kInOut, 0x1000, 32, c)};
  REQUIRE(p::encode_mrsp_request(req, msg));
  (void)peer.post_send(c, msg);
  CHECK(wait_stat(naa, "transport.drop.unknown_qp", 1) == 1);  // arrived, and dropped
  peer.drain(Ms(100));
  CHECK(c.acks.empty());
  CHECK(c.completions.empty());
  // The only QP is free again.
  Connection d;
  REQUIRE(peer.connect(d) == 0);
  const auto regs = peer.mrsp(d, {entry(kInOut, 0x1000, 32, d)});
  REQUIRE(regs);
  CHECK_FALSE(regs->error);
  peer.disconnect(d);
}

TEST_CASE("CM: the first valid data packet counts as the RTU", "[sim][cm]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.send_rtu = false;  // the RTU is lost
  o.remote_cm_response_timeout = 8;
  o.max_cm_retries = 1;  // half-open expiry after 100 ms
  REQUIRE(peer.connect(c, o) == 0);
  const auto regs = peer.mrsp(c, {entry(kInOut, 0x1000, 32, c)});  // a SEND: established
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  peer.drain(Ms(250));  // well past the half-open expiry
  const auto imm = peer.call(c, *regs, {{0, std::vector<std::uint8_t>(32, 9)}}, kAdd1);
  REQUIRE(imm);
  CHECK(*imm == p::encode_result_immediate(kAdd1, 0));
  CHECK(all_equal(c.host_mem, 0, 32, 10));
  auto s = naa.stats_text();
  CHECK(st(s, "cm.established_by_data") == 1);
  CHECK(st(s, "cm.rtu") == 0);
  CHECK(st(s, "cm.half_open_expired") == 0);
  CHECK(st(s, "cm.connections") == 1);
  // The RTU arrives late: harmless.
  peer.send_rtu(c);
  const auto imm2 = peer.call(c, *regs, {{0, std::vector<std::uint8_t>(32, 1)}}, kAdd1);
  REQUIRE(imm2);
  CHECK(all_equal(c.host_mem, 0, 32, 2));
  s = naa.stats_text();
  CHECK(st(s, "cm.rtu") == 1);
  CHECK(st(s, "cm.established_by_data") == 1);
  peer.disconnect(c);
}

TEST_CASE(
    "a kernel still running when its connection ends writes nothing into the next one's "
    "region (regression)",
    "[sim][cm]") {
  // Connection A calls add1 over 4 MiB and disconnects at once; connection B places a region on
  // A's memory while A's kernel still computes. All three datagrams are sent while naa-sim is
  // frozen, so they enter the model together: at 1 MHz and 1 byte per cycle A's DREQ is done
  // after ~700 cycles, B's 32-entry MRSP request is placed after ~2800 (it checks overlap, so
  // it must come after A's release), A's kernel computes for ~4.2 M cycles. Before the fix the
  // kernel stored its result into what had become B's region.
  SimAndPeer rig({"--clock-mhz", "1", "--width", "1"});
  auto& [naa, peer] = rig;
  const std::uint64_t base = 0x1000000;
  const std::uint32_t size = 4U << 20;
  Connection a, b;
  REQUIRE(peer.connect(a) == 0);
  REQUIRE(peer.connect(b) == 0);
  const auto ra = peer.mrsp(a, {entry(kInOut, base, size, a)});
  REQUIRE(ra);
  REQUIRE_FALSE(ra->error);
  // B: its first region on A's memory, 31 more elsewhere (a long request, placed late).
  std::vector<p::MrspRequestEntry> breq = {entry(kInOut, base, 4096, b)};
  for (std::uint32_t i = 1; i < 32; ++i)
    breq.push_back(entry(kInOut, 0x4000000 + i * 0x1000, 64, b, i * 64));
  std::vector<std::uint8_t> bmsg(p::mrsp_request_size(breq.size()));
  REQUIRE(p::encode_mrsp_request(breq, bmsg));

  naa.freeze();
  post_call(peer, a, *ra, kAdd1);
  p::CmDreq dreq;
  dreq.local_comm_id = a.my_comm_id;
  dreq.remote_comm_id = a.naa_comm_id;
  dreq.remote_qpn = a.naa_qpn;
  peer.send_mad(p::CmMad{p::MadHeader{}, dreq});
  (void)peer.post_send(b, bmsg);
  naa.thaw();

  const auto answer = peer.wait_completion(b);
  REQUIRE(answer);
  const auto adv = p::decode_mrsp(answer->data);
  REQUIRE(adv);
  const auto* regions = std::get_if<p::MrspAdvertisementView>(&*adv);
  REQUIRE(regions != nullptr);  // placed: A's region was released first
  REQUIRE(regions->count() == 32);
  CHECK(wait_stat(naa, "kernel.dispatches", 1) == 1);  // A's kernel did run
  (void)peer.post_read(b, base, regions->entry(0).rkey, 4096);
  REQUIRE(peer.wait_for([&] { return b.read_data.size() >= 4096; }));
  CHECK(all_equal(b.read_data, 0, 4096, 0));  // B's new region reads as zeros
  CHECK(a.completions.empty());               // no result for a connection that is gone
  const auto s = naa.stats_text();
  CHECK(st(s, "cm.released") == 1);
  CHECK(st(s, "mrsp.error_2") == 0);
  peer.disconnect(b);
}
