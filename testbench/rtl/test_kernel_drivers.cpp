// The drivers that run naa-sim's kernel calls through the kernel blocks (sim/rtl/src/
// stream_driver.hpp, used by --kernels=rtl|lockstep): on the cycle models and on the Verilated RTL
// in lockstep, at every Verilated width, on seeded random calls (empty regions, sizes that are not
// a multiple of W, several regions per call), the bytes must equal what the simulated NAA's C++
// kernels compute (sim/src/kernels.cpp; crc32 also against naa::protocol::crc32), and the cycle
// count must be what the blocks' pages promise: N beats through a 1-cycle block take N + 1 (for
// sum_u64 also exactly what the C++ kernel's cost model charges).
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/crc32.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/crc32_rtl.hpp"
#include "naa/rtl/sum_u64_rtl.hpp"
#include "naa/rtl/vadd_i32_rtl.hpp"
#include "naa/sim/kernels.hpp"
#include "stream_driver.hpp"
#include "support/stream_traffic.hpp"
#include "support/verilated_widths.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;
namespace drv = naa::sim::rtl_driver;
namespace sim = naa::sim;
namespace p = naa::protocol;

namespace {

std::uint64_t beats(std::size_t bytes, std::uint32_t w) {
  return (bytes + w - 1) / w;
}

// Runs the simulated NAA's own C++ kernel `fn` over `regions` (flags, bytes), in place.
void reference(std::uint8_t fn, std::vector<std::pair<std::uint8_t, Bytes*>> regions) {
  static const sim::KernelRegistry registry = sim::KernelRegistry::with_builtins();
  std::vector<sim::KernelRegion> kr(regions.size());
  for (std::size_t i = 0; i < regions.size(); ++i) {
    kr[i].flags = regions[i].first;
    kr[i].size = static_cast<std::uint32_t>(regions[i].second->size());
    kr[i].bytes = *regions[i].second;
  }
  sim::KernelCall call{fn, 0, kr};
  const sim::Kernel* k = registry.find(fn);
  REQUIRE(k != nullptr);
  REQUIRE(k->check(call) == 0);
  REQUIRE(k->run(call) == 0);
}

template <class Port>
void reset(Port& port) {
  typename Port::Inputs in;
  in.rst_n = false;
  (void)port.step(in);
}

}  // namespace

TEST_CASE("kernel drivers: add_const runs add1/add2 calls like the C++ kernels", "[rtl][sim]") {
  Rng rng = seeded_rng("kernel drivers add_const");
  for (const std::uint32_t w : naa::testbench::verilated(add_const_rtl_widths())) {
    INFO("width " << w);
    AddConstLockstep port(std::make_unique<AddConstModel>(w), make_add_const_rtl(w));
    reset(port);
    for (int call = 0; call < 40; ++call) {
      const std::uint8_t fn = call % 2 == 0 ? 1 : 2;
      const std::size_t regions = uniform<std::size_t>(rng, 1, 4);
      std::vector<Bytes> mine(regions), theirs;
      std::uint64_t total_beats = 0;
      for (auto& r : mine) {
        r = random_bytes(rng, chance(rng, 0.2) ? 0 : uniform<std::size_t>(rng, 1, 5 * w + 3));
        total_beats += beats(r.size(), w);
      }
      theirs = mine;
      std::vector<std::span<std::uint8_t>> packets(mine.begin(), mine.end());
      const drv::StreamRun run = drv::run_add_const(port, packets, fn);
      std::vector<std::pair<std::uint8_t, Bytes*>> ref;
      for (auto& r : theirs)
        ref.emplace_back(p::kMrspFlagInput, &r);
      reference(fn, ref);
      CHECK_FALSE(run.stalled);
      CHECK(mine == theirs);
      CHECK(run.cycles == (total_beats == 0 ? 0 : total_beats + 1));
    }
    CHECK_FALSE(port.checker().diverged());
  }
}

TEST_CASE("kernel drivers: vadd_i32 and crc32 run calls like the C++ kernels", "[rtl][sim]") {
  Rng rng = seeded_rng("kernel drivers vadd crc");
  for (const std::uint32_t w : naa::testbench::verilated(vadd_i32_rtl_widths())) {
    INFO("vadd_i32 width " << w);
    VaddI32Lockstep port(std::make_unique<VaddI32Model>(w), make_vadd_i32_rtl(w));
    reset(port);
    for (int call = 0; call < 30; ++call) {
      const std::size_t n = 4 * uniform<std::size_t>(rng, 0, 4 * w / 4 + 5);
      const Bytes a = random_bytes(rng, n);
      const Bytes b = random_bytes(rng, n + 4 * uniform<std::size_t>(rng, 0, 3));
      Bytes out(n + 8, 0xEE);
      const drv::StreamRun run = drv::run_vadd_i32(port, a, b, out);
      Bytes ra = a, rb = b, rout(n + 8, 0xEE);
      reference(4,
                {{p::kMrspFlagInput, &ra}, {p::kMrspFlagInput, &rb}, {p::kMrspFlagOutput, &rout}});
      CHECK_FALSE(run.stalled);
      CHECK(out == rout);  // bytes past n untouched
      CHECK(run.cycles == (n == 0 ? 0 : beats(n, w) + 1));
    }
    CHECK_FALSE(port.checker().diverged());
  }
  for (const std::uint32_t w : naa::testbench::verilated(crc32_rtl_widths())) {
    INFO("crc32 width " << w);
    Crc32Lockstep port(std::make_unique<Crc32Model>(w), make_crc32_rtl(w));
    reset(port);
    for (int call = 0; call < 30; ++call) {
      const Bytes in = random_bytes(rng, call == 0 ? 0 : uniform<std::size_t>(rng, 1, 6 * w + 5));
      std::uint32_t crc = 0;
      const drv::StreamRun run = drv::run_crc32(port, in, &crc);
      Bytes rin = in, rout(4);
      reference(6, {{p::kMrspFlagInput, &rin}, {p::kMrspFlagOutput, &rout}});
      CHECK_FALSE(run.stalled);
      CHECK(crc == p::load_le32(rout.data()));
      CHECK(crc == p::crc32(in));
      // One beat per cycle, the result one cycle after the last beat (an empty input: one beat).
      CHECK(run.cycles == std::max<std::uint64_t>(beats(in.size(), w), 1) + 1);
    }
    CHECK_FALSE(port.checker().diverged());
  }
}

TEST_CASE("kernel drivers: sum_u64 runs calls like the C++ kernel, in its cost model's cycles",
          "[rtl][sim]") {
  Rng rng = seeded_rng("kernel drivers sum_u64");
  static const sim::KernelRegistry registry = sim::KernelRegistry::with_builtins();
  for (const std::uint32_t w : naa::testbench::verilated(sum_u64_rtl_widths())) {
    INFO("sum_u64 width " << w);
    SumU64Lockstep port(std::make_unique<SumU64Model>(w), make_sum_u64_rtl(w));
    reset(port);
    for (int call = 0; call < 30; ++call) {
      // Any length: 0, not a multiple of 4, not a multiple of W.
      const Bytes in = random_bytes(rng, call == 0 ? 0 : uniform<std::size_t>(rng, 1, 6 * w + 5));
      std::uint64_t sum = 0;
      const drv::StreamRun run = drv::run_sum_u64(port, in, &sum);
      Bytes rin = in, rout(8);
      reference(5, {{p::kMrspFlagInput, &rin}, {p::kMrspFlagOutput, &rout}});
      CHECK_FALSE(run.stalled);
      CHECK(sum ==
            (p::load_le32(rout.data()) | std::uint64_t{p::load_le32(rout.data() + 4)} << 32));
      CHECK(run.cycles == std::max<std::uint64_t>(beats(in.size(), w), 1) + 1);
      // The C++ kernel's cost model (--kernels=model) charges exactly the RTL's cycles.
      std::vector<sim::KernelRegion> kr(2);
      kr[0].flags = p::kMrspFlagInput;
      kr[0].size = static_cast<std::uint32_t>(rin.size());
      kr[0].bytes = rin;
      kr[1].flags = p::kMrspFlagOutput;
      kr[1].size = 8;
      kr[1].bytes = rout;
      const sim::KernelCall kc{5, 0, kr};
      CHECK(registry.find(5)->cycles(kc, w) == run.cycles);
    }
    CHECK_FALSE(port.checker().diverged());
  }
}

namespace {

// add_const that never raises out_valid: a block that hangs.
class DeadAddConst final : public AddConstPort {
 public:
  std::uint32_t width() const noexcept override { return 16; }
  AddConstOutputs step(const AddConstInputs&) override { return AddConstOutputs{}; }
};

}  // namespace

TEST_CASE("kernel drivers: a block that stops moving is reported, not waited for forever",
          "[rtl][sim]") {
  DeadAddConst dead;
  Bytes data(100, 1);
  std::span<std::uint8_t> packets[] = {data};
  const drv::StreamRun run = drv::run_add_const(dead, packets, 1);
  CHECK(run.stalled);
  CHECK(run.cycles == drv::kStallCycles);
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one never runs.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 1;
}
