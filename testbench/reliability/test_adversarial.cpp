// Adversarial access (issue 6, deliverable 4): a hostile host built from the protocol library
// alone (testbench/sim's TestPeer) attacks naa-sim while a victim connection holds a region with
// known contents. Every attack must be refused as PROTOCOL.md says (NAK 0x62 remote access error,
// NAK 0x61 invalid request, an MRSP error, or silence for CM messages that name nobody), and
// afterwards the victim's NAA memory must be byte-identical (read back by RDMA READ) and its calls
// must still work.
#include <catch2/catch.hpp>

#include <deque>
#include <functional>
#include <random>

#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"
#include "peer.hpp"
#include "seed.hpp"
#include "support.hpp"
#include "test_addresses.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;

namespace {

constexpr std::uint64_t kVictimAddr = 0x100000;
constexpr std::uint32_t kVictimSize = 4096;
constexpr std::uint64_t kAttackerAddr = 0x200000;
constexpr std::uint32_t kAttackerSize = 4096;

p::MrspRequestEntry region(std::uint8_t flags, std::uint64_t addr, std::uint32_t size,
                           const Connection& c) {
  return p::MrspRequestEntry{flags, addr, c.host_va, c.host_rkey, size};
}

struct Arena {
  NaaSim sim;
  TestPeer victim_peer;
  TestPeer attacker_peer;
  Connection victim;
  TestPeer::MrspResult victim_regions;
  std::vector<std::uint8_t> victim_bytes;

  // naa-sim on .1 of the test's address block, the victim on .2, the attacker on .3.
  Arena()
      : sim(test_addresses().ip(1)),
        victim_peer(test_addresses().ip(2), test_addresses().ip(1)),
        attacker_peer(test_addresses().ip(3), test_addresses().ip(1)) {
    REQUIRE(sim.ready());
    REQUIRE(victim_peer.connect(victim) == 0);
    const auto r = victim_peer.mrsp(
        victim, {region(p::kMrspFlagInput | p::kMrspFlagOutput, kVictimAddr, kVictimSize, victim)});
    REQUIRE(r);
    REQUIRE_FALSE(r->error);
    victim_regions = *r;
    victim_bytes.resize(kVictimSize);
    std::mt19937 rng(7);
    for (auto& b : victim_bytes)
      b = static_cast<std::uint8_t>(rng());
    (void)victim_peer.post_write(victim, kVictimAddr, victim_regions.regions[0].rkey, victim_bytes);
    const auto a = victim_peer.wait_ack(victim);
    REQUIRE(a);
    REQUIRE(a->syndrome == p::kAethAck);
  }

  // The victim's NAA memory, read back by RDMA READ.
  std::vector<std::uint8_t> victim_memory() {
    victim.read_data.clear();
    (void)victim_peer.post_read(victim, kVictimAddr, victim_regions.regions[0].rkey, kVictimSize);
    victim_peer.wait_for([&] { return victim.read_data.size() >= kVictimSize; });
    return victim.read_data;
  }

  // The victim still works: its memory is what it wrote, and an add1 call computes on it.
  void check_victim() {
    CHECK(victim_memory() == victim_bytes);
    const auto imm = victim_peer.call(victim, victim_regions, {{0, victim_bytes}}, 1);
    REQUIRE(imm);
    CHECK(*imm == 0);  // PROTOCOL.md 5.2: success is immediate 0
    for (std::size_t i = 0; i < kVictimSize; ++i) {
      REQUIRE(victim.host_mem[i] == static_cast<std::uint8_t>(victim_bytes[i] + 1));
    }
    // add1 updated the region in place; the next checks expect the new contents.
    for (auto& b : victim_bytes)
      b = static_cast<std::uint8_t>(b + 1);
  }

  // A fresh attacker connection with its own region (INPUT only unless told). Connections live
  // in a deque: TestPeer keeps pointers to them.
  struct Attacker {
    Connection c;
    TestPeer::MrspResult r;
  };
  std::deque<Attacker> attackers;
  Attacker& attacker(std::uint8_t flags = p::kMrspFlagInput, std::uint8_t initiator_depth = 1) {
    Attacker& a = attackers.emplace_back();
    TestPeer::ConnectOptions o;
    o.initiator_depth = initiator_depth;
    REQUIRE(attacker_peer.connect(a.c, o) == 0);
    const auto r = attacker_peer.mrsp(a.c, {region(flags, kAttackerAddr, kAttackerSize, a.c)});
    REQUIRE(r);
    REQUIRE_FALSE(r->error);
    a.r = *r;
    return a;
  }
};

// Sends one WRITE and returns the syndrome of the answer (or 0xFF if none came).
std::uint8_t write_answer(TestPeer& peer, Connection& c, std::uint64_t va, std::uint32_t rkey,
                          std::vector<std::uint8_t> data) {
  (void)peer.post_write(c, va, rkey, data);
  const auto a = peer.wait_ack(c);
  return a ? a->syndrome : 0xFF;
}

}  // namespace

TEST_CASE("hostile RDMA accesses are refused and the victim is untouched", "[adversarial]") {
  Arena arena;
  const std::uint32_t victim_rkey = arena.victim_regions.regions[0].rkey;
  const std::vector<std::uint8_t> junk(64, 0xA5);
  const std::uint64_t seed = seed_for("hostile RDMA accesses");  // NAA_TEST_SEED
  INFO("seed " << seed << " (from NAA_TEST_SEED=" << test_seed() << ")");
  std::mt19937_64 rng(seed);

  SECTION("guessed rkeys") {
    for (int i = 0; i < 16; ++i) {
      auto& [c, r] = arena.attacker();
      std::uint32_t guess = static_cast<std::uint32_t>(rng());
      if (guess == victim_rkey || guess == r.regions[0].rkey) guess ^= 0x100;
      CHECK(write_answer(arena.attacker_peer, c, kVictimAddr, guess, junk) ==
            p::kNakRemoteAccessError);
    }
    // Every index with every tag but the right one: the low 8 bits alone are not enough.
    auto& [c, r] = arena.attacker();
    CHECK(write_answer(arena.attacker_peer, c, kVictimAddr, (victim_rkey & 0xFF) | 0xABCD00,
                       junk) == p::kNakRemoteAccessError);
  }
  SECTION("another connection's rkey") {
    auto& [c, r] = arena.attacker();
    CHECK(write_answer(arena.attacker_peer, c, kVictimAddr, victim_rkey, junk) ==
          p::kNakRemoteAccessError);
    auto& [c2, r2] = arena.attacker();
    (void)arena.attacker_peer.post_read(c2, kVictimAddr, victim_rkey, 64);
    const auto a = arena.attacker_peer.wait_ack(c2);
    REQUIRE(a);
    CHECK(a->syndrome == p::kNakRemoteAccessError);
    CHECK(c2.read_data.empty());
  }
  SECTION("out of bounds and wrapping accesses with the attacker's own rkey") {
    const std::vector<std::pair<std::uint64_t, std::uint32_t>> cases = {
        {kAttackerAddr + kAttackerSize - 8, 16},  // runs past the end
        {kAttackerAddr - 8, 16},                  // starts before
        {kAttackerAddr + kAttackerSize, 1},       // one past the end
        {0xFFFFFFFFFFFFFFF0ULL, 0x20},            // va + len wraps around 2^64
        {kAttackerAddr + 16, 0xFFFFFFF0U},        // length wraps the region
        {kVictimAddr, 64},                        // the victim's address, own rkey
    };
    for (const auto& [va, len] : cases) {
      INFO("va " << va << " len " << len);
      auto& [c, r] = arena.attacker();
      // A DMA length larger than one packet is refused at the first packet, before any data.
      p::PacketHeaders h;
      h.bth.opcode = p::opcode::kWriteFirst;
      h.bth.dest_qpn = c.naa_qpn;
      h.bth.psn = c.send_psn;
      h.bth.ack_req = true;
      h.reth = p::Reth{va, r.regions[0].rkey, len};
      if (len <= c.mtu) {
        CHECK(write_answer(arena.attacker_peer, c, va, r.regions[0].rkey,
                           std::vector<std::uint8_t>(len, 0x5A)) == p::kNakRemoteAccessError);
      } else {
        std::vector<std::uint8_t> payload(c.mtu, 0x5A);
        arena.attacker_peer.send_packet(h, payload);
        const auto a = arena.attacker_peer.wait_ack(c);
        REQUIRE(a);
        CHECK(a->syndrome == p::kNakRemoteAccessError);
      }
    }
  }
  SECTION("writing an OUTPUT-only region and READ without a granted initiator depth") {
    auto& [c, r] = arena.attacker(p::kMrspFlagOutput);
    CHECK(write_answer(arena.attacker_peer, c, kAttackerAddr, r.regions[0].rkey, junk) ==
          p::kNakRemoteAccessError);
    auto& [c2, r2] = arena.attacker(p::kMrspFlagInput, 0);  // asks for no READs
    (void)arena.attacker_peer.post_read(c2, kAttackerAddr, r2.regions[0].rkey, 64);
    const auto a = arena.attacker_peer.wait_ack(c2);
    REQUIRE(a);
    CHECK(a->syndrome == p::kNakInvalidRequest);
  }
  SECTION("zero-length accesses skip the rkey check and touch nothing") {
    auto& [c, r] = arena.attacker();
    CHECK(write_answer(arena.attacker_peer, c, kVictimAddr, 0xDEAD0000, {}) == p::kAethAck);
    CHECK(write_answer(arena.attacker_peer, c, kVictimAddr, victim_rkey, {}) == p::kAethAck);
    (void)arena.attacker_peer.post_read(c, kVictimAddr, victim_rkey, 0);
    arena.attacker_peer.drain(Ms(100));
    CHECK(c.read_data.empty());
    // The connection is still healthy: a normal write of its own region is accepted.
    CHECK(write_answer(arena.attacker_peer, c, kAttackerAddr, r.regions[0].rkey, junk) ==
          p::kAethAck);
  }
  CHECK(arena.sim.stat("mr_table.result.ok") > 0);
  arena.check_victim();
  CHECK(arena.victim_peer.icrc_failures() == 0);
  CHECK(arena.attacker_peer.icrc_failures() == 0);
}

TEST_CASE("hostile MRSP messages are answered with errors, the victim is untouched",
          "[adversarial]") {
  Arena arena;
  auto mrsp_raw = [&](Connection& c, const std::vector<std::uint8_t>& msg) -> std::optional<int> {
    (void)arena.attacker_peer.post_send(c, msg, true);
    const auto done = arena.attacker_peer.wait_completion(c, Ms(2000));
    if (!done || !done->is_send) return std::nullopt;
    const auto m = p::decode_mrsp(done->data);
    if (!m) return -1;
    if (const auto* e = std::get_if<p::MrspError>(&*m)) return e->code;
    return 0;  // an advertisement
  };
  auto entries_msg = [](const std::vector<p::MrspRequestEntry>& e) {
    std::vector<std::uint8_t> msg(p::mrsp_request_size(e.size()));
    REQUIRE(p::encode_mrsp_request(e, msg));
    return msg;
  };
  Connection c;
  REQUIRE(arena.attacker_peer.connect(c) == 0);
  const auto in = p::kMrspFlagInput;

  SECTION("overlapping another connection's region") {
    CHECK(mrsp_raw(c, entries_msg({region(in, kVictimAddr + 100, 64, c)})) ==
          p::kMrspErrorInvalidAddress);
    CHECK(mrsp_raw(c, entries_msg({region(in, kVictimAddr - 64, 128, c)})) ==
          p::kMrspErrorInvalidAddress);
  }
  SECTION("overlapping itself") {
    CHECK(mrsp_raw(c, entries_msg({region(in, kAttackerAddr, 128, c),
                                   region(in, kAttackerAddr + 64, 128, c)})) ==
          p::kMrspErrorInvalidAddress);
  }
  SECTION("out of range addresses and sizes") {
    CHECK(mrsp_raw(c, entries_msg({region(in, (1ULL << 56) - 4096, 64, c)})) ==
          p::kMrspErrorInvalidAddress);  // beyond the 4 GiB memory
    CHECK(mrsp_raw(c, entries_msg({region(in, (4ULL << 30) - 64, 128, c)})) ==
          p::kMrspErrorNotEnoughMemory);  // runs past its end
    CHECK(mrsp_raw(c, entries_msg({region(in, kAttackerAddr, 0, c)})) ==
          p::kMrspErrorInvalidAddress);  // empty
  }
  SECTION("more than 32 regions") {
    std::vector<p::MrspRequestEntry> e;
    for (std::uint64_t i = 0; i < 33; ++i)
      e.push_back(region(in, 0x400000 + i * 0x1000, 64, c));
    CHECK(mrsp_raw(c, entries_msg(e)) == p::kMrspErrorTooManyRegions);
  }
  SECTION("count and length disagree, truncated, unknown type") {
    auto msg = entries_msg({region(in, kAttackerAddr, 64, c)});
    msg[1] = 2;  // says two entries, carries one
    CHECK(mrsp_raw(c, msg) == p::kMrspErrorInvalidAddress);
    CHECK(mrsp_raw(c, {0x01, 0x00}) == p::kMrspErrorInvalidAddress);  // shorter than a header
    CHECK(mrsp_raw(c, {0x03, 0x00, 0x00, 0x00}) == p::kMrspErrorInvalidAddress);
    msg = entries_msg({region(in, kAttackerAddr, 64, c)});
    msg.push_back(0);  // one trailing byte
    CHECK(mrsp_raw(c, msg) == p::kMrspErrorInvalidAddress);
  }
  SECTION("oversized: more than the receive buffer holds is an invalid request") {
    std::vector<std::uint8_t> msg(p::kMrspMaxMessageSize + 1024, 0);
    msg[0] = 0x01;
    msg[1] = 0xFF;
    (void)arena.attacker_peer.post_send(c, msg, true);
    bool nak = false;
    arena.attacker_peer.wait_for([&] {
      for (const auto& a : c.acks)
        nak = nak || a.syndrome == p::kNakInvalidRequest;
      return nak;
    });
    CHECK(nak);
  }
  CHECK(arena.sim.stat("mrsp.advertisements") == 1);  // the victim's only
  arena.check_victim();
}

TEST_CASE("CM messages with wrong comm IDs or QPNs, DREQ for another connection", "[adversarial]") {
  Arena arena;
  const auto& v = arena.victim;
  auto send_cm = [&](p::CmBody body) {
    p::MadHeader h;
    h.transaction_id = 0x1234;
    arena.attacker_peer.send_mad(p::CmMad{h, std::move(body)});
  };
  auto drep_count = [&] {
    std::size_t n = 0;
    for (const auto& m : arena.attacker_peer.cm_inbox())
      n += std::holds_alternative<p::CmDrep>(m.body) ? 1U : 0U;
    return n;
  };
  // DREQ naming the victim's connection exactly, but from the attacker's address.
  p::CmDreq dreq;
  dreq.local_comm_id = v.my_comm_id;
  dreq.remote_comm_id = v.naa_comm_id;
  dreq.remote_qpn = v.naa_qpn;
  send_cm(dreq);
  // DREQ with the victim's comm ID but a wrong QPN, and with a wrong comm ID.
  dreq.remote_qpn = v.naa_qpn ^ 0x100;
  send_cm(dreq);
  dreq.remote_qpn = v.naa_qpn;
  dreq.remote_comm_id = v.naa_comm_id ^ 1;
  send_cm(dreq);
  // Always answered (PROTOCOL.md 4), never acted on.
  CHECK(arena.attacker_peer.wait_for([&] { return drep_count() == 3; }));
  // RTU and REJ with the victim's comm IDs from the attacker's address.
  p::CmRej rej;
  rej.local_comm_id = v.my_comm_id;
  rej.remote_comm_id = v.naa_comm_id;
  rej.reason = 28;
  send_cm(rej);
  p::CmRtu rtu;
  rtu.local_comm_id = v.my_comm_id;
  rtu.remote_comm_id = v.naa_comm_id;
  send_cm(rtu);
  // A REQ reusing the victim's comm ID and QPN from another address is a new connection, not a
  // duplicate of the victim's (the duplicate-REQ match includes the peer's address, PROTOCOL.md
  // 4): a new QPN, no duplicate counted, and exactly two connections.
  const auto dup_before = arena.sim.stat("cm.dup_req");
  Connection c;
  TestPeer::ConnectOptions impersonate;
  impersonate.comm_id = v.my_comm_id;
  impersonate.local_qpn = v.my_qpn;
  arena.attacker_peer.send_req(c, impersonate);
  REQUIRE(c.my_comm_id == v.my_comm_id);
  REQUIRE(c.my_qpn == v.my_qpn);
  const auto rep = arena.attacker_peer.wait_rep(c);
  REQUIRE(rep);
  CHECK(rep->local_qpn != v.naa_qpn);
  CHECK(arena.sim.stat("cm.dup_req") == dup_before);
  CHECK(arena.sim.stat("cm.connections") == 2);
  // The victim's own DREQ with a wrong QPN is ignored too (its connection survives it).
  p::CmDreq own;
  own.local_comm_id = v.my_comm_id;
  own.remote_comm_id = v.naa_comm_id;
  own.remote_qpn = v.naa_qpn ^ 0x100;
  p::MadHeader h;
  h.transaction_id = 0x77;
  arena.victim_peer.send_mad(p::CmMad{h, own});
  arena.victim_peer.drain(Ms(100));
  CHECK(arena.sim.stat("cm.released") == 0);
  arena.check_victim();
}
