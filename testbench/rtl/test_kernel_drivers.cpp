// naa-sim's kernels through the kernel shell (sim/rtl ShellKernel over rtl::run_kernel, what
// --kernels=rtl|lockstep runs): every built-in kernel with RTL, at every Verilated width, in
// lockstep (the cycle model and the Verilated RTL on the same ports every cycle), on seeded random
// calls (empty regions, sizes that are not a multiple of W, several regions per call). The bytes,
// result lengths and return codes must equal what the simulated NAA's own C++ kernels compute
// (sim/src/kernels.cpp, an independent implementation), and the cycles must equal those kernels'
// cost model, so --kernels=model and rtl give the same simulated time (docs/rtl/kernel-shell.md
// "Built-in kernels").
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "naa/protocol/mrsp.hpp"
#include "naa/rtl/add_const.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/crc32.hpp"
#include "naa/rtl/crc32_rtl.hpp"
#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/sum_u64_rtl.hpp"
#include "naa/rtl/vadd_i32.hpp"
#include "naa/rtl/vadd_i32_rtl.hpp"
#include "naa/sim/kernels.hpp"
#include "naa/sim/shell_kernel.hpp"
#include "support/stream_traffic.hpp"
#include "support/verilated_widths.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;
namespace sim = naa::sim;
namespace p = naa::protocol;

namespace {

struct Region {
  std::uint8_t flags;
  Bytes bytes;
};

struct Outcome {
  sim::KernelRun run;
  std::vector<Region> regions;
  std::vector<std::uint32_t> result_lengths;
};

Outcome run_call(const sim::Kernel& k, std::uint8_t fn, std::uint32_t user,
                 std::vector<Region> regions, std::uint32_t width) {
  std::vector<sim::KernelRegion> kr(regions.size());
  for (std::size_t i = 0; i < regions.size(); ++i) {
    kr[i].flags = regions[i].flags;
    kr[i].size = static_cast<std::uint32_t>(regions[i].bytes.size());
    kr[i].bytes = regions[i].bytes;
    kr[i].result_length = kr[i].size;
  }
  sim::KernelCall call{fn, user, kr};
  REQUIRE(k.check(call) == 0);
  Outcome o;
  o.run = k.execute(call, width);
  for (const auto& r : kr)
    o.result_lengths.push_back(r.result_length);
  o.regions = std::move(regions);
  return o;
}

// The C++ kernel `fn` and the same function through the shell over `port`, on the same call.
void check_call(std::uint8_t fn, sim::ShellKernel::Spec spec,
                const std::shared_ptr<KernelPort>& port, std::uint32_t user,
                const std::vector<Region>& regions) {
  static const sim::KernelRegistry registry = sim::KernelRegistry::with_builtins();
  const sim::Kernel* reference = registry.find(fn);
  REQUIRE(reference != nullptr);
  const std::uint32_t w = port->width();
  sim::ShellKernel shell(std::move(spec), port, nullptr);
  const Outcome want = run_call(*reference, fn, user, regions, w);
  const Outcome got = run_call(shell, fn, user, regions, w);
  CHECK(got.run.rc == want.run.rc);
  CHECK(got.run.cycles == want.run.cycles);
  for (std::size_t i = 0; i < regions.size(); ++i) {
    INFO("region " << i);
    if ((regions[i].flags & p::kMrspFlagOutput) == 0 && fn != 1 && fn != 2) continue;
    CHECK(got.result_lengths[i] == want.result_lengths[i]);
    const auto n = static_cast<std::ptrdiff_t>(want.result_lengths[i]);
    CHECK(Bytes(got.regions[i].bytes.begin(), got.regions[i].bytes.begin() + n) ==
          Bytes(want.regions[i].bytes.begin(), want.regions[i].bytes.begin() + n));
  }
}

std::size_t random_size(Rng& rng, std::uint32_t w) {
  if (chance(rng, 0.15)) return 0;
  return uniform<std::size_t>(rng, 1, 5 * w + 3);
}

template <class Model>
std::shared_ptr<KernelPort> lockstep(std::unique_ptr<KernelPort> rtl, std::uint32_t w) {
  REQUIRE(rtl != nullptr);
  auto port = std::make_shared<KernelLockstep>(std::make_unique<Model>(w), std::move(rtl),
                                               [](const Divergence& d) { FAIL(d.to_string()); });
  reset_kernel(*port);
  return port;
}

constexpr std::uint8_t kIn = p::kMrspFlagInput;
constexpr std::uint8_t kOut = p::kMrspFlagOutput;

}  // namespace

TEST_CASE("kernel shell: add1/add2 on add_const like the C++ kernels", "[rtl][sim]") {
  Rng rng = seeded_rng("kernel shell add_const");
  for (const std::uint32_t w : naa::testbench::verilated(add_const_rtl_widths())) {
    INFO("width " << w);
    const auto port = lockstep<AddConstModel>(make_add_const_rtl(w), w);
    for (int call = 0; call < 30; ++call) {
      const std::uint8_t fn = call % 2 == 0 ? 1 : 2;
      std::vector<Region> regions(uniform<std::size_t>(rng, 1, 4));
      for (auto& r : regions) {
        r.flags = chance(rng, 0.5) ? kIn : static_cast<std::uint8_t>(kIn | kOut);
        r.bytes = random_bytes(rng, random_size(rng, w));
      }
      check_call(fn, {fn, "add", KernelShape{1, 1, true}, fn}, port, 0, regions);
    }
  }
}

TEST_CASE("kernel shell: vadd_i32, sum_u64 and crc32 like the C++ kernels", "[rtl][sim]") {
  Rng rng = seeded_rng("kernel shell vadd sum crc");
  for (const std::uint32_t w : naa::testbench::verilated(vadd_i32_rtl_widths())) {
    INFO("vadd_i32 width " << w);
    const auto port = lockstep<VaddI32Model>(make_vadd_i32_rtl(w), w);
    for (int call = 0; call < 30; ++call) {
      const std::size_t n = random_size(rng, w);
      // in1 at least in0's whole lanes, sometimes longer (its surplus is taken and dropped).
      const std::size_t n1 =
          n / 4 * 4 + (chance(rng, 0.3) ? uniform<std::size_t>(rng, 0, 2 * w) : 0);
      check_call(
          4, {4, "vadd_i32", KernelShape{2, 1, false}, {}}, port, 0,
          {{kIn, random_bytes(rng, n)}, {kIn, random_bytes(rng, n1)}, {kOut, Bytes(n + 8, 0)}});
    }
    // An in0 larger than the buffer is refused with 0x10 in both.
    const std::size_t big = kVaddI32MaxBytes + 4;
    check_call(4, {4, "vadd_i32", KernelShape{2, 1, false}, {}}, port, 0,
               {{kIn, Bytes(big, 1)}, {kIn, Bytes(big, 2)}, {kOut, Bytes(big, 0)}});
  }
  for (const std::uint32_t w : naa::testbench::verilated(sum_u64_rtl_widths())) {
    INFO("sum_u64 width " << w);
    const auto port = lockstep<SumU64Model>(make_sum_u64_rtl(w), w);
    for (int call = 0; call < 30; ++call) {
      Bytes in = random_bytes(rng, random_size(rng, w));
      if (chance(rng, 0.3)) std::fill(in.begin(), in.end(), 0xFF);  // carries through bit 32
      check_call(5, {5, "sum_u64", KernelShape{1, 1, false}, {}}, port, 0,
                 {{kIn, in}, {kOut, Bytes(8, 0)}});
    }
  }
  for (const std::uint32_t w : naa::testbench::verilated(crc32_rtl_widths())) {
    INFO("crc32 width " << w);
    const auto port = lockstep<Crc32Model>(make_crc32_rtl(w), w);
    for (int call = 0; call < 30; ++call) {
      check_call(6, {6, "crc32", KernelShape{1, 1, false}, {}}, port, 0,
                 {{kIn, random_bytes(rng, random_size(rng, w))}, {kOut, Bytes(4, 0)}});
    }
  }
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
