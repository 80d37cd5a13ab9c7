// naa-sim integration tests (issue 3), the error paths: MRSP error codes, unknown function codes,
// remote access errors, PSN gaps and duplicates, garbage datagrams and CM rejections. Each
// TEST_CASE starts naa-sim on its own loopback address and drives it with TestPeer, and asserts
// outcomes: bytes, decoded fields, codes, counters. The happy paths are in test_naa_sim.cpp.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>

#include "naa/protocol/crc32.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/pcap.hpp"
#include "peer.hpp"
#include "seed.hpp"
#include "sim_tests.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;

TEST_CASE("MRSP error codes 0x01 0x02 0x03 and a malformed request", "[sim]") {
  SimAndPeer rig({"--mem", "1M"});
  auto& [naa, peer] = rig;
  Connection a, b;
  REQUIRE(peer.connect(a) == 0);
  REQUIRE(peer.connect(b) == 0);
  const std::uint8_t io = p::kMrspFlagInput | p::kMrspFlagOutput;

  // 0x01: address inside the memory, address + size beyond it.
  auto r = peer.mrsp(a, {entry(io, (1 << 20) - 16, 64, a)});
  REQUIRE(r);
  CHECK(r->error == std::optional<std::uint8_t>(0x01));
  // 0x02: address beyond the memory.
  r = peer.mrsp(a, {entry(io, 2 << 20, 64, a)});
  REQUIRE(r);
  CHECK(r->error == std::optional<std::uint8_t>(0x02));
  // 0x02: overlapping a region another connection holds.
  r = peer.mrsp(a, {entry(io, 0x1000, 0x1000, a)});
  REQUIRE(r);
  REQUIRE_FALSE(r->error);
  r = peer.mrsp(b, {entry(io, 0x1800, 0x100, b)});
  REQUIRE(r);
  CHECK(r->error == std::optional<std::uint8_t>(0x02));
  // 0x02: two entries of one request overlapping each other.
  r = peer.mrsp(b, {entry(io, 0x10000, 0x100, b), entry(io, 0x10080, 0x100, b, 0x100)});
  REQUIRE(r);
  CHECK(r->error == std::optional<std::uint8_t>(0x02));
  // 0x03: 33 entries (more than the 32-entry table), and 32 while `a` holds one.
  std::vector<p::MrspRequestEntry> many;
  for (std::uint32_t i = 0; i < 33; ++i)
    many.push_back(entry(io, 0x20000 + i * 0x100, 0x100, b, i * 0x100));
  r = peer.mrsp(b, many);
  REQUIRE(r);
  CHECK(r->error == std::optional<std::uint8_t>(0x03));
  many.pop_back();
  r = peer.mrsp(b, many);
  REQUIRE(r);
  CHECK(r->error == std::optional<std::uint8_t>(0x03));
  many.pop_back();
  r = peer.mrsp(b, many);  // 31 + a's 1 = 32: fits
  REQUIRE(r);
  CHECK_FALSE(r->error);
  // A malformed MRSP message (reserved type 0x03) is answered with an error; the NAA keeps going.
  const std::vector<std::uint8_t> bad = {0x03, 0x00, 0x00, 0x00};
  (void)peer.post_send(a, bad);
  const auto done = peer.wait_completion(a);
  REQUIRE(done);
  REQUIRE(done->is_send);
  CHECK(done->solicited);
  REQUIRE(done->data.size() == 4);
  CHECK(done->data[0] == 0x00);
  CHECK(done->data[1] == 0x02);
  // `a` still works: its earlier regions were not replaced by the failed requests.
  const auto imm =
      peer.call(a, *peer.mrsp(a, {entry(io, 0x1000, 0x1000, a)}), {{0, pattern(64, 1)}}, 2);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0);
  CHECK(a.host_mem[0] == static_cast<std::uint8_t>(pattern(64, 1)[0] + 2));
  peer.disconnect(a);
  peer.disconnect(b);
  CHECK(peer.icrc_failures() == 0);
}

TEST_CASE("unknown function code -> 0x03 and immediate 0 aborts - the connection keeps working",
          "[sim]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c) == 0);
  const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000, 64, c)});
  REQUIRE(regs);
  auto imm = peer.call(c, *regs, {{0, pattern(64, 9)}}, 99, 0x123456);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0x03);
  CHECK(fn_of(*imm) == 99);
  // Immediate 0: no kernel, no reply.
  (void)peer.post_write(c, regs->regions[0].naa_address, regs->regions[0].rkey, {}, 0U, true);
  peer.drain(Ms(300));
  CHECK(c.completions.empty());
  // Still usable.
  imm = peer.call(c, *regs, {{0, pattern(64, 9)}}, 1);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0);
  CHECK(c.host_mem[5] == static_cast<std::uint8_t>(pattern(64, 9)[5] + 1));
  const auto s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "kernel.unknown_function") == 1);
  CHECK(NaaSim::stat_in(s, "kernel.aborted") == 1);
  CHECK(NaaSim::stat_in(s, "kernel.dispatches") == 1);
  peer.disconnect(c);
}

TEST_CASE("remote access errors: NAK 0x62 and memory unchanged", "[sim]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection owner;
  REQUIRE(peer.connect(owner) == 0);
  // owner: region 0 INPUT at 0x1000 (256 B), region 1 OUTPUT at 0x2000 (256 B).
  const auto regs = peer.mrsp(owner, {entry(p::kMrspFlagInput, 0x1000, 256, owner),
                                      entry(p::kMrspFlagOutput, 0x2000, 256, owner, 0x100)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const auto in = pattern(256, 42);
  (void)peer.post_write(owner, 0x1000, regs->regions[0].rkey, in);
  auto ack = peer.wait_ack(owner);
  REQUIRE(ack);
  CHECK(ack->syndrome == p::kAethAck);

  // Wrong rkey, out of bounds, missing permission: each on a connection that owns the region
  // (regions at fresh addresses), so the MR table reports exactly that failure.
  enum class Kind { wrong_tag, wrong_index, out_of_bounds, no_permission };
  const std::uint32_t rk_in = regs->regions[0].rkey;
  for (const Kind k :
       {Kind::wrong_tag, Kind::wrong_index, Kind::out_of_bounds, Kind::no_permission}) {
    INFO("attack " << static_cast<int>(k));
    Connection victim;
    REQUIRE(peer.connect(victim) == 0);
    const std::uint64_t base = 0x100000U * (static_cast<std::uint64_t>(k) + 1);
    const auto vr =
        peer.mrsp(victim, {entry(p::kMrspFlagInput, base, 256, victim),
                           entry(p::kMrspFlagOutput, base + 0x1000, 256, victim, 0x100)});
    REQUIRE(vr);
    REQUIRE_FALSE(vr->error);
    std::uint64_t va = base;
    std::uint32_t rkey = vr->regions[0].rkey;
    switch (k) {
      case Kind::wrong_tag:
        rkey ^= 0x100;
        break;
      case Kind::wrong_index:
        rkey = (rkey & ~0xFFU) | 31;
        break;
      case Kind::out_of_bounds:
        va = base + 250;
        break;
      case Kind::no_permission:
        va = base + 0x1000;
        rkey = vr->regions[1].rkey;
        break;
    }
    const std::uint64_t written_before = naa.stat("memory.bytes_written");
    const std::uint32_t psn =
        peer.post_write(victim, va, rkey, std::vector<std::uint8_t>(16, 0xFF));
    ack = peer.wait_ack(victim);
    REQUIRE(ack);
    CHECK(ack->syndrome == p::kNakRemoteAccessError);
    CHECK(ack->psn == psn);
    CHECK(naa.stat("memory.bytes_written") == written_before);  // nothing was written
    peer.disconnect(victim);
  }
  // Another connection's region: a second connection uses the owner's valid rkey.
  {
    Connection other;
    REQUIRE(peer.connect(other) == 0);
    const std::uint32_t psn =
        peer.post_write(other, 0x1000, rk_in, std::vector<std::uint8_t>(16, 0xFF));
    ack = peer.wait_ack(other);
    REQUIRE(ack);
    CHECK(ack->syndrome == p::kNakRemoteAccessError);
    CHECK(ack->psn == psn);
    peer.disconnect(other);
  }
  // The owner's memory is unchanged: READ it back.
  (void)peer.post_read(owner, 0x1000, rk_in, 256);
  REQUIRE(peer.wait_for([&] { return owner.read_data.size() >= 256; }));
  CHECK(std::vector<std::uint8_t>(owner.read_data.begin(), owner.read_data.begin() + 256) == in);
  // The QP goes to error after a 0x62: a later valid WRITE on it is not acted on (dropped
  // while the QP is in error, or as an unknown QP once the NAA's DREQ was answered).
  owner.acks.clear();
  (void)peer.post_write(owner, 0x1000, rk_in ^ 0x200, std::vector<std::uint8_t>(8, 0xFF));
  ack = peer.wait_ack(owner);
  REQUIRE(ack);
  CHECK(ack->syndrome == p::kNakRemoteAccessError);
  (void)peer.post_write(owner, 0x1000, rk_in, std::vector<std::uint8_t>(8, 0xFF));
  // Wait for the events (the DREQ; the write counted as dropped), then for silence.
  CHECK(peer.wait_for([&] { return owner.dreqs_received == 1; }));
  std::string s;
  CHECK(eventually([&] {
    s = naa.stats_text();
    return NaaSim::stat_in(s, "transport.drop.qp_error") +
               NaaSim::stat_in(s, "transport.drop.unknown_qp") >=
           1;
  }));
  peer.drain(Ms(200));
  CHECK(owner.acks.empty());
  CHECK(owner.dreqs_received == 1);  // the NAA disconnects an errored QP (PROTOCOL.md 4)
  s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "transport.nak_sent.remote_access") == 6);
  CHECK(NaaSim::stat_in(s, "transport.drop.qp_error") +
            NaaSim::stat_in(s, "transport.drop.unknown_qp") ==
        1);
  CHECK(NaaSim::stat_in(s, "cm.error_disconnects") == 6);
  CHECK(NaaSim::stat_in(s, "mr_table.entries_used") == 0);  // every region was released
  CHECK(NaaSim::stat_in(s, "mr_table.result.bad_rkey") == 3);
  CHECK(NaaSim::stat_in(s, "mr_table.result.out_of_bounds") == 1);
  CHECK(NaaSim::stat_in(s, "mr_table.result.no_permission") == 1);
  CHECK(NaaSim::stat_in(s, "mr_table.result.wrong_owner") == 1);
  peer.disconnect(owner);
}

TEST_CASE("PSN gap -> one NAK 0x60 and duplicate WRITE_WITH_IMM -> re-ACK without a second run",
          "[sim]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c) == 0);
  const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000, 64, c)});
  REQUIRE(regs);
  const auto& r = regs->regions[0];
  c.acks.clear();

  SECTION("gap") {
    const std::uint32_t expected = c.send_psn;
    c.send_psn = p::psn_add(c.send_psn, 1);  // skip one PSN
    for (int i = 0; i < 3; ++i)
      (void)peer.post_write(c, r.naa_address, r.rkey, pattern(16, 1));
    REQUIRE(peer.wait_for([&] { return !c.acks.empty(); }));  // the NAK, then no more
    peer.drain(Ms(300));
    REQUIRE(c.acks.size() == 1);
    CHECK(c.acks[0].syndrome == p::kNakPsnSequenceError);
    CHECK(c.acks[0].psn == expected);
    c.acks.clear();
    // Go back: resend from the expected PSN; everything is accepted again.
    c.send_psn = expected;
    const std::uint32_t psn = peer.post_write(c, r.naa_address, r.rkey, pattern(16, 2));
    const auto ack = peer.wait_ack(c);
    REQUIRE(ack);
    CHECK(ack->syndrome == p::kAethAck);
    CHECK(ack->psn == psn);
    CHECK(naa.stat("transport.nak_sent.sequence") == 1);
  }
  SECTION("duplicate WRITE_WITH_IMM") {
    const std::uint32_t imm = p::encode_call_immediate(1, 0);
    const std::uint32_t psn = peer.post_write(c, r.naa_address, r.rkey, pattern(64, 5), imm, true);
    const auto done = peer.wait_completion(c);
    REQUIRE(done);
    CHECK(*done->imm == p::encode_result_immediate(1, 0));
    REQUIRE(peer.wait_for([&] { return !c.acks.empty(); }));
    CHECK(c.acks.back().psn == psn);
    c.acks.clear();
    // The same packet again (same PSN).
    c.send_psn = psn;
    (void)peer.post_write(c, r.naa_address, r.rkey, pattern(64, 5), imm, true);
    REQUIRE(peer.wait_for([&] { return !c.acks.empty(); }));  // the re-ACK, then no more
    peer.drain(Ms(300));
    REQUIRE(c.acks.size() == 1);
    CHECK(c.acks[0].syndrome == p::kAethAck);
    CHECK(c.acks[0].psn == psn);
    CHECK(c.completions.empty());  // no second result
    CHECK(c.host_mem[0] == static_cast<std::uint8_t>(pattern(64, 5)[0] + 1));
    const auto s = naa.stats_text();
    CHECK(NaaSim::stat_in(s, "kernel.dispatches") == 1);
    CHECK(NaaSim::stat_in(s, "transport.duplicates") == 1);
  }
  peer.disconnect(c);
}

TEST_CASE("garbage datagrams are dropped and counted while serving continues", "[sim]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c) == 0);
  const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000, 64, c)});
  REQUIRE(regs);
  const auto seed = static_cast<std::uint32_t>(seed_for("garbage datagrams"));
  INFO("seed " << seed << " (NAA_TEST_SEED=" << test_seed() << ")");
  std::mt19937 rng(seed);
  // Random bytes of random lengths (0..1500).
  for (int i = 0; i < 200; ++i) {
    std::vector<std::uint8_t> g(rng() % 1500);
    for (auto& x : g)
      x = static_cast<std::uint8_t>(rng());
    peer.send_raw(g);
  }
  // Truncated headers: a valid WRITE cut at every length below its header size.
  p::PacketHeaders h;
  h.bth.opcode = p::opcode::kWriteOnlyImm;
  h.bth.dest_qpn = c.naa_qpn;
  h.bth.psn = c.send_psn;
  h.reth = p::Reth{0x1000, regs->regions[0].rkey, 0};
  h.immediate = p::encode_call_immediate(1, 0);
  std::vector<std::uint8_t> full(p::packet_size(h, 0));
  REQUIRE(p::encode_packet(h, {}, full));
  for (std::size_t len = 0; len < full.size(); ++len)
    peer.send_raw({full.data(), len});
  // Bad ICRC: the same packet with a correct structure, corrupted CRC.
  full.back() ^= 0x5A;
  peer.send_raw(full);
  // A valid call still works and ran exactly once (the garbage never dispatched anything).
  const auto imm = peer.call(c, *regs, {{0, pattern(64, 3)}}, 1);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0);
  const auto s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "rx_pipe.drops") >= 200 + full.size());
  CHECK(NaaSim::stat_in(s, "rx_pipe.drop.bad_icrc") >= 1);
  CHECK(NaaSim::stat_in(s, "rx_pipe.drop.too_short") >= 16);
  CHECK(NaaSim::stat_in(s, "kernel.dispatches") == 1);
  peer.disconnect(c);
  CHECK(naa.stop() == 0);
}

TEST_CASE("CM: REJ 8 for an unknown service - REJ 28 out of QPs - DREP for an unknown DREQ",
          "[sim]") {
  SimAndPeer rig({"--qps", "1"});
  auto& [naa, peer] = rig;
  Connection wrong;
  TestPeer::ConnectOptions o;
  o.cm_port = 4242;
  CHECK(peer.connect(wrong, o) == p::kCmRejInvalidServiceId);
  Connection c1, c2;
  REQUIRE(peer.connect(c1) == 0);
  CHECK(peer.connect(c2) == p::kCmRejConsumerDefined);
  // DREQ for a connection the NAA does not know: still a DREP.
  Connection ghost;
  ghost.my_comm_id = 0x1234;
  ghost.naa_comm_id = 0x5678;
  ghost.naa_qpn = 0x999;
  peer.cm_inbox().clear();
  p::CmDreq dreq;
  dreq.local_comm_id = ghost.my_comm_id;
  dreq.remote_comm_id = ghost.naa_comm_id;
  dreq.remote_qpn = ghost.naa_qpn;
  peer.send_mad(p::CmMad{p::MadHeader{}, dreq});
  REQUIRE(peer.wait_for([&] {
    for (const auto& m : peer.cm_inbox()) {
      if (const auto* d = std::get_if<p::CmDrep>(&m.body); d && d->remote_comm_id == 0x1234)
        return true;
    }
    return false;
  }));
  peer.disconnect(c1);
  Connection c3;
  REQUIRE(peer.connect(c3) == 0);   // the QP was released
  CHECK(c3.naa_qpn != c1.naa_qpn);  // a new generation
  peer.disconnect(c3);
  const auto s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "cm.rej_sent.reason_8") == 1);
  CHECK(NaaSim::stat_in(s, "cm.rej_sent.reason_28") == 1);
}
