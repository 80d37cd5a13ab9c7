// naa-sim integration tests of the NAA's RC requester (its MRSP answers and result write-backs,
// PROTOCOL.md 3): retransmit timer, NAK 0x60, RNR NAK, retry exhaustion, window and AckReq
// spacing, ACK coalescing. The CM corner cases are in test_cm_corners.cpp. The peer misbehaves on
// purpose (ResponderFaults) and logs what it receives; every test asserts packets, bytes and
// naa-sim counters. Addresses: the test's block (test_addresses.hpp). Timers (docs/sim/timing.md):
// naa-sim fires a peer-wait timer when both its simulated and its wall-clock deadline have passed.
// Durations are asserted in simulated time only, on naa-sim's capture (pcap timestamps are
// simulated time), never on the wall clock. A timer that must NOT fire in a test is long (>= 268
// ms), so a loaded machine delaying the peer's answer by that much is needed to break the test; one
// that must fire is as short as the test allows.
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

constexpr std::uint8_t kOut = p::kMrspFlagOutput;
constexpr std::uint8_t kInOut = p::kMrspFlagInput | p::kMrspFlagOutput;
constexpr std::uint8_t kAdd1 = 1;

// 4.096 us x 2^t: the NAA's retransmit timeout for the REQ's local ACK timeout t.
std::chrono::nanoseconds ack_timeout(std::uint8_t t) {
  return std::chrono::nanoseconds(p::local_ack_timeout_ns(t));
}
std::chrono::nanoseconds rnr_time(std::uint8_t code) {
  return std::chrono::nanoseconds(p::rnr_timer_ns(code));
}
// A timer of duration d fired after exactly d of simulated time: the model's own latency
// (a few cycles per stage) on top, nothing else.
constexpr std::chrono::nanoseconds kModelSlack = std::chrono::microseconds(50);
bool fired_after(std::uint64_t from_ns, std::uint64_t at_ns, std::chrono::nanoseconds d) {
  const auto gap = std::chrono::nanoseconds(at_ns - from_ns);
  return at_ns >= from_ns && gap >= d && gap <= d + kModelSlack;
}

// Simulated times at which naa-sim sent request packets with this PSN (its ACKs and CM MADs
// excluded), in order.
std::vector<std::uint64_t> sends_of(const std::vector<SimFrame>& frames, std::uint32_t psn) {
  std::vector<std::uint64_t> t;
  for (const SimFrame& f : frames) {
    if (f.from_naa && !f.syndrome && f.opcode != p::opcode::kUdSendOnly && f.psn == psn) {
      t.push_back(f.t_ns);
    }
  }
  return t;
}

}  // namespace

TEST_CASE("requester: withheld ACKs -> retransmit timeout -> go-back-N from the oldest unacked PSN",
          "[sim][requester]") {
  ScratchPcap pcap;
  SimAndPeer rig({"--pcap", pcap.path});
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.local_ack_timeout = 16;  // 268 ms
  REQUIRE(peer.connect(c, o) == 0);
  // Two OUTPUT regions: 3000 B (3 packets at MTU 1024) and 100 B (1): two WRITE messages.
  const auto regs =
      peer.mrsp(c, {entry(kOut, 0x10000, 3000, c), entry(kOut, 0x20000, 100, c, 0x1000)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const std::uint32_t first = c.epsn;  // the write-back's first PSN
  c.rx_log.clear();
  c.faults.withhold_acks = 2;  // the ACKs of both messages are lost
  post_call(peer, c, *regs, kAdd1);
  const auto done = peer.wait_completion(c);
  REQUIRE(done);
  CHECK(*done->imm == p::encode_result_immediate(kAdd1, 0));
  peer.drain(std::chrono::duration_cast<Ms>(ack_timeout(16) * 3));  // no further resend

  CHECK(c.completions.empty());  // the retransmitted WRITE_WITH_IMM was not delivered twice
  CHECK(all_equal(c.host_mem, 0, 3000, 1));
  CHECK(all_equal(c.host_mem, 0x1000, 100, 1));
  REQUIRE(c.rx_log.size() == 8);  // 4 packets, then all 4 again
  for (std::uint32_t i = 0; i < 8; ++i) {
    INFO("packet " << i);
    CHECK(c.rx_log[i].psn == p::psn_add(first, i % 4));  // go back to the oldest unacked PSN
  }
  const auto s = naa.stats_text();
  CHECK(st(s, "transport.timeouts") == 1);
  CHECK(st(s, "transport.retransmits") == 1);
  CHECK(st(s, "transport.completion_errors") == 0);
  CHECK(st(s, "transport.messages_completed") == 3);           // the MRSP answer and both WRITEs
  CHECK(st(s, "sim.time_ns") >= p::local_ack_timeout_ns(16));  // simulated time waited too
  // Still usable.
  c.rx_log.clear();
  post_call(peer, c, *regs, kAdd1);
  REQUIRE(peer.wait_completion(c));
  CHECK(all_equal(c.host_mem, 0, 3000, 2));
  CHECK(naa.stat("transport.timeouts") == 1);
  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
  // The retransmission came one retransmit timeout after the first send, in simulated time.
  REQUIRE(naa.stop() == 0);  // writes the capture out
  const auto sends = sends_of(sim_frames(pcap.path, naa_address()), first);
  REQUIRE(sends.size() == 2);
  CHECK(fired_after(sends[0], sends[1], ack_timeout(16)));
}

TEST_CASE("requester: NAK 0x60 from the peer -> go-back-N from the NAK's PSN", "[sim][requester]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.local_ack_timeout = 18;  // 1.07 s: the timer never fires here
  REQUIRE(peer.connect(c, o) == 0);
  // Message A: 2 packets; message B: 14 packets (WRITE_WITH_IMM).
  const auto regs =
      peer.mrsp(c, {entry(kOut, 0x10000, 2048, c), entry(kOut, 0x20000, 14336, c, 0x1000)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const std::uint32_t first = c.epsn;
  const std::uint32_t lost = p::psn_add(first, 5);
  c.rx_log.clear();
  c.acks_sent.clear();
  c.faults.lose_psns = {lost};
  // Only the final packet is ACKed, so message A completes only through the NAK (it acknowledges
  // everything before its PSN); a requester that went back further would resend A.
  c.faults.ack_only_immediate = true;
  post_call(peer, c, *regs, kAdd1);
  const auto done = peer.wait_completion(c);
  REQUIRE(done);
  CHECK(*done->imm == p::encode_result_immediate(kAdd1, 0));
  peer.drain(Ms(100));

  CHECK(all_equal(c.host_mem, 0, 2048, 1));
  CHECK(all_equal(c.host_mem, 0x1000, 14336, 1));
  REQUIRE(c.acks_sent.size() == 2);
  CHECK(c.acks_sent[0].syndrome == p::kNakPsnSequenceError);
  CHECK(c.acks_sent[0].psn == lost);
  CHECK(c.acks_sent[1].syndrome == p::kAethAck);
  CHECK(c.acks_sent[1].psn == p::psn_add(first, 15));
  // 16 packets, then 11 again starting exactly at the NAK's PSN.
  REQUIRE(c.rx_log.size() == 16 + 11);
  for (std::uint32_t i = 0; i < 16; ++i)
    CHECK(c.rx_log[i].psn == p::psn_add(first, i));
  for (std::uint32_t i = 0; i < 11; ++i)
    CHECK(c.rx_log[16 + i].psn == p::psn_add(lost, i));
  const auto s = naa.stats_text();
  CHECK(st(s, "transport.naks_received") == 1);
  CHECK(st(s, "transport.retransmits") == 1);
  CHECK(st(s, "transport.timeouts") == 0);
  CHECK(st(s, "transport.completion_errors") == 0);
  CHECK(st(s, "transport.messages_completed") == 3);
  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
}

TEST_CASE("requester: RNR NAK -> the NAA waits the RNR time and retries", "[sim][requester]") {
  ScratchPcap pcap;
  SimAndPeer rig({"--pcap", pcap.path});
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;

  SECTION("3 RNR NAKs of 327.68 ms; the RNR waits do not use up retry_count (regression)") {
    // The retransmit timer (134 ms) is less than half the RNR wait and retry_count is 1: a
    // requester that kept its transport timer running through RNR waits would time out twice
    // and put the QP in error.
    o.local_ack_timeout = 15;
    o.retry_count = 1;
    o.rnr_retry = 7;
    REQUIRE(peer.connect(c, o) == 0);
    const std::uint8_t code = 30;  // 327.68 ms (IBTA table 45)
    c.faults.rnr_naks = 3;
    c.faults.rnr_timer_code = code;
    const std::uint32_t first = c.epsn;  // the MRSP answer's PSN
    const auto regs = peer.mrsp(c, {entry(kInOut, 0x1000, 64, c)});
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    REQUIRE(c.rx_log.size() == 4);
    REQUIRE(c.acks_sent.size() >= 3);
    for (std::size_t i = 0; i < 4; ++i) {
      INFO("transmission " << i);
      CHECK(c.rx_log[i].psn == first);
      CHECK(c.rx_log[i].opcode == p::opcode::kSendOnly);
      if (i < 3) CHECK(c.acks_sent[i].syndrome == p::rnr_nak_syndrome(code));
    }
    const auto imm = peer.call(c, *regs, {{0, std::vector<std::uint8_t>(64, 7)}}, kAdd1);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(kAdd1, 0));
    CHECK(all_equal(c.host_mem, 0, 64, 8));
    const auto s = naa.stats_text();
    CHECK(st(s, "transport.rnr_naks_received") == 3);
    CHECK(st(s, "transport.timeouts") == 0);
    CHECK(st(s, "transport.completion_errors") == 0);
    CHECK(st(s, "transport.qp_errors") == 0);
    CHECK(st(s, "sim.time_ns") >= 3 * p::rnr_timer_ns(code));
    // Each retry came the RNR time after the NAK reached naa-sim, in simulated time.
    REQUIRE(naa.stop() == 0);  // writes the capture out
    const auto frames = sim_frames(pcap.path, naa_address());
    const auto sends = sends_of(frames, first);
    std::vector<std::uint64_t> naks;
    for (const SimFrame& f : frames) {
      if (!f.from_naa && f.syndrome == p::rnr_nak_syndrome(code)) naks.push_back(f.t_ns);
    }
    REQUIRE(sends.size() == 4);
    REQUIRE(naks.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      INFO("RNR NAK " << i);
      CHECK(fired_after(naks[i], sends[i + 1], rnr_time(code)));
    }
  }
  SECTION("rnr_retry 7 is infinite: 20 RNR NAKs, then the answer is taken") {
    o.local_ack_timeout = 18;  // 1.07 s: only RNR NAKs cause resends here
    o.rnr_retry = 7;
    REQUIRE(peer.connect(c, o) == 0);
    c.faults.rnr_naks = 20;
    c.faults.rnr_timer_code = 1;  // 0.01 ms
    const auto regs = peer.mrsp(c, {entry(kInOut, 0x1000, 64, c)});
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    CHECK(c.rx_log.size() == 21);
    CHECK(naa.stat("transport.rnr_naks_received") == 20);
    CHECK(naa.stat("transport.completion_errors") == 0);
  }
  SECTION("rnr_retry 2: the third RNR NAK puts the QP in error, regions released, DREQ") {
    o.local_ack_timeout = 18;  // 1.07 s: only RNR NAKs cause resends here
    o.rnr_retry = 2;
    REQUIRE(peer.connect(c, o) == 0);
    c.faults.rnr_naks = ResponderFaults::kAll;
    c.faults.rnr_timer_code = 1;
    std::vector<std::uint8_t> msg(p::mrsp_request_size(2));
    const std::vector<p::MrspRequestEntry> req = {entry(kInOut, 0x1000, 64, c),
                                                  entry(kInOut, 0x2000, 64, c, 0x100)};
    REQUIRE(p::encode_mrsp_request(req, msg));
    (void)peer.post_send(c, msg);
    REQUIRE(peer.wait_for([&] { return c.dreqs_received == 1; }));
    peer.drain(Ms(50));
    CHECK(c.rx_log.size() == 3);  // the answer and 2 retries, nothing after
    CHECK(c.completions.empty());
    const auto s = naa.stats_text();
    CHECK(st(s, "mrsp.regions_placed") == 2);
    CHECK(st(s, "transport.rnr_naks_received") == 3);
    CHECK(st(s, "transport.completion_errors") == 1);
    CHECK(st(s, "transport.qp_errors") == 1);
    CHECK(st(s, "cm.error_disconnects") == 1);
    CHECK(st(s, "mr_table.entries_used") == 0);
    CHECK(wait_stat(naa, "cm.connections", 0) == 0);  // freed on our DREP
    CHECK(naa.stat("cm.drep_received") == 1);
  }
  CHECK(peer.icrc_failures() == 0);
}

TEST_CASE("requester: retry_count exhausted by timeouts -> QP error, counted, resources released",
          "[sim][requester]") {
  ScratchPcap pcap;
  SimAndPeer rig({"--qps", "1", "--pcap", pcap.path});
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.local_ack_timeout = 12;  // 16.8 ms: it fires (no ACK ever comes), so it can be short
  o.retry_count = 2;
  REQUIRE(peer.connect(c, o) == 0);
  const auto regs =
      peer.mrsp(c, {entry(kInOut, 0x1000, 256, c), entry(kOut, 0x8000, 256, c, 0x1000)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  CHECK(naa.stat("mr_table.entries_used") == 2);
  const std::uint32_t first = c.epsn;
  c.rx_log.clear();
  c.faults.withhold_acks = ResponderFaults::kAll;  // the peer has gone quiet
  post_call(peer, c, *regs, kAdd1);
  REQUIRE(peer.wait_for([&] { return c.dreqs_received == 1; }));
  peer.drain(Ms(100));

  // Two WRITEs (one packet each): sent once, then go-back-N twice (retry_count 2), then error.
  REQUIRE(c.rx_log.size() == 6);
  for (std::size_t i = 0; i < 6; ++i)
    CHECK(c.rx_log[i].psn == p::psn_add(first, static_cast<std::uint32_t>(i % 2)));
  CHECK(c.completions.size() == 1);  // delivered once, duplicates were not
  const auto s = naa.stats_text();
  CHECK(st(s, "transport.timeouts") == 3);
  CHECK(st(s, "transport.retransmits") == 2);
  // Three full timeouts elapsed in simulated time before the QP went to error.
  CHECK(st(s, "sim.time_ns") >= 3 * p::local_ack_timeout_ns(12));
  CHECK(st(s, "transport.completion_errors") == 1);
  CHECK(st(s, "transport.qp_errors") == 1);
  CHECK(st(s, "cm.error_disconnects") == 1);
  CHECK(st(s, "cm.dreq_sent") == 1);
  CHECK(st(s, "mr_table.entries_used") == 0);
  CHECK(wait_stat(naa, "cm.connections", 0) == 0);
  // The only QP is free again and the regions are gone: a new connection places the same
  // addresses (no 0x02 overlap) and they read as zeros.
  Connection d;
  REQUIRE(peer.connect(d) == 0);
  const auto r2 = peer.mrsp(d, {entry(kInOut, 0x1000, 256, d)});
  REQUIRE(r2);
  CHECK_FALSE(r2->error);
  (void)peer.post_read(d, 0x1000, r2->regions[0].rkey, 256);
  REQUIRE(peer.wait_for([&] { return d.read_data.size() >= 256; }));
  CHECK(all_equal(d.read_data, 0, 256, 0));
  peer.disconnect(d);
  CHECK(peer.icrc_failures() == 0);
  // Each go-back-N came one retransmit timeout after the previous send, in simulated time.
  REQUIRE(naa.stop() == 0);  // writes the capture out
  const auto sends = sends_of(sim_frames(pcap.path, naa_address()), first);
  REQUIRE(sends.size() == 3);
  CHECK(fired_after(sends[0], sends[1], ack_timeout(12)));
  CHECK(fired_after(sends[1], sends[2], ack_timeout(12)));
}

TEST_CASE("requester: 1 MiB at MTU 1024 - window of 128 PSNs, AckReq every 64, PSN wrap",
          "[sim][requester]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.local_ack_timeout = 19;   // 2.1 s: longer than any pause below, even on a loaded machine
  o.starting_psn = 0xFFFF00;  // the write-back crosses PSN 2^24 - 1 -> 0
  o.host_mem_size = 1U << 20;
  REQUIRE(peer.connect(c, o) == 0);
  const std::uint32_t size = 1U << 20;
  const std::uint32_t packets = size / 1024;
  const auto regs = peer.mrsp(c, {entry(kOut, 0x100000, size, c)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);

  SECTION("ACKs withheld until the NAA stops: it stops after exactly 128 PSNs every time") {
    const std::uint32_t first = c.epsn;
    c.rx_log.clear();
    c.faults.withhold_acks = ResponderFaults::kAll;
    post_call(peer, c, *regs, kAdd1);
    std::size_t seen = 0;
    std::vector<std::size_t> bursts;
    while (seen < packets && bursts.size() < 20) {
      // Wait for the burst to start, then until nothing arrives for 30 ms; then ACK everything
      // with one coalesced ACK.
      REQUIRE(peer.wait_for([&] { return c.rx_log.size() > seen; }, Ms(5000)));
      auto last = c.rx_log.size();
      do {
        last = c.rx_log.size();
        peer.drain(Ms(30));
      } while (c.rx_log.size() != last);
      bursts.push_back(c.rx_log.size() - seen);
      seen = c.rx_log.size();
      peer.send_ack(c, p::psn_add(c.epsn, p::kMax24), p::kAethAck);
    }
    CHECK(bursts == std::vector<std::size_t>(packets / 128, 128));
    REQUIRE(peer.wait_completion(c));
    REQUIRE(c.rx_log.size() == packets);
    for (std::uint32_t i = 0; i < packets; ++i) {
      REQUIRE(c.rx_log[i].psn == p::psn_add(first, i));  // in order, across the wrap
    }
    CHECK(all_equal(c.host_mem, 0, size, 1));
    CHECK(wait_stat(naa, "transport.messages_completed", 2) == 2);  // MRSP answer + the WRITE
    const auto s = naa.stats_text();
    CHECK(st(s, "transport.timeouts") == 0);
    CHECK(st(s, "transport.retransmits") == 0);
  }
  SECTION("ordinary ACKs: never more than 128 unacknowledged, AckReq at least every 64") {
    const std::uint32_t first = c.epsn;
    c.rx_log.clear();
    c.acks_sent.clear();
    post_call(peer, c, *regs, kAdd1);
    REQUIRE(peer.wait_completion(c, Ms(10000)));
    peer.drain(Ms(50));
    REQUIRE(c.rx_log.size() == packets);
    // Window: when PSN q arrived, the NAA could know only of the ACKs we had sent before, so
    // q - (highest of those + 1) < 128.
    std::uint32_t acked_next = first;  // PSN after the highest ACK sent so far
    std::size_t a = 0;
    std::uint32_t max_outstanding = 0, last_ackreq = 0, max_gap = 0;
    for (std::uint32_t i = 0; i < packets; ++i) {
      const RxRecord& r = c.rx_log[i];
      while (a < c.acks_sent.size() && c.acks_sent[a].at < r.at) {
        acked_next = p::psn_add(c.acks_sent[a].psn, 1);
        ++a;
      }
      REQUIRE(r.psn == p::psn_add(first, i));
      max_outstanding = std::max(max_outstanding, p::psn_diff(r.psn, acked_next) + 1);
      if (r.ack_req) {
        max_gap = std::max(max_gap, i + 1 - last_ackreq);
        last_ackreq = i + 1;
      }
    }
    CHECK(max_outstanding <= 128);
    CHECK(max_gap <= 64);
    CHECK(c.rx_log.back().ack_req);  // the last packet of the message
    CHECK(c.rx_log.back().opcode == p::opcode::kWriteLastImm);
    CHECK(all_equal(c.host_mem, 0, size, 1));
    const auto s = naa.stats_text();
    CHECK(st(s, "transport.timeouts") == 0);
    CHECK(st(s, "transport.retransmits") == 0);
    CHECK(st(s, "transport.completion_errors") == 0);
    WARN("1 MiB write-back with ordinary ACKs: at most " << max_outstanding << " PSNs outstanding");
  }
  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
}

TEST_CASE("requester: one coalesced ACK completes every message up to its PSN",
          "[sim][requester]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.local_ack_timeout = 16;  // 268 ms: an uncompleted message would be resent within the drain
  REQUIRE(peer.connect(c, o) == 0);
  std::vector<p::MrspRequestEntry> req;
  for (std::uint32_t i = 0; i < 4; ++i)
    req.push_back(entry(kOut, 0x10000 + i * 0x1000, 512, c, i * 0x1000));
  const auto regs = peer.mrsp(c, req);
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  // The MRSP answer (our ACK of it may still be on its way).
  const std::uint64_t completed_before = wait_stat(naa, "transport.messages_completed", 1);
  CHECK(completed_before == 1);
  const std::uint32_t first = c.epsn;
  c.rx_log.clear();
  c.acks_sent.clear();
  c.faults.ack_only_immediate = true;
  post_call(peer, c, *regs, kAdd1);
  REQUIRE(peer.wait_completion(c));
  peer.drain(std::chrono::duration_cast<Ms>(ack_timeout(16) * 3));

  REQUIRE(c.rx_log.size() == 4);  // nothing was resent
  for (std::uint32_t i = 0; i < 4; ++i) {
    CHECK(c.rx_log[i].psn == p::psn_add(first, i));
    CHECK(c.rx_log[i].ack_req);  // AckReq on the last packet of every message
    CHECK(all_equal(c.host_mem, i * 0x1000, 512, 1));
  }
  REQUIRE(c.acks_sent.size() == 1);
  CHECK(c.acks_sent[0].psn == p::psn_add(first, 3));
  const auto s = naa.stats_text();
  CHECK(st(s, "transport.messages_completed") - completed_before == 4);
  CHECK(st(s, "transport.timeouts") == 0);
  CHECK(st(s, "transport.retransmits") == 0);
  peer.disconnect(c);
}
