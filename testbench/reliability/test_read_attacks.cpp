// RDMA READ attacks (issue 12 finding 7): out of bounds, wrapping (va + len overflows 64 bits),
// wrong rkeys and regions without read permission must each draw NAK 0x62 (PROTOCOL.md 3: remote
// access error, QP to error) and no byte of the victim's region may leave the NAA. The check
// reads back naa-sim's capture and looks at every datagram the attacker's address was sent: no
// READ RESPONSE other than the one legitimate read of its own (zeroed) region, and no 8-byte run
// of the victim's random contents anywhere. A positive control finds those runs in the victim's
// own READ. Region rights (docs/sim/mrsp_handler.md): INPUT grants remote write and read, OUTPUT
// read, INTERNAL nothing, a region with neither INPUT nor OUTPUT nothing.
// naa-sim runs with --seed, so the test can work out the rkey of the attacker's own INTERNAL
// region (never advertised) from the seeded generator and show that even the exact rkey is
// refused for lack of permission. NAA_TEST_SEED fixes the seed (printed on failure).
// Addresses: 127.50.<n>.<m>.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <deque>
#include <functional>
#include <random>
#include <unordered_set>

#include "naa/protocol/mrsp.hpp"
#include "naa_capture.hpp"
#include "peer.hpp"
#include "seed.hpp"
#include "sim_tests.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;
namespace op = naa::protocol::opcode;

namespace {

constexpr std::uint64_t kAttackerAddr = 0x20000;  // the attacker's readable region ...
constexpr std::uint32_t kAttackerSize = 4096;
constexpr std::uint64_t kVictimAddr = 0x21000;  // ... and the victim's, right after it
constexpr std::uint32_t kVictimSize = 4096;
constexpr std::uint64_t kNoAccessAddr = 0x40000;  // attacker: neither INPUT nor OUTPUT
constexpr std::uint64_t kInternalAddr = 0x50000;  // attacker: INTERNAL
constexpr std::uint32_t kSmallSize = 256;

p::MrspRequestEntry region(std::uint8_t flags, std::uint64_t addr, std::uint32_t size,
                           const Connection& c) {
  const bool internal = (flags & p::kMrspFlagInternal) != 0;
  return p::MrspRequestEntry{flags, addr, internal ? 0 : c.host_va, internal ? 0 : c.host_rkey,
                             size};
}

struct Read {
  std::string name;
  std::uint64_t va = 0;
  std::uint32_t len = 0;
  std::uint32_t rkey = 0;
  std::string refusal;  // the MR check that must refuse it (mr_table.result.<refusal>)
};

// The rkey naa-sim gives the region placed right after the one with `prev_rkey`, when it runs
// with --seed `seed`: each placed region draws its tag from the seeded generator in request
// order, and the MR table hands out the lowest free index (docs/sim/mrsp_handler.md).
std::optional<std::uint32_t> next_rkey(std::uint64_t seed, std::uint32_t prev_rkey) {
  std::mt19937_64 g(seed);
  std::uint32_t prev_tag = static_cast<std::uint32_t>(g()) & 0xFFFFFFU;
  for (int i = 0; i < 100000; ++i) {
    const std::uint32_t tag = static_cast<std::uint32_t>(g()) & 0xFFFFFFU;
    if (prev_tag == prev_rkey >> 8) return tag << 8 | ((prev_rkey + 1) & 0xFFU);
    prev_tag = tag;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("READ attacks: out of bounds, wrapping, wrong rkey, no permission: NAK 0x62, no leak",
          "[adversarial][read]") {
  const std::uint64_t seed = naa::testbench::test_seed();  // NAA_TEST_SEED, or random
  INFO("NAA_TEST_SEED=" << seed << " repeats this run");
  TempPath pcap("read-attacks");
  NaaSim sim(naa_address(), {"--seed", std::to_string(seed), "--pcap", pcap.str()});
  REQUIRE(sim.ready());
  TestPeer victim_peer(peer_address(2), naa_address());
  TestPeer attacker(peer_address(3), naa_address());

  // The victim: one region with random contents.
  Connection victim;
  REQUIRE(victim_peer.connect(victim) == 0);
  const auto vr = victim_peer.mrsp(
      victim, {region(p::kMrspFlagInput | p::kMrspFlagOutput, kVictimAddr, kVictimSize, victim)});
  REQUIRE(vr);
  REQUIRE_FALSE(vr->error);
  const std::uint32_t victim_rkey = vr->regions.at(0).rkey;
  std::vector<std::uint8_t> secret(kVictimSize);
  std::mt19937_64 rng(seed);
  for (auto& b : secret)
    b = static_cast<std::uint8_t>(rng());
  (void)victim_peer.post_write(victim, kVictimAddr, victim_rkey, secret);
  const auto wa = victim_peer.wait_ack(victim);
  REQUIRE(wa);
  REQUIRE(wa->syndrome == p::kAethAck);

  // One attacker connection per READ (a NAK 0x62 puts the QP in error), each with a readable
  // region just below the victim's, a region without rights and an INTERNAL one.
  auto open_attacker = [&](Connection& c, TestPeer::MrspResult& regs) {
    REQUIRE(attacker.connect(c) == 0);
    const auto r = attacker.mrsp(
        c, {region(p::kMrspFlagInput | p::kMrspFlagOutput, kAttackerAddr, kAttackerSize, c),
            region(p::kMrspFlagSingleSend, kNoAccessAddr, kSmallSize, c),
            region(p::kMrspFlagInternal, kInternalAddr, kSmallSize, c)});
    REQUIRE(r);
    REQUIRE_FALSE(r->error);
    REQUIRE(r->regions.size() == 2);  // INTERNAL regions are not advertised
    regs = *r;
  };

  using Make = std::function<Read(const TestPeer::MrspResult&)>;
  const std::vector<Make> attacks = {
      [](const auto& r) {
        return Read{"crosses from its own region into the victim's", kAttackerAddr + 4000, 200,
                    r.regions[0].rkey, "out_of_bounds"};
      },
      [](const auto& r) {
        return Read{"the victim's addresses with its own rkey", kVictimAddr, 64, r.regions[0].rkey,
                    "out_of_bounds"};
      },
      [](const auto& r) {
        return Read{"one byte past the end", kAttackerAddr, kAttackerSize + 1, r.regions[0].rkey,
                    "out_of_bounds"};
      },
      [](const auto& r) {
        // va + len wraps to 0x20100, inside the region: a naive "va + len <= end" passes.
        return Read{"wrapping: va + len overflows into the region", 0ULL - 0x100, 0x20200,
                    r.regions[0].rkey, "out_of_bounds"};
      },
      [](const auto& r) {
        return Read{"wrapping: va at 2^64 - 1", ~0ULL, 2, r.regions[0].rkey, "out_of_bounds"};
      },
      [](const auto& r) {
        return Read{"huge length from the region start", kAttackerAddr, 0xFFFFFFFFU,
                    r.regions[0].rkey, "out_of_bounds"};
      },
      [&](const auto&) {
        return Read{"the victim's own rkey", kVictimAddr, 64, victim_rkey, "wrong_owner"};
      },
      [](const auto& r) {
        return Read{"its own rkey with a flipped tag bit", kAttackerAddr, 64,
                    r.regions[0].rkey ^ 0x100U, "bad_rkey"};
      },
      [&](const auto&) {
        return Read{"the victim's MR index with a guessed tag", kVictimAddr, 64,
                    (victim_rkey ^ 0x5A5A00U) | 0x100U, "bad_rkey"};
      },
      [](const auto& r) {
        return Read{"an MR index beyond the table", kAttackerAddr, 64,
                    (r.regions[0].rkey & ~0xFFU) | 0xFFU, "bad_rkey"};
      },
      [](const auto& r) {
        return Read{"a region granted no access (neither INPUT nor OUTPUT)", kNoAccessAddr, 64,
                    r.regions[1].rkey, "no_permission"};
      },
      [&](const auto& r) {
        const auto rkey = next_rkey(seed, r.regions[1].rkey);
        REQUIRE(rkey);
        return Read{"its own INTERNAL region with the exact rkey", kInternalAddr, 64, *rkey,
                    "no_permission"};
      },
  };

  // The test peer keeps a pointer to every connection it opened: they must outlive it.
  std::deque<Connection> conns;
  int naks = 0;
  for (const Make& make : attacks) {
    Connection& c = conns.emplace_back();
    TestPeer::MrspResult regs;
    open_attacker(c, regs);
    const Read a = make(regs);
    INFO("attack: " << a.name);
    const std::string key = "mr_table.result." + a.refusal;
    const std::uint64_t refused_before = sim.stat(key);
    const std::uint32_t psn = attacker.post_read(c, a.va, a.rkey, a.len);
    const auto ack = attacker.wait_ack(c);
    REQUIRE(ack);
    CHECK(ack->syndrome == p::kNakRemoteAccessError);
    CHECK(ack->psn == psn);
    naks += ack->syndrome == p::kNakRemoteAccessError ? 1 : 0;
    CHECK(c.read_responses == 0);
    CHECK(c.read_data.empty());
    CHECK(sim.stat(key) == refused_before + 1);  // refused by the check it was aimed at
    // The QP went to error: the NAA disconnects (our peer answers its DREQ).
    CHECK(attacker.wait_for([&] { return c.dreqs_received == 1; }));
  }

  // A duplicate READ is replayed from the request as it arrives again: its RETH is checked
  // again, so a replay that points elsewhere gets nothing (and, as a duplicate, no NAK).
  {
    Connection& c = conns.emplace_back();
    TestPeer::MrspResult regs;
    open_attacker(c, regs);
    const std::uint32_t psn = attacker.post_read(c, kAttackerAddr, regs.regions[0].rkey, 64);
    REQUIRE(attacker.wait_for([&] { return c.read_data.size() == 64; }));
    CHECK(c.read_data == std::vector<std::uint8_t>(64, 0));  // its own region: zeros
    c.read_data.clear();
    c.read_responses = 0;
    c.acks.clear();
    p::PacketHeaders h;
    h.bth.opcode = op::kReadRequest;
    h.bth.dest_qpn = c.naa_qpn;
    h.bth.psn = psn;  // a duplicate
    h.bth.ack_req = true;
    for (const auto& [va, rkey] :
         {std::pair{kVictimAddr, regs.regions[0].rkey}, std::pair{kVictimAddr, victim_rkey},
          std::pair{kAttackerAddr + 4032, regs.regions[0].rkey}}) {
      h.reth = p::Reth{va, rkey, 128};
      attacker.send_packet(h, {});
    }
    // A fence instead of a sleep (issue 26 item 11): a new READ of its own region on the same
    // QP, answered in order after anything the duplicates could have drawn.
    (void)attacker.post_read(c, kAttackerAddr, regs.regions[0].rkey, 32);
    REQUIRE(attacker.wait_for([&] { return c.read_data.size() >= 32; }));
    CHECK(c.read_responses == 1);  // the fence's only
    CHECK(c.read_data == std::vector<std::uint8_t>(32, 0));
    CHECK(sim.stat("transport.duplicates") == 3);
    attacker.disconnect(c);
  }

  // Positive control: the victim reads its own region and gets its bytes.
  (void)victim_peer.post_read(victim, kVictimAddr, victim_rkey, kVictimSize);
  REQUIRE(victim_peer.wait_for([&] { return victim.read_data.size() == kVictimSize; }));
  CHECK(victim.read_data == secret);
  victim_peer.disconnect(victim);
  CHECK(sim.stat("transport.qp_errors") == attacks.size());
  REQUIRE(sim.stop() == 0);  // naa-sim did not die on any of it

  // Every datagram sent to the attacker's address, against every 8-byte run of the secret.
  std::unordered_set<std::uint64_t> runs;
  auto run_at = [](const std::uint8_t* b) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v = v << 8 | b[i];
    return v;
  };
  for (std::size_t i = 0; i + 8 <= secret.size(); ++i)
    runs.insert(run_at(secret.data() + i));
  auto leaks = [&](p::ByteView bytes) {
    for (std::size_t i = 0; i + 8 <= bytes.size(); ++i)
      if (runs.count(run_at(bytes.data() + i)) != 0) return true;
    return false;
  };
  const auto cap = read_capture(pcap.str());
  REQUIRE(cap);
  const std::uint32_t attacker_ip = parse_ipv4(peer_address(3));
  const std::uint32_t victim_ip = parse_ipv4(peer_address(2));
  int read_responses = 0, nak62 = 0, to_attacker = 0;
  bool victim_saw_secret = false;
  for (const auto& d : *cap) {
    if (d.dst_ip == victim_ip && leaks(d.roce)) victim_saw_secret = true;
    if (d.dst_ip != attacker_ip) continue;
    ++to_attacker;
    const auto v = d.decode();
    REQUIRE(v);
    CHECK_FALSE(leaks(d.roce));  // headers, payload and ICRC alike
    const std::uint8_t opc = v->headers.bth.opcode;
    if (opc >= op::kReadResponseFirst && opc <= op::kReadResponseOnly) {
      ++read_responses;
      // The legitimate reads of its own zeroed region: 64 bytes, then the duplicates' fence (32).
      CHECK(v->payload.size() == (read_responses == 1 ? 64U : 32U));
    }
    if (opc == op::kAcknowledge && v->headers.aeth->syndrome == p::kNakRemoteAccessError) ++nak62;
  }
  CHECK(to_attacker > 0);
  CHECK(read_responses == 2);
  CHECK(nak62 == naks);
  CHECK(nak62 == static_cast<int>(attacks.size()));
  CHECK(victim_saw_secret);  // the scan does find the secret where it was legitimately sent
}
