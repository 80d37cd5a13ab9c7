// Secrets and --seed (issue 12 finding 1; docs/sim/naa-sim.md "Secrets and --seed"): without
// --seed, rkey tags, CM comm IDs and the host's starting PSNs come from the OS random source, so
// the same traffic gets different values on every run; with the same --seed they repeat.
// Addresses: 127.50.<n>.<m>.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "eventually.hpp"
#include "peer.hpp"
#include "sim_tests.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;

namespace {

struct Secrets {
  std::vector<std::uint32_t> rkeys;
  std::vector<std::uint32_t> comm_ids;
  std::vector<std::uint32_t> start_psns;  // the REP's: the host's first PSN
  std::uint64_t seeded = 2;
  friend bool operator==(const Secrets&, const Secrets&) = default;
};

// One naa-sim run with fixed traffic: two connections, each placing three regions.
Secrets run_once(const std::vector<std::string>& args) {
  Secrets out;
  NaaSim sim(NaaSim::unseeded, naa_address(), args);  // these tests seed it, or test unseeded
  REQUIRE(sim.ready());
  TestPeer peer(peer_address(2), naa_address());
  for (int k = 0; k < 2; ++k) {
    Connection c;
    TestPeer::ConnectOptions o;
    o.starting_psn = 0x1000;
    REQUIRE(peer.connect(c, o) == 0);
    out.comm_ids.push_back(c.naa_comm_id);
    out.start_psns.push_back(c.send_psn);
    const std::uint8_t io = p::kMrspFlagInput | p::kMrspFlagOutput;
    const auto regs = peer.mrsp(c, {entry(io, 0x10000, 64, c), entry(io, 0x20000, 64, c),
                                    entry(p::kMrspFlagOutput, 0x30000, 64, c)});
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    REQUIRE(regs->regions.size() == 3);
    for (const auto& r : regs->regions)
      out.rkeys.push_back(r.rkey);
    peer.disconnect(c);
  }
  out.seeded = sim.stat("naa-sim.seeded");
  CHECK(sim.stop() == 0);
  return out;
}

// One run of 40 SENDs to an unknown QP through --fault-rx loss=0.5: which of them the fault
// injector dropped, read datagram by datagram from naa-sim's counters (a 40-bit pattern, so a
// replay that matches by chance has probability 2^-40; equal loss counts alone would match one
// run in eight).
std::vector<bool> loss_pattern(const std::vector<std::string>& args, const std::string& err = {}) {
  std::vector<bool> lost;
  NaaSim sim(NaaSim::unseeded, naa_address(), args, err);
  REQUIRE(sim.ready());
  TestPeer peer(peer_address(2), naa_address());
  std::uint64_t losses = 0;
  for (std::uint32_t i = 0; i < 40; ++i) {
    p::PacketHeaders h;
    h.bth.opcode = p::opcode::kSendOnly;
    h.bth.dest_qpn = 0x77;
    h.bth.psn = i;
    const std::vector<std::uint8_t> payload(16, static_cast<std::uint8_t>(i));
    peer.send_packet(h, payload);
    // Datagram i's fate is decided once it is lost or has reached the receive path.
    std::string s;
    const auto decided = [&] {
      s = sim.stats_text();
      return NaaSim::stat_in(s, "net_port.fault_rx.loss") + NaaSim::stat_in(s, "rx_pipe.accepted") +
                 NaaSim::stat_in(s, "rx_pipe.drops") ==
             i + 1;
    };
    REQUIRE(eventually(decided));
    const auto now = NaaSim::stat_in(s, "net_port.fault_rx.loss");
    lost.push_back(now > losses);
    losses = now;
  }
  CHECK(sim.stop() == 0);
  return lost;
}

}  // namespace

TEST_CASE("secrets: unseeded runs give unpredictable rkeys, comm IDs and PSNs", "[sim][seed]") {
  const Secrets a = run_once({});
  const Secrets b = run_once({});
  CHECK(a.seeded == 0);
  CHECK(b.seeded == 0);
  // Each value is 24 or 32 random bits: equal by chance with probability 2^-24 or less.
  for (std::size_t i = 0; i < a.rkeys.size(); ++i) {
    INFO("region " << i << " rkeys " << a.rkeys[i] << " " << b.rkeys[i]);
    CHECK((a.rkeys[i] >> 8) != (b.rkeys[i] >> 8));      // the tag differs
    CHECK((a.rkeys[i] & 0xFF) == (b.rkeys[i] & 0xFF));  // the MR index is the same traffic's
  }
  for (std::size_t i = 0; i < a.comm_ids.size(); ++i) {
    CHECK(a.comm_ids[i] != b.comm_ids[i]);
    CHECK(a.start_psns[i] != b.start_psns[i]);
  }
  // Within one run the tags differ too (not a constant).
  CHECK((a.rkeys[0] >> 8) != (a.rkeys[1] >> 8));
}

TEST_CASE("secrets: the same --seed repeats a run exactly", "[sim][seed]") {
  const Secrets a = run_once({"--seed", "12345"});
  const Secrets b = run_once({"--seed", "12345"});
  const Secrets c = run_once({"--seed", "54321"});
  CHECK(a.seeded == 1);
  CHECK(a == b);
  CHECK(a.rkeys != c.rkeys);
  CHECK(a.comm_ids != c.comm_ids);
}

TEST_CASE("secrets: unseeded fault injection prints the seed that repeats it", "[sim][seed]") {
  // The traffic runs unseeded; the seed naa-sim printed must replay the same fault decisions.
  const std::string err = "/tmp/naa-test-seed-stderr-" + std::to_string(::getpid());
  const auto unseeded = loss_pattern({"--fault-rx", "loss=0.5"}, err);
  std::ifstream f(err);
  std::stringstream text;
  text << f.rdbuf();
  std::remove(err.c_str());
  INFO(text.str());
  const std::string marker = "fault injection seed ";
  const auto at = text.str().find(marker);
  REQUIRE(at != std::string::npos);
  const std::uint64_t drawn = std::stoull(text.str().substr(at + marker.size()));
  const auto n_lost = std::count(unseeded.begin(), unseeded.end(), true);
  INFO("seed " << drawn << ": " << n_lost << " of 40 lost");
  // Both outcomes occur (all or none would replay with any seed); P(all or none) = 2^-39.
  REQUIRE(n_lost > 0);
  REQUIRE(n_lost < 40);
  CHECK(loss_pattern({"--fault-rx", "loss=0.5", "--seed", std::to_string(drawn)}) == unseeded);
}
