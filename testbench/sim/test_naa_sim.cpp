// naa-sim integration tests (issue 3): each TEST_CASE starts naa-sim on its own loopback address
// and drives it with TestPeer. Every test asserts outcomes: bytes, decoded fields, codes, counters.
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

namespace {

std::uint32_t rc_of(std::uint32_t imm) {
  return imm >> 8;
}
std::uint32_t fn_of(std::uint32_t imm) {
  return imm & 0x7F;
}

}  // namespace

TEST_CASE("connect - MRSP - add1 call - disconnect", "[sim]") {
  NaaSim naa(naa_address());
  REQUIRE(naa.ready());
  CHECK(naa.ready_line() == "naa-sim: listening on " + naa_address() + ":4791 (cm port 12345)");
  TestPeer peer(peer_address(), naa_address());
  Connection c;
  REQUIRE(peer.connect(c) == 0);
  CHECK(c.naa_qpn > 1);

  // One INPUT|OUTPUT region of 256 bytes at NAA address 0x1000, written back to host offset 0.
  const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000, 256, c)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  REQUIRE(regs->regions.size() == 1);
  CHECK(regs->regions[0].naa_address == 0x1000);
  CHECK(regs->regions[0].size == 256);
  CHECK((regs->regions[0].rkey & 0xFF) < 32);

  const auto in = pattern(256, 3);
  const auto imm = peer.call(c, *regs, {{0, in}}, 1, 0xABCDEF);
  REQUIRE(imm);
  // PROTOCOL.md 5.2: success is the immediate 0, not an echo of the function code.
  CHECK(*imm == 0);
  for (std::size_t i = 0; i < 256; ++i)
    REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 1));

  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
  const auto s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "kernel.dispatches") == 1);
  CHECK(NaaSim::stat_in(s, "cm.connections") == 0);
  CHECK(NaaSim::stat_in(s, "rx_pipe.drops") == 0);
  CHECK(naa.stop() == 0);
}

TEST_CASE("MRSP with 1 3 and 32 regions then add1 over all of them", "[sim]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{32}}) {
    INFO("regions: " << n);
    Connection c;
    REQUIRE(peer.connect(c) == 0);
    std::vector<p::MrspRequestEntry> req;
    for (std::size_t i = 0; i < n; ++i) {
      req.push_back(
          entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x100000 + i * 0x1000, 128, c, i * 128));
    }
    const auto regs = peer.mrsp(c, req);
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    REQUIRE(regs->regions.size() == n);
    std::set<std::uint32_t> rkeys;
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(regs->regions[i].naa_address == 0x100000 + i * 0x1000);  // honoured verbatim
      CHECK(regs->regions[i].size == 128);
      rkeys.insert(regs->regions[i].rkey);
    }
    CHECK(rkeys.size() == n);
    std::vector<std::pair<std::size_t, std::vector<std::uint8_t>>> inputs;
    for (std::size_t i = 0; i < n; ++i)
      inputs.emplace_back(i, pattern(128, static_cast<std::uint8_t>(i)));
    const auto imm = peer.call(c, *regs, inputs, 1);
    REQUIRE(imm);
    CHECK(rc_of(*imm) == 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t b = 0; b < 128; ++b) {
        REQUIRE(c.host_mem[i * 128 + b] == static_cast<std::uint8_t>(inputs[i].second[b] + 1));
      }
    }
    peer.disconnect(c);
  }
  CHECK(peer.icrc_failures() == 0);
  CHECK(naa.stat("mr_table.entries_used") == 0);  // released with the connections
}

TEST_CASE("every built-in kernel: result bytes and return code", "[sim]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c) == 0);
  // in0 @0x10000, in1 @0x20000 (inputs), out0 @0x30000 (output, host offset 0x2000), plus an
  // internal scratch region that must not disturb anything.
  const std::uint32_t n = 256;
  const std::vector<p::MrspRequestEntry> req = {
      entry(p::kMrspFlagInput, 0x10000, n, c, 0x0000),
      entry(p::kMrspFlagInput, 0x20000, n, c, 0x1000),
      entry(p::kMrspFlagOutput, 0x30000, n, c, 0x2000),
      entry(p::kMrspFlagInternal, 0x40000, 4096, c),
  };
  std::mt19937 rng(12345);
  std::vector<std::uint8_t> a(n), b(n);
  for (auto& x : a)
    x = static_cast<std::uint8_t>(rng());
  for (auto& x : b)
    x = static_cast<std::uint8_t>(rng());

  auto fresh = [&] {
    const auto regs = peer.mrsp(c, req);  // a new 0x01 replaces (and clears) the regions
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    REQUIRE(regs->regions.size() == 3);  // internal regions are not advertised
    std::fill(c.host_mem.begin(), c.host_mem.end(), 0xEE);
    return *regs;
  };
  auto out = [&](std::size_t i) { return c.host_mem[0x2000 + i]; };

  SECTION("add1 and add2") {
    for (const std::uint8_t fn : {std::uint8_t{1}, std::uint8_t{2}}) {
      const auto regs = fresh();
      const auto imm = peer.call(c, regs, {{0, a}, {1, b}}, fn);
      REQUIRE(imm);
      CHECK(*imm == p::encode_result_immediate(fn, 0));
      for (std::size_t i = 0; i < n; ++i)
        REQUIRE(out(i) == fn);  // zeros + fn
    }
  }
  SECTION("nop") {
    const auto regs = fresh();
    const auto imm = peer.call(c, regs, {{0, a}}, 3);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(3, 0));
    for (std::size_t i = 0; i < n; ++i)
      REQUIRE(out(i) == 0);  // the full region, as placed
  }
  SECTION("vadd_i32") {
    const auto regs = fresh();
    const auto imm = peer.call(c, regs, {{0, a}, {1, b}}, 4);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(4, 0));
    for (std::size_t i = 0; i < n; i += 4) {
      const std::uint32_t s = p::load_le32(&a[i]) + p::load_le32(&b[i]);
      REQUIRE(p::load_le32(&c.host_mem[0x2000 + i]) == s);
    }
  }
  SECTION("sum_u64") {
    const auto regs = fresh();
    const auto imm = peer.call(c, regs, {{0, a}}, 5, 7);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(5, 0));
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; i += 4)
      sum += p::load_le32(&a[i]);
    const std::uint64_t got = p::load_le32(&c.host_mem[0x2000]) |
                              (std::uint64_t{p::load_le32(&c.host_mem[0x2004])} << 32);
    CHECK(got == sum);
    CHECK(out(8) == 0xEE);  // result length 8: nothing beyond it was written
  }
  SECTION("crc32") {
    const auto regs = fresh();
    const auto imm = peer.call(c, regs, {{0, a}}, 6);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(6, 0));
    CHECK(p::load_le32(&c.host_mem[0x2000]) == p::crc32(a));
    CHECK(out(4) == 0xEE);  // result length 4
  }
  SECTION("invalid arguments: vadd_i32 without a second input") {
    const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput, 0x10000, n, c),
                                    entry(p::kMrspFlagOutput, 0x30000, n, c, 0x2000)});
    REQUIRE(regs);
    const auto imm = peer.call(c, *regs, {{0, a}}, 4);
    REQUIRE(imm);
    CHECK(rc_of(*imm) == 0x04);
    CHECK(fn_of(*imm) == 4);
  }
  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
}

TEST_CASE("4 connections from 2 hosts with interleaved calls", "[sim]") {
  NaaSim naa(naa_address());
  REQUIRE(naa.ready());
  TestPeer h1(peer_address(2), naa_address());
  TestPeer h2(peer_address(3), naa_address());
  std::array<Connection, 4> c;
  std::array<TestPeer*, 4> host = {&h1, &h2, &h1, &h2};
  // Interleave the CM exchanges too: all REQs out before any RTU matters.
  for (std::size_t i = 0; i < 4; ++i)
    REQUIRE(host[i]->connect(c[i]) == 0);
  std::array<TestPeer::MrspResult, 4> regs;
  for (std::size_t i = 0; i < 4; ++i) {
    auto r = host[i]->mrsp(
        c[i], {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x200000U * (i + 1), 2048, c[i])});
    REQUIRE(r);
    REQUIRE_FALSE(r->error);
    regs[i] = *r;
  }
  const std::array<std::uint8_t, 4> fns = {1, 2, 1, 2};
  for (int round = 0; round < 3; ++round) {
    std::array<std::vector<std::uint8_t>, 4> in;
    // Post every call's input and immediate first, then collect the results.
    for (std::size_t i = 0; i < 4; ++i) {
      in[i] = pattern(2048, static_cast<std::uint8_t>(static_cast<std::size_t>(round) * 16 + i));
      (void)host[i]->post_write(c[i], regs[i].regions[0].naa_address, regs[i].regions[0].rkey,
                                in[i]);
      (void)host[i]->post_write(c[i], regs[i].regions[0].naa_address, regs[i].regions[0].rkey, {},
                                p::encode_call_immediate(fns[i], static_cast<std::uint32_t>(i)),
                                true);
    }
    for (std::size_t i = 0; i < 4; ++i) {
      INFO("round " << round << " connection " << i);
      const auto done = host[i]->wait_completion(c[i]);
      REQUIRE(done);
      REQUIRE(done->imm);
      CHECK(*done->imm == p::encode_result_immediate(fns[i], 0));
      CHECK(done->solicited);
      for (std::size_t b = 0; b < 2048; ++b) {
        REQUIRE(c[i].host_mem[b] == static_cast<std::uint8_t>(in[i][b] + fns[i]));
      }
    }
  }
  for (std::size_t i = 0; i < 4; ++i)
    host[i]->disconnect(c[i]);
  CHECK(h1.icrc_failures() + h2.icrc_failures() == 0);
  CHECK(naa.stat("kernel.dispatches") == 12);
}

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

namespace {

std::string run_command(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    out.append(buf, n);
  const int st = ::pclose(f);
  if (status != nullptr) *status = st;
  return out;
}

bool have_tshark() {
  return std::system("command -v tshark >/dev/null 2>&1") == 0;
}

// STYLE.md: tshark needs rpcordma off and the InfiniBand payload heuristics off, or a legal
// 1-byte RDMA WRITE payload plus pad is read as another protocol and flagged malformed.
const char* kTsharkOptions =
    " --disable-protocol rpcordma --disable-heuristic eth_over_ib --disable-heuristic mellanox_eoib"
    " --disable-heuristic smcr_infiniband --disable-heuristic smb_direct_infiniband"
    " --disable-heuristic iser_infiniband --disable-heuristic sdp_infiniband"
    " --disable-heuristic fc_infiniband --disable-heuristic lnet_ib"
    " --disable-heuristic rpcrdma_infiniband --disable-heuristic nvme_rdma"
    " --disable-heuristic drbd_rdma";

// One full session: connect, MRSP (3 regions), a call per built-in kernel, a READ, disconnect.
void full_session(TestPeer& peer, std::uint32_t mtu_enum) {
  Connection c;
  TestPeer::ConnectOptions o;
  o.mtu_enum = static_cast<std::uint8_t>(mtu_enum);
  REQUIRE(peer.connect(c, o) == 0);
  const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput, 0x10000, 3000, c),
                                  entry(p::kMrspFlagInput, 0x20000, 3000, c, 0x1000),
                                  entry(p::kMrspFlagOutput, 0x30000, 3000, c, 0x2000)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  for (std::uint8_t fn = 1; fn <= 6; ++fn) {
    const auto imm = peer.call(c, *regs, {{0, pattern(3000, fn)}, {1, pattern(1, fn)}}, fn);
    REQUIRE(imm);
    CHECK(rc_of(*imm) == 0);
  }
  (void)peer.post_read(c, 0x10000, regs->regions[0].rkey, 3000);
  REQUIRE(peer.wait_for([&] { return c.read_data.size() >= 3000; }));
  peer.disconnect(c);
}

}  // namespace

TEST_CASE("the pcap of a full session verifies and decodes in tshark without errors", "[sim]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("naa-sim-pcap-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string pcap = (dir / "session.pcap").string();
  {
    SimAndPeer rig({"--pcap", pcap});
    auto& [naa, peer] = rig;
    full_session(peer, 3);  // MTU 1024: multi-packet messages both ways
    CHECK(peer.icrc_failures() == 0);
    CHECK(naa.stop() == 0);  // flushes the pcap
  }
  // Our own check first: every frame's ICRC verifies with the IPv4 headers in the capture.
  p::PcapReader r;
  REQUIRE_FALSE(r.open(pcap));
  p::PcapRecord rec;
  std::size_t frames = 0;
  while (r.next(rec)) {
    const auto f = p::decode_roce_frame(rec.data);
    REQUIRE(f);
    CHECK(p::verify_icrc(f->headers, f->roce));
    ++frames;
  }
  CHECK(frames > 30);
  if (!have_tshark()) {
    const char* require = std::getenv("NAA_REQUIRE_TOOLS");
    if (require != nullptr && std::string(require) == "1")
      FAIL("tshark not found, and NAA_REQUIRE_TOOLS=1 (.ci/run) requires it");
    // CTest reports the test "Skipped" on this line if all else passed (naa_add_test).
    WARN("NAA_SKIP: tshark not found: the tshark decode check did not run");
    std::filesystem::remove_all(dir);
    return;
  }
  int st = 0;
  const std::string errors =
      run_command(std::string("tshark -r ") + pcap + kTsharkOptions +
                      " -Y '_ws.malformed || _ws.expert.severity == error' 2>/dev/null",
                  &st);
  CHECK(st == 0);
  CHECK(errors.empty());
  const std::string opcodes = run_command(std::string("tshark -r ") + pcap + kTsharkOptions +
                                          " -T fields -e infiniband.bth.opcode 2>/dev/null");
  CHECK(static_cast<std::size_t>(std::count(opcodes.begin(), opcodes.end(), '\n')) == frames);
  // CM, MRSP SENDs, data, ACKs and result traffic are all there.
  for (const char* op : {"100", "4", "10", "11", "17", "12", "13",
                         "15"}) {  // UD SEND, SEND, WRITE ONLY(_IMM), ACK, READ req/resp
    INFO("opcode " << op);
    CHECK(opcodes.find(std::string(op) + "\n") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("figures: cycles of a 64 B and a 1 MiB add1 call and cycles per wall second streaming",
          "[sim][figures]") {
  // Prints figures (STYLE.md: performance is reported, never asserted); asserts the results.
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.mtu_enum = 5;  // 4096
  o.host_mem_size = 1 << 20;
  REQUIRE(peer.connect(c, o) == 0);
  auto measure = [&](std::uint32_t size) {
    const auto regs =
        peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x100000, size, c)});
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    const auto in = pattern(size, 77);
    const std::uint64_t before = naa.stat("sim.work_cycles");
    const auto imm = peer.call(c, *regs, {{0, in}}, 1, 0, Ms(30000));
    REQUIRE(imm);
    CHECK(rc_of(*imm) == 0);
    for (std::size_t i = 0; i < size; i += 997)
      REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 1));
    REQUIRE(peer.wait_for(
        [&] { return naa.stat("transport.messages_completed") > 0 && c.in_write == false; }));
    return naa.stat("sim.work_cycles") - before;
  };
  const std::uint64_t small = measure(64);
  const std::uint64_t big = measure(1 << 20);
  WARN("add1 64 B call: " << small
                          << " simulated cycles (input write to result write-back, incl. ACKs)");
  WARN("add1 1 MiB call: " << big << " simulated cycles");
  // Streaming: back-to-back 256 KiB add1 calls.
  const auto regs =
      peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x100000, 256 << 10, c)});
  REQUIRE(regs);
  const auto in = pattern(256 << 10, 1);
  const std::uint64_t c0 = naa.stat("sim.work_cycles");
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    const auto imm = peer.call(c, *regs, {{0, in}}, 1, 0, Ms(30000));
    REQUIRE(imm);
    ++calls;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::uint64_t c1 = naa.stat("sim.work_cycles");
  WARN("streaming 256 KiB add1 calls: "
       << calls << " calls, " << (c1 - c0) << " simulated cycles in " << wall
       << " s wall = " << static_cast<std::uint64_t>(static_cast<double>(c1 - c0) / wall)
       << " simulated cycles per wall second");
  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
}

TEST_CASE("kernel watchdog: over --kernel-timeout-cycles the call answers 0x02 and stores nothing",
          "[sim]") {
  // add1 over 64 KiB costs about 1,024 cycles at W = 64 (model and RTL alike), 64 B a few.
  SimAndPeer rig({"--kernel-timeout-cycles", "100"});
  auto& [naa, peer] = rig;
  Connection big;
  REQUIRE(peer.connect(big) == 0);
  const auto regs =
      peer.mrsp(big, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x10000, 65536, big)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  std::fill(big.host_mem.begin(), big.host_mem.end(), std::uint8_t{0xEE});
  const auto in = pattern(65536, 5);
  auto imm = peer.call(big, *regs, {{0, in}}, 1);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0x02);
  CHECK(fn_of(*imm) == 1);
  // Nothing was written back to the host, and the NAA's region still holds the input rather
  // than input + 1: the watchdog discarded the kernel's results.
  CHECK(std::all_of(big.host_mem.begin(), big.host_mem.end(),
                    [](std::uint8_t b) { return b == 0xEE; }));
  (void)peer.post_read(big, 0x10000, regs->regions[0].rkey, 256);
  REQUIRE(peer.wait_for([&] { return big.read_data.size() >= 256; }));
  CHECK(std::equal(big.read_data.begin(), big.read_data.begin() + 256, in.begin()));

  // A kernel within the limit runs normally.
  Connection small;
  REQUIRE(peer.connect(small) == 0);
  const auto r2 =
      peer.mrsp(small, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x40000, 64, small)});
  REQUIRE(r2);
  REQUIRE_FALSE(r2->error);
  const auto in2 = pattern(64, 9);
  imm = peer.call(small, *r2, {{0, in2}}, 1);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0);
  CHECK(small.host_mem[7] == static_cast<std::uint8_t>(in2[7] + 1));
  const auto s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "kernel.timeouts") == 1);
  CHECK(NaaSim::stat_in(s, "kernel.dispatches") == 2);
  peer.disconnect(big);
  peer.disconnect(small);
}
