// Fault decisions keyed on the packet (FaultKey::packet, docs/adr/0003 "Keyed decisions"): the
// n-th transmission of a packet (destination QPN, PSN, request or ACK) meets the same fate
// whatever else crosses the port, so go-back-N and IRN can be run against the same losses.
// NAA_TEST_SEED sets the seed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "naa/impair/fault_spec.hpp"
#include "naa/impair/held_queue.hpp"
#include "naa/impair/injector.hpp"
#include "seed.hpp"

using namespace naa::impair;

namespace {

// A datagram with just a BTH (and a payload byte): opcode, destination QPN, PSN.
std::vector<std::uint8_t> packet(std::uint8_t opcode, std::uint32_t qpn, std::uint32_t psn) {
  std::vector<std::uint8_t> d(16, 0);
  d[0] = opcode;
  d[5] = static_cast<std::uint8_t>(qpn >> 16);
  d[6] = static_cast<std::uint8_t>(qpn >> 8);
  d[7] = static_cast<std::uint8_t>(qpn);
  d[9] = static_cast<std::uint8_t>(psn >> 16);
  d[10] = static_cast<std::uint8_t>(psn >> 8);
  d[11] = static_cast<std::uint8_t>(psn);
  return d;
}

FaultSpec keyed(const char* text) {
  FaultSpec f;
  std::string why;
  REQUIRE(parse_fault_spec(text, f, &why));
  return f;
}

using Fate = std::tuple<bool, bool, bool, bool, std::uint64_t>;
Fate fate(const Injector::Decision& d) {
  return {d.drop, d.duplicate, d.reorder, d.corrupt, d.drop ? 0 : d.bit};
}

}  // namespace

TEST_CASE("impair keyed: key=packet and key=sequence parse, a bad key is refused", "[impair]") {
  FaultSpec f;
  std::string why;
  REQUIRE(parse_fault_spec("loss=0.1,key=packet", f, &why));
  CHECK(f.key == FaultKey::packet);
  CHECK(f.loss == 0.1);
  REQUIRE(parse_fault_spec("key=sequence,loss=0.2", f, &why));
  CHECK(f.key == FaultKey::sequence);
  REQUIRE(parse_fault_spec("loss=0.2", f, &why));
  CHECK(f.key == FaultKey::sequence);  // the default
  f.loss = 0.5;
  CHECK_FALSE(parse_fault_spec("loss=0.1,key=psn", f, &why));
  CHECK(why.find("key must be sequence or packet") != std::string::npos);
  CHECK(f.loss == 0.5);  // left alone
  FaultKey k = FaultKey::sequence;
  CHECK(parse_fault_key("packet", k));
  CHECK(k == FaultKey::packet);
  CHECK_FALSE(parse_fault_key("Packet", k));
  CHECK(k == FaultKey::packet);
}

TEST_CASE("impair keyed: a packet's fate depends on (QPN, PSN, attempt) only, not on the order",
          "[impair]") {
  const std::uint64_t seed = naa::testbench::test_seed();  // NAA_TEST_SEED, or random
  INFO("NAA_TEST_SEED=" << seed);
  const FaultSpec spec = keyed("loss=0.2,dup=0.1,reorder=0.1,corrupt=0.1,key=packet");
  // Go-back-N: PSNs 0..199 of QP 0x12, then 120..199 again (a rewind after a loss at 120).
  std::vector<std::uint32_t> gbn;
  for (std::uint32_t psn = 0; psn < 200; ++psn)
    gbn.push_back(psn);
  for (std::uint32_t psn = 120; psn < 200; ++psn)
    gbn.push_back(psn);
  // Selective repeat: the same packets, each retransmission right after the first try, in a
  // shuffled order, with ACKs of another PSN space interleaved.
  std::vector<std::uint32_t> sr;
  for (std::uint32_t psn = 0; psn < 200; ++psn) {
    sr.push_back(psn);
    if (psn >= 120) sr.push_back(psn);
  }
  std::mt19937_64 shuffle(seed);
  std::shuffle(sr.begin(), sr.end(), shuffle);

  auto run = [&](const std::vector<std::uint32_t>& order, bool acks_between) {
    Injector inj(spec, direction_seed(seed, Direction::tx));
    std::map<std::pair<std::uint32_t, std::uint32_t>, Fate> fates;  // (psn, attempt)
    std::map<std::uint32_t, std::uint32_t> tries;
    for (const std::uint32_t psn : order) {
      if (acks_between) (void)inj.decide(packet(0x11, 0x12, psn));  // ACKs: keyed apart
      const auto d = inj.decide(packet(0x07, 0x12, psn));
      fates[{psn, tries[psn]++}] = fate(d);
    }
    CHECK(inj.counters().keyed == order.size() * (acks_between ? 2 : 1));
    return fates;
  };
  const auto a = run(gbn, false);
  const auto b = run(sr, true);
  REQUIRE(a.size() == 280);
  CHECK(a == b);
  // The second attempt of a packet is drawn anew: over 80 retransmissions some fates differ
  // from the first try's (with loss 0.2 the chance that all 80 agree is negligible).
  int differ = 0;
  for (std::uint32_t psn = 120; psn < 200; ++psn)
    differ += a.at({psn, 0}) != a.at({psn, 1}) ? 1 : 0;
  CHECK(differ > 0);
  // Another QP, another seed: other fates.
  Injector other_qp(spec, direction_seed(seed, Direction::tx));
  Injector other_seed(spec, direction_seed(seed + 1, Direction::tx));
  int same_qp = 0, same_seed = 0;
  for (std::uint32_t psn = 0; psn < 200; ++psn) {
    same_qp += fate(other_qp.decide(packet(0x07, 0x13, psn))) == a.at({psn, 0}) ? 1 : 0;
    same_seed += fate(other_seed.decide(packet(0x07, 0x12, psn))) == a.at({psn, 0}) ? 1 : 0;
  }
  CHECK(same_qp < 200);
  CHECK(same_seed < 200);
}

TEST_CASE("impair keyed: the loss rate holds, and a datagram without a BTH uses the sequence",
          "[impair]") {
  const std::uint64_t seed = naa::testbench::test_seed();  // NAA_TEST_SEED, or random
  INFO("NAA_TEST_SEED=" << seed);
  Injector inj(keyed("loss=0.25,key=packet"), seed);
  int lost = 0;
  constexpr int kN = 20000;
  for (int i = 0; i < kN; ++i)
    lost += inj.decide(packet(0x0A, static_cast<std::uint32_t>(0x11 + i % 4),
                              static_cast<std::uint32_t>(i)))
                    .drop
                ? 1
                : 0;
  // Binomial(20000, 0.25): sd 61; 6 sd either side.
  CHECK(lost > 5000 - 370);
  CHECK(lost < 5000 + 370);

  // Too short for a BTH: decided by the sequence, exactly as decide() would.
  Injector keyed_inj(keyed("loss=0.5,corrupt=0.5,key=packet"), 5);
  Injector seq_inj(keyed("loss=0.5,corrupt=0.5"), 5);
  const std::array<std::uint8_t, 8> short_datagram{};
  for (int i = 0; i < 50; ++i) {
    CHECK(fate(keyed_inj.decide(short_datagram)) == fate(seq_inj.decide()));
  }
  CHECK(keyed_inj.counters().keyed == 0);
  // key=sequence ignores the bytes.
  Injector seq_a(keyed("loss=0.5"), 9);
  Injector seq_b(keyed("loss=0.5"), 9);
  for (std::uint32_t i = 0; i < 50; ++i)
    CHECK(seq_a.decide(packet(0x07, 0x12, i)).drop == seq_b.decide().drop);
}

TEST_CASE("impair keyed: pass() with the datagram's bytes decides by its key", "[impair]") {
  std::vector<std::uint32_t> wire;
  HeldQueue<std::uint32_t, int> held;
  auto steps = make_steps(
      /*discard=*/[](std::vector<std::uint8_t>&) {},
      /*deliver_copy=*/[](std::vector<std::uint8_t>&) {},
      /*corrupt=*/[](std::vector<std::uint8_t>&, std::uint64_t) {},
      /*keep=*/[](std::vector<std::uint8_t>& d) { return std::uint32_t{d[11]}; },
      /*deliver=*/[&](std::vector<std::uint8_t>& d) { wire.push_back(d[11]); },
      /*release=*/[&](std::uint32_t& psn) { wire.push_back(psn); });
  const FaultSpec spec = keyed("loss=0.5,key=packet");
  Injector forward(spec, 3), backward(spec, 3), reference(spec, 3);
  std::vector<std::uint32_t> expect;
  for (std::uint32_t psn = 0; psn < 64; ++psn) {
    if (!reference.decide_packet(0x12, psn, false, 0).drop) expect.push_back(psn);
  }
  for (std::uint32_t psn = 0; psn < 64; ++psn) {
    auto d = packet(0x07, 0x12, psn);
    pass(forward, held, d, d, 0, steps);
  }
  CHECK(wire == expect);
  wire.clear();
  for (std::uint32_t psn = 64; psn-- > 0;) {
    auto d = packet(0x07, 0x12, psn);
    pass(backward, held, d, d, 0, steps);
  }
  std::reverse(wire.begin(), wire.end());
  CHECK(wire == expect);
}
