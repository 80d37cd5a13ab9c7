// The generic kernel testbench itself (naa/rtl/kernel_testbench.hpp) on kernels with a known
// defect, made from the built-in models behind a wrapper (no Verilator needed): each check must
// fail on its defect - a reset ignored in the middle of a call (lockstep), a TKEEP that is not a
// prefix (the contract, with no model), a wrong result (the golden function, with no model), a
// slow kernel (the full-rate cycles) - and a failure must replay from its seed.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/kernel_testbench.hpp"
#include "naa/rtl/sum_u64.hpp"
#include "seed.hpp"

using namespace naa::rtl;

namespace {

// A kernel whose outputs (or inputs) a test bends: the defect under test.
class Bent final : public KernelPort {
 public:
  using Bend = std::function<void(std::uint64_t cycle, KernelInputs& in, KernelOutputs* out)>;
  Bent(std::unique_ptr<KernelPort> inner, Bend bend)
      : inner_(std::move(inner)), bend_(std::move(bend)) {}
  std::string_view block() const noexcept override { return inner_->block(); }
  std::uint32_t width() const noexcept override { return inner_->width(); }
  KernelOutputs step(const KernelInputs& in) override {
    KernelInputs i = in;
    bend_(cycle_, i, nullptr);
    KernelOutputs o = inner_->step(i);
    bend_(cycle_++, i, &o);
    return o;
  }

 private:
  std::unique_ptr<KernelPort> inner_;
  Bend bend_;
  std::uint64_t cycle_ = 0;
};

KernelTestbenchConfig sum_u64(Bent::Bend bend, bool with_model) {
  KernelTestbenchConfig c;
  c.name = "sum_u64";
  c.widths = {16, 64};
  c.make_rtl = [bend](std::uint32_t w, const RtlOptions&) -> std::unique_ptr<KernelPort> {
    return std::make_unique<Bent>(std::make_unique<SumU64Model>(w), bend);
  };
  if (with_model) c.make_model = [](std::uint32_t w) { return std::make_unique<SumU64Model>(w); };
  c.golden = [](const KernelCallSpec& call) {
    std::uint64_t s = 0;
    const KernelBytes& b = call.src[0];
    for (std::size_t i = 0; i + 4 <= b.size(); i += 4)
      s += std::uint64_t{b[i]} | std::uint64_t{b[i + 1]} << 8 | std::uint64_t{b[i + 2]} << 16 |
           std::uint64_t{b[i + 3]} << 24;
    KernelExpected e;
    e.dst.emplace_back(8);
    for (int i = 0; i < 8; ++i)
      e.dst[0][static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(s >> (8 * i));
    return std::optional<KernelExpected>(e);
  };
  return c;
}

KernelTestbenchReport run(const KernelTestbenchConfig& c, std::uint64_t seed) {
  KernelTestbenchOptions o;
  o.seed = seed;
  o.calls = 400;
  KernelTestbenchReport r = run_kernel_testbench(c, o);
  UNSCOPED_INFO(r.summary());
  return r;
}

void nothing(std::uint64_t, KernelInputs&, KernelOutputs*) {}

}  // namespace

TEST_CASE("kernel testbench: model against itself passes, with every check at work",
          "[rtl][kernels]") {
  const KernelTestbenchReport r = run(sum_u64(nothing, true), naa::testbench::test_seed());
  REQUIRE(r.passed());
  CHECK(r.calls == 800);
  CHECK(r.resets > 0);
  CHECK(r.golden_checked == 800);
  CHECK(r.edge_sizes);
}

TEST_CASE("kernel testbench: a kernel that ignores a reset in the middle of a call is caught",
          "[rtl][kernels]") {
  // Resets after the first two cycles (the testbench's initial reset) never reach the kernel.
  const auto deaf = [](std::uint64_t cycle, KernelInputs& in, KernelOutputs*) {
    if (cycle >= 2) in.rst_n = true;
  };
  const KernelTestbenchReport r = run(sum_u64(deaf, true), naa::testbench::test_seed());
  REQUIRE_FALSE(r.passed());
  CHECK(r.failure->what.find("lockstep divergence") != std::string::npos);
  CHECK(r.resets >= 1);
}

TEST_CASE("kernel testbench: without a model, a TKEEP that is not a prefix breaks the contract",
          "[rtl][kernels]") {
  const auto holey = [](std::uint64_t, KernelInputs&, KernelOutputs* out) {
    if (out != nullptr && out->dst_valid) out->dst.keep &= ~2ULL;  // byte 1 missing
  };
  const KernelTestbenchReport r = run(sum_u64(holey, false), naa::testbench::test_seed());
  REQUIRE_FALSE(r.passed());
  CHECK_FALSE(r.lockstep);
  CHECK(r.failure->what.find("contract: sum_u64: dst_TKEEP") != std::string::npos);
  CHECK(r.failure->what.find("is not a prefix") != std::string::npos);
}

TEST_CASE("kernel testbench: without a model, the golden function catches a wrong result",
          "[rtl][kernels]") {
  const auto off_by_one = [](std::uint64_t, KernelInputs&, KernelOutputs* out) {
    if (out != nullptr && out->dst_valid) out->dst.data[0] ^= 1;
  };
  const KernelTestbenchReport r = run(sum_u64(off_by_one, false), naa::testbench::test_seed());
  REQUIRE_FALSE(r.passed());
  CHECK(r.failure->call == 0);
  CHECK(r.failure->what.find("results: dst packet 0 byte 0: golden") != std::string::npos);
}

TEST_CASE("kernel testbench: a kernel slower than its cycle formula is caught", "[rtl][kernels]") {
  KernelTestbenchConfig c;
  c.name = "add_const";
  c.shape.in_place = true;
  c.widths = {16};
  // dst not ready every fourth cycle, whatever the driver says: back-pressure of its own.
  c.make_rtl = [](std::uint32_t w, const RtlOptions&) -> std::unique_ptr<KernelPort> {
    return std::make_unique<Bent>(std::make_unique<AddConstModel>(w),
                                  [](std::uint64_t cycle, KernelInputs& in, KernelOutputs* out) {
                                    if (cycle % 4 == 3) {
                                      in.dst_ready = false;
                                      if (out != nullptr) out->dst_valid = false;
                                    }
                                  });
  };
  c.full_rate_cycles = [](const KernelCallSpec& call,
                          std::uint32_t w) -> std::optional<std::uint64_t> {
    if (call.src[0].size() <= 4 * w) return std::nullopt;  // long enough to feel it
    return add_const_call_cycles(call.src[0].size(), w);
  };
  const KernelTestbenchReport r = run(c, naa::testbench::test_seed());
  REQUIRE_FALSE(r.passed());
  CHECK(r.failure->what.find("cycles at full rate: expected") != std::string::npos);
}

TEST_CASE("kernel testbench: a failure replays from its seed", "[rtl][kernels]") {
  const auto late = [](std::uint64_t cycle, KernelInputs&, KernelOutputs* out) {
    if (out != nullptr && out->dst_valid && cycle > 3000) out->dst.data[2] ^= 0x80;
  };
  const std::uint64_t seed = naa::testbench::test_seed();
  const KernelTestbenchReport a = run(sum_u64(late, true), seed);
  const KernelTestbenchReport b = run(sum_u64(late, true), seed);
  REQUIRE_FALSE(a.passed());
  CHECK(a.failure->cycle > 3000);
  CHECK(a.failure->to_string() == b.failure->to_string());
  const KernelTestbenchReport other = run(sum_u64(late, true), seed + 1);
  REQUIRE_FALSE(other.passed());
  CHECK(other.failure->seed == seed + 1);
}
