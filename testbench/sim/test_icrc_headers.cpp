// sim::icrc_headers (sim/include/naa/sim/icrc_headers.hpp, issue 31): make_roce_headers without
// the IPv4 header checksum. The ICRC masks that field, so every ICRC computed from either must be
// the same, and the IPv4 ID recovered from either too. Random datagrams, replayed from
// NAA_TEST_SEED.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/sim/icrc_headers.hpp"

TEST_CASE("icrc_headers: the ICRC and the recovered IPv4 ID of make_roce_headers", "[sim][icrc]") {
  const char* e = std::getenv("NAA_TEST_SEED");
  const std::uint64_t seed = e != nullptr ? std::strtoull(e, nullptr, 0) : 31;
  INFO("NAA_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    const auto src = static_cast<std::uint32_t>(rng());
    const auto dst = static_cast<std::uint32_t>(rng());
    const auto port = static_cast<std::uint16_t>(rng());
    const auto id = static_cast<std::uint16_t>(rng());
    std::vector<std::uint8_t> d(16 + rng() % 4200);
    for (auto& b : d)
      b = static_cast<std::uint8_t>(rng());
    const auto full = naa::protocol::make_roce_headers(src, port, dst, d.size(), id);
    const auto lean = naa::sim::icrc_headers(src, port, dst, d.size(), id);
    naa::protocol::write_icrc(full, d);
    CHECK(naa::protocol::verify_icrc(lean, d));
    const auto id_full = naa::protocol::recover_ipv4_id(
        naa::protocol::make_roce_headers(src, port, dst, d.size()), d);
    const auto id_lean = naa::sim::icrc_headers(src, port, dst, d.size());
    REQUIRE(id_full.has_value());
    CHECK(*id_full == id);
    CHECK(naa::protocol::recover_ipv4_id(id_lean, d) == id_full);
  }
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
