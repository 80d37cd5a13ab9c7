// Transport::irn_retransmit_ns (sim/src/transport_irn.cpp, issue 31): the timeout irn_timeout_ns
// gives for the window's unSACKed PSNs, whether or not it counted them (it counts them only when
// more than low_threshold are in flight). Random windows and SACKs, replayed from NAA_TEST_SEED.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>

#include "naa/protocol/irn.hpp"
#include "naa/sim/transport.hpp"

namespace p = naa::protocol;

TEST_CASE("IRN retransmit timeout: irn_retransmit_ns is irn_timeout_ns of the unSACKed PSNs",
          "[sim][irn]") {
  const char* e = std::getenv("NAA_TEST_SEED");
  const std::uint64_t seed = e != nullptr ? std::strtoull(e, nullptr, 0) : 31;
  INFO("NAA_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  int below = 0, above = 0;  // windows with unSACKed <= N < in flight, and unSACKed > N
  for (int i = 0; i < 4000; ++i) {
    p::CapabilityBlock caps;
    caps.bdp_cap = static_cast<std::uint16_t>(1 + rng() % 40);
    caps.low_threshold = static_cast<std::uint8_t>(rng() % 8);
    caps.rto_low = static_cast<std::uint8_t>(1 + rng() % 12);
    caps.rto_high = static_cast<std::uint8_t>(caps.rto_low + 1 + rng() % 6);
    p::IrnSendWindow w;
    const auto first = static_cast<std::uint32_t>(rng() & p::kMax24);
    w.reset(first, caps.bdp_cap);
    const auto sent = static_cast<std::uint32_t>(rng() % (caps.bdp_cap + 1U));
    for (std::uint32_t k = 0; k < sent; ++k)
      w.sent_new();
    if (sent != 0 && (rng() & 3) != 0) {  // an ACK: some acknowledged, some of the rest SACKed
      const auto acked = static_cast<std::uint32_t>(rng() % sent);
      const std::uint32_t cumulative = p::psn_add(first, acked + p::kMax24);  // una + acked - 1
      const auto sack_psn = p::psn_add(first, static_cast<std::uint32_t>(rng() % sent));
      REQUIRE(
          w.on_ack(cumulative, p::SackEth{0, sack_psn, static_cast<std::uint32_t>(rng())}).valid);
    }
    INFO("in flight " << w.in_flight() << " unSACKed " << w.unsacked() << " N "
                      << int{caps.low_threshold});
    const std::uint64_t want = w.in_flight() == 0 ? 0 : p::irn_timeout_ns(caps, w.unsacked());
    CHECK(naa::sim::Transport::irn_retransmit_ns(caps, w) == want);
    below += w.unsacked() <= caps.low_threshold && w.in_flight() > caps.low_threshold ? 1 : 0;
    above += w.unsacked() > caps.low_threshold ? 1 : 0;
  }
  CHECK(below > 100);  // both choices were made with SACKs deciding them
  CHECK(above > 100);
}
