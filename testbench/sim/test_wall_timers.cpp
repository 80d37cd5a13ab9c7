// WallTimerList (sim/include/naa/sim/wall_timers.hpp, issue 31): naa-sim's runner's peer-wait
// timers. Wall time is passed in, so the rules are checked exactly; the firing order of timers
// due at once is what the Transport sees (it handles fired timers in that order).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "naa/sim/wall_timers.hpp"

namespace {

using naa::sim::WallTimerList;
using std::chrono::microseconds;
using T = WallTimerList::Clock::time_point;
using sc_core::sc_time;

const T t0 = T{} + std::chrono::seconds(100);

struct Client final : naa::sim::PeerTimerClient {
  void on_peer_timer(std::uint32_t /*cookie*/) override {}
};

sc_time ns(std::uint64_t n) {
  return sc_time::from_value(n * 1000);
}

// The (client, cookie) of the timers due at (wall, sim), in firing order.
std::vector<std::uint32_t> take(WallTimerList& list, T wall, sc_time sim,
                                const Client* second = nullptr) {
  std::vector<WallTimerList::Timer> due;
  list.take_due(wall, sim, due);
  std::vector<std::uint32_t> out;
  for (const auto& t : due)
    out.push_back(t.cookie + (t.client == second ? 100U : 0U));
  return out;
}

}  // namespace

TEST_CASE("wall timers: due at once fire in the order last armed (a re-armed one last)",
          "[sim][runner]") {
  Client a, b;
  WallTimerList list;
  list.arm(a, 1, ns(10), t0);
  list.arm(a, 2, ns(10), t0);
  list.arm(b, 1, ns(10), t0);  // same cookie, other client: another timer
  list.arm(a, 3, ns(10), t0);
  REQUIRE(list.size() == 4);
  // Re-arming (a, 1) with the same deadlines: one entry, now behind the others (as a cancel
  // and an arm), not in its old place.
  list.arm(a, 1, ns(10), t0);
  REQUIRE(list.size() == 4);
  CHECK(take(list, t0, ns(10), &b) == std::vector<std::uint32_t>{2, 101, 3, 1});
  CHECK(list.empty());
  // Re-arming the last one keeps it last and takes the new deadlines.
  list.arm(a, 5, ns(10), t0);
  list.arm(a, 6, ns(10), t0);
  list.arm(a, 6, ns(20), t0 + microseconds(7));
  CHECK(take(list, t0 + microseconds(7), ns(10)) == std::vector<std::uint32_t>{5});
  CHECK(take(list, t0 + microseconds(6), ns(20)).empty());
  CHECK(take(list, t0 + microseconds(7), ns(20)) == std::vector<std::uint32_t>{6});
}

TEST_CASE("wall timers: cancel takes only its own timer and the others keep their order",
          "[sim][runner]") {
  Client a, b;
  WallTimerList list;
  for (std::uint32_t c = 1; c <= 4; ++c)
    list.arm(a, c, ns(c), t0);
  list.arm(b, 3, ns(1), t0);
  list.cancel(a, 3);
  list.cancel(a, 9);  // not armed: nothing happens
  list.cancel(b, 4);
  REQUIRE(list.size() == 4);
  CHECK(take(list, t0, ns(100), &b) == std::vector<std::uint32_t>{1, 2, 4, 103});
  // A cancelled timer armed again is new: it goes to the end.
  list.arm(a, 1, ns(1), t0);
  list.arm(a, 2, ns(1), t0);
  list.cancel(a, 1);
  list.arm(a, 1, ns(1), t0);
  CHECK(take(list, t0, ns(1)) == std::vector<std::uint32_t>{2, 1});
}

TEST_CASE("wall timers: a timer is due once both deadlines passed", "[sim][runner]") {
  Client a;
  WallTimerList list;
  list.arm(a, 1, ns(50), t0 + microseconds(10));
  list.arm(a, 2, ns(30), t0 + microseconds(20));
  list.arm(a, 3, ns(40), t0 + microseconds(5));
  CHECK_FALSE(list.next_sim_deadline_wall_passed(t0 + microseconds(4)).has_value());
  CHECK_FALSE(list.any_wall_passed(t0 + microseconds(4)));
  CHECK(list.any_wall_passed(t0 + microseconds(5)));
  CHECK(list.next_sim_deadline_wall_passed(t0 + microseconds(10)) == ns(40));
  CHECK(list.next_sim_deadline_wall_passed(t0 + microseconds(20)) == ns(30));
  // Wall passed for 1 and 3, simulated only for 3; 2's wall deadline has not passed.
  CHECK(take(list, t0 + microseconds(10), ns(45)) == std::vector<std::uint32_t>{3});
  CHECK(take(list, t0 + microseconds(10), ns(100)) == std::vector<std::uint32_t>{1});
  CHECK(take(list, t0 + microseconds(20), ns(29)).empty());
  CHECK(take(list, t0 + microseconds(20), ns(30)) == std::vector<std::uint32_t>{2});
  CHECK(list.empty());
}

TEST_CASE("wall timers: a wall wait advances simulated time as sc_time(seconds) did",
          "[sim][runner]") {
  // The runner's advance was sc_time(duration<double>(waited).count(), SC_SEC) before issue 31;
  // wall_wait_time must give the same value for every wait (exact below 2^40 ns, the double
  // constructor above).
  const auto old = [](std::int64_t ns) {
    return sc_time(std::chrono::duration<double>(std::chrono::nanoseconds(ns)).count(),
                   sc_core::SC_SEC);
  };
  const auto check = [&](std::int64_t ns) {
    INFO("ns = " << ns);
    REQUIRE(naa::sim::wall_wait_time(std::chrono::nanoseconds(ns)).value() == old(ns).value());
  };
  for (std::int64_t ns : {0LL, 1LL, 7LL, 999LL, 1000LL, 123456789LL, 999999999LL, 1000000000LL,
                          (1LL << 40) - 1, 1LL << 40, (1LL << 40) + 1, 3600LL * 1000000000LL,
                          4389389077370LL})  // the last: the double's value is not ns * 1000
    check(ns);
  const char* e = std::getenv("NAA_TEST_SEED");
  const std::uint64_t seed = e != nullptr ? std::strtoull(e, nullptr, 0) : 31;
  INFO("NAA_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200000; ++i) {
    // Log-uniform over 1 ns .. 2^44 ns (~5 h): short polls and long waits alike, and waits
    // where the double's rounding is no longer exact.
    const int bits = static_cast<int>(rng() % 44) + 1;
    check(static_cast<std::int64_t>(rng() % (std::uint64_t{1} << bits)));
  }
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
