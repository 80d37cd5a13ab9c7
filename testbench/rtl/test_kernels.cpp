// The built-in kernels (add_const, vadd_i32, crc32, sum_u64) through the generic kernel testbench
// (naa/rtl/kernel_testbench.hpp), each only a configuration: its RTL at every Verilated width
// against its C++ model in lockstep, against the simulated NAA's C++ kernel of the same function
// (naa::sim::KernelRegistry::with_builtins(), an oracle written independently of both), and
// against its full-rate cycle count (naa-sim's cost model); random regions, user bits, idle
// cycles, back-pressure and resets in the middle of a call. Each kernel's seeded-bug variant
// (make_<k>_broken_rtl) must be caught by the same run, and the reference must pass it.
#include <catch2/catch.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/add_const_broken_rtl.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/crc32.hpp"
#include "naa/rtl/crc32_broken_rtl.hpp"
#include "naa/rtl/crc32_rtl.hpp"
#include "naa/rtl/kernel_driver.hpp"
#include "naa/rtl/kernel_testbench.hpp"
#include "naa/rtl/rtl_session.hpp"
#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/sum_u64_broken_rtl.hpp"
#include "naa/rtl/sum_u64_rtl.hpp"
#include "naa/rtl/vadd_i32.hpp"
#include "naa/rtl/vadd_i32_broken_rtl.hpp"
#include "naa/rtl/vadd_i32_rtl.hpp"
#include "seed.hpp"
#if NAA_TEST_WITH_SIM
#include "naa/sim/kernels.hpp"
#endif

using namespace naa::rtl;

namespace {

using MakeRtl = std::unique_ptr<KernelPort> (*)(std::uint32_t, const RtlOptions&);

// The simulated NAA's C++ kernel `fn` on one call's regions, as naa-sim's shell kernel maps them
// (sim/rtl/src/shell_kernel.cpp): in place, the one region is input and output; otherwise the src
// packets are INPUT regions and the dst buffers OUTPUT regions of their capacity.
// Without the simulator (NAA_BUILD_SIM=OFF) there is no oracle: model and cost model only.
std::optional<KernelExpected> builtin(std::uint8_t fn, bool in_place, const KernelCallSpec& call) {
#if !NAA_TEST_WITH_SIM
  (void)fn, (void)in_place, (void)call;
  return std::nullopt;
#else
  static const naa::sim::KernelRegistry registry = naa::sim::KernelRegistry::with_builtins();
  const naa::sim::Kernel* kernel = registry.find(fn);
  REQUIRE(kernel != nullptr);
  std::vector<KernelBytes> bytes(call.src.begin(), call.src.end());
  std::vector<naa::sim::KernelRegion> regions;
  const std::uint8_t in = naa::protocol::kMrspFlagInput;
  const std::uint8_t out = naa::protocol::kMrspFlagOutput;
  if (in_place) {
    regions.push_back({static_cast<std::uint8_t>(in | out), 0, 0, {}, 0});
  } else {
    regions.resize(call.src.size(), {in, 0, 0, {}, 0});
    for (const std::uint32_t c : call.dst_capacity) {
      bytes.emplace_back(c);
      regions.push_back({out, 0, 0, {}, 0});
    }
  }
  for (std::size_t i = 0; i < regions.size(); ++i) {  // spans only once `bytes` stops growing
    regions[i].bytes = bytes[i];
    regions[i].size = static_cast<std::uint32_t>(bytes[i].size());
    regions[i].result_length = regions[i].size;
  }
  naa::sim::KernelCall c{fn, call.user, regions};
  // The generators make only calls naa-sim would run: one it refuses is a bug of the test.
  REQUIRE(kernel->check(c) == 0);
  KernelExpected e;
  e.rc = kernel->run(c);
  for (const auto& r : regions) {
    if (r.is_output()) e.dst.emplace_back(r.bytes.begin(), r.bytes.begin() + r.result_length);
  }
  return e;
#endif
}

// The RTL in a session whose failed assertions are recorded rather than fatal, so the testbench
// reports them as a failure with the call and cycle.
struct Sessions {
  std::vector<std::shared_ptr<RtlSession>> all;
  [[nodiscard]] std::string failed() const {
    for (const auto& s : all) {
      if (s->assertion_failed()) return "a kernel shell assertion (Verilator's message above)";
    }
    return {};
  }
};

void use_sessions(KernelTestbenchConfig& config, MakeRtl make) {
  auto sessions = std::make_shared<Sessions>();
  config.make_rtl = [sessions, make](std::uint32_t w, const RtlOptions& options) {
    auto s = std::make_shared<RtlSession>(RtlSessionOptions{{}, options.x_seed, 4000, false});
    sessions->all.push_back(s);
    RtlOptions o = options;
    o.session = s;
    return make(w, o);
  };
  config.assertion_failed = [sessions] { return sessions->failed(); };
}

std::vector<std::uint32_t> widths(std::span<const std::uint32_t> w) {
  REQUIRE_FALSE(w.empty());  // the build Verilated no width of this kernel
  return {w.begin(), w.end()};
}

// add_const: in place, user[7:0] added. naa-sim passes user 1 (add1) or 2 (add2), the oracle's
// two kernels; other addends and the upper user bits are checked against the model only.
KernelTestbenchConfig add_const_config(MakeRtl make) {
  KernelTestbenchConfig c;
  c.name = "add_const";
  c.shape.in_place = true;
  c.widths = widths(add_const_rtl_widths());
  use_sessions(c, make);
  c.make_model = [](std::uint32_t w) { return std::make_unique<AddConstModel>(w); };
  c.make_call = [](KernelRandom& r, std::uint32_t w) {
    KernelCallSpec call;
    call.user = static_cast<std::uint32_t>(r.next()) & 0xFFFFFFU;
    if (r.percent(60)) call.user = (call.user & 0xFFFF00U) | (r.percent(50) ? 1U : 2U);
    call.src.push_back(r.bytes(r.region_size(w, 700)));
    call.dst_capacity.push_back(static_cast<std::uint32_t>(call.src[0].size()));
    return call;
  };
  c.golden = [](const KernelCallSpec& call) -> std::optional<KernelExpected> {
    const std::uint32_t k = call.user & 0xFFU;
    if (k != 1 && k != 2) return std::nullopt;
    return builtin(static_cast<std::uint8_t>(k), true, call);
  };
  c.full_rate_cycles = [](const KernelCallSpec& call,
                          std::uint32_t w) -> std::optional<std::uint64_t> {
    if (call.src[0].empty()) return std::nullopt;  // naa-sim never calls it on an empty region
    return add_const_call_cycles(call.src[0].size(), w);
  };
  return c;
}

// vadd_i32: in0 then in1 on src, out0 on dst. Calls as naa-sim accepts them: in1 at least in0's
// whole lanes (and sometimes longer: the surplus is taken and dropped), out0's buffer at least
// that large.
KernelTestbenchConfig vadd_i32_config(MakeRtl make) {
  KernelTestbenchConfig c;
  c.name = "vadd_i32";
  c.shape.inputs = 2;
  c.shape.outputs = 1;
  c.widths = widths(vadd_i32_rtl_widths());
  use_sessions(c, make);
  c.make_model = [](std::uint32_t w) { return std::make_unique<VaddI32Model>(w); };
  c.make_call = [](KernelRandom& r, std::uint32_t w) {
    KernelCallSpec call;
    call.user = static_cast<std::uint32_t>(r.next()) & 0xFFFFFFU;
    call.src.push_back(r.bytes(r.region_size(w, 700)));
    const auto n = static_cast<std::uint32_t>(call.src[0].size() / 4 * 4);
    call.src.push_back(r.bytes(n + (r.percent(50) ? 0 : r.below(2 * w + 2))));
    call.dst_capacity.push_back(n + static_cast<std::uint32_t>(r.below(w + 1)));
    return call;
  };
  c.golden = [](const KernelCallSpec& call) { return builtin(4, false, call); };
  c.full_rate_cycles = [](const KernelCallSpec& call,
                          std::uint32_t w) -> std::optional<std::uint64_t> {
    return vadd_i32_call_cycles(call.src[0].size(), call.src[1].size(), w);
  };
  return c;
}

// crc32 and sum_u64: one packet in, one result out (4 and 8 bytes); the default calls (any size,
// a dst buffer larger than the result).
KernelTestbenchConfig crc32_config(MakeRtl make) {
  KernelTestbenchConfig c;
  c.name = "crc32";
  c.widths = widths(crc32_rtl_widths());
  use_sessions(c, make);
  c.make_model = [](std::uint32_t w) { return std::make_unique<Crc32Model>(w); };
  c.golden = [](const KernelCallSpec& call) { return builtin(6, false, call); };
  c.full_rate_cycles = [](const KernelCallSpec& call,
                          std::uint32_t w) -> std::optional<std::uint64_t> {
    return crc32_call_cycles(call.src[0].size(), w);
  };
  return c;
}

KernelTestbenchConfig sum_u64_config(MakeRtl make) {
  KernelTestbenchConfig c;
  c.name = "sum_u64";
  c.widths = widths(sum_u64_rtl_widths());
  use_sessions(c, make);
  c.make_model = [](std::uint32_t w) { return std::make_unique<SumU64Model>(w); };
  c.golden = [](const KernelCallSpec& call) { return builtin(5, false, call); };
  c.full_rate_cycles = [](const KernelCallSpec& call,
                          std::uint32_t w) -> std::optional<std::uint64_t> {
    return sum_u64_call_cycles(call.src[0].size(), w);
  };
  return c;
}

// Calls per width: well under a second per kernel, and every edge size drawn at every width.
constexpr std::uint32_t kCalls = 1000;

KernelTestbenchReport run(const KernelTestbenchConfig& config) {
  KernelTestbenchOptions options;
  options.seed = naa::testbench::test_seed();
  options.calls = kCalls;
  options.log = &std::cout;
  std::cout << "[" << config.name << "] NAA_TEST_SEED=" << options.seed
            << " (set it to reproduce this run)\n";
  KernelTestbenchReport report = run_kernel_testbench(config, options);
  std::cout << "[" << config.name << "] " << report.summary() << "\n";
  return report;
}

// The reference passes, with every check doing work.
void check_passes(const KernelTestbenchConfig& config) {
  const KernelTestbenchReport r = run(config);
  INFO(r.summary());
  REQUIRE(r.passed());
  CHECK(r.lockstep);
  CHECK(r.calls == kCalls * config.widths.size());
  if (NAA_TEST_WITH_SIM) CHECK(r.golden_checked > r.calls / 3);
  CHECK(r.timed > r.calls / 10);
  CHECK(r.resets > 0);
  CHECK(r.edge_sizes);
}

// The seeded bug is caught, at the RTL's output (a lockstep divergence), with a replayable report.
void check_caught(const KernelTestbenchConfig& config) {
  const KernelTestbenchReport r = run(config);
  INFO(r.summary());
  REQUIRE_FALSE(r.passed());
  const KernelFailure& f = *r.failure;
  CHECK(f.kernel == config.name);
  CHECK(f.what.find("lockstep divergence") != std::string::npos);
  CHECK(f.to_string().find("NAA_TEST_SEED=" + std::to_string(naa::testbench::test_seed())) !=
        std::string::npos);
}

}  // namespace

TEST_CASE("add_const: the generic kernel testbench passes", "[rtl][kernels][add_const]") {
  check_passes(add_const_config(make_add_const_rtl));
}
TEST_CASE("add_const: the broken variant is caught", "[rtl][kernels][add_const]") {
  check_caught(add_const_config(make_add_const_broken_rtl));
}
TEST_CASE("vadd_i32: the generic kernel testbench passes", "[rtl][kernels][vadd_i32]") {
  check_passes(vadd_i32_config(make_vadd_i32_rtl));
}
TEST_CASE("vadd_i32: the broken variant is caught", "[rtl][kernels][vadd_i32]") {
  check_caught(vadd_i32_config(make_vadd_i32_broken_rtl));
}
TEST_CASE("crc32: the generic kernel testbench passes", "[rtl][kernels][crc32]") {
  check_passes(crc32_config(make_crc32_rtl));
}
TEST_CASE("crc32: the broken variant is caught", "[rtl][kernels][crc32]") {
  check_caught(crc32_config(make_crc32_broken_rtl));
}
TEST_CASE("sum_u64: the generic kernel testbench passes", "[rtl][kernels][sum_u64]") {
  check_passes(sum_u64_config(make_sum_u64_rtl));
}
TEST_CASE("sum_u64: the broken variant is caught", "[rtl][kernels][sum_u64]") {
  check_caught(sum_u64_config(make_sum_u64_broken_rtl));
}

// vadd_i32's buffer at its limit (the covers c_in0_max and c_refused of
// rtl/vadd_i32/vadd_i32_sva.sv; README "Behaviour"): an in0 of exactly MaxBytes (1 MiB) is added, 4
// bytes more are consumed and refused with 0x10 and an empty out0, and the kernel keeps its
// contract (the bound assertions).
TEST_CASE("vadd_i32: an in0 filling the 1 MiB buffer is added, a larger one refused with 0x10",
          "[rtl][kernels][vadd_i32]") {
  const std::uint32_t w = widths(vadd_i32_rtl_widths()).back();
  const std::unique_ptr<KernelPort> port = make_vadd_i32_rtl(w, RtlOptions{});
  REQUIRE(port != nullptr);
  reset_kernel(*port);
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  for (const std::size_t n : {kMiB, kMiB + 4}) {
    INFO("in0 of " << n << " bytes, W=" << w);
    const std::vector<std::uint8_t> in0(n, 0x01);
    const std::vector<std::uint8_t> in1(n, 0x02);
    std::vector<std::uint8_t> out(n, 0);
    const std::span<const std::uint8_t> src[] = {in0, in1};
    const std::span<std::uint8_t> dst[] = {out};
    const KernelInvocation r = run_kernel(*port, 0, src, dst);
    INFO(r.error);
    REQUIRE(r.error.empty());
    if (n == kMiB) {
      CHECK(r.rc == 0);
      CHECK(r.lengths.at(0) == n);
      CHECK((out.front() == 0x03 && out.back() == 0x03));
    } else {
      CHECK(r.rc == 0x10);
      CHECK(r.lengths.at(0) == 0);
    }
  }
}
