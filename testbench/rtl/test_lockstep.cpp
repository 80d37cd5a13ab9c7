// Lockstep (naa/rtl/lockstep.hpp): a deliberately broken mr_table (NAA_MR_TABLE_BROKEN: the bounds
// check lets an access end one byte past its region) must be caught, at the right cycle, block and
// port, with both values; the same stimulus on the correct RTL must not diverge. Also: the report
// of a stream port, the handler contract, and the waveform switch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/mr_table_broken_rtl.hpp"
#include "naa/rtl/mr_table_rtl.hpp"
#include "naa/rtl/rtl_session.hpp"
#include "support/mr_traffic.hpp"

#include <gtkwave/fstapi.h>

using namespace naa::rtl;
using namespace naa::testbench::rtl;

namespace {

struct Outcome {
  std::vector<MrTableInputs> inputs;  // everything driven, cycle by cycle
  std::optional<Divergence> divergence;
  int handler_calls = 0;
};

// Drives a lockstep pair with seeded mr_table traffic until it diverges or runs out of cycles.
Outcome run(std::unique_ptr<MrTablePort> rtl, std::uint64_t seed, int cycles) {
  Rng rng(seed);
  MrTraffic traffic(rng);
  Outcome o;
  MrTableLockstep dut(std::make_unique<MrTableModel>(), std::move(rtl),
                      [&o](const Divergence&) { ++o.handler_calls; });
  MrTableInputs reset;
  reset.rst_n = false;
  o.inputs.push_back(reset);
  dut.step(reset);
  for (int c = 0; c < cycles && !dut.checker().diverged(); ++c) {
    o.inputs.push_back(traffic.next(0.2, 0.9));
    dut.step(o.inputs.back());
  }
  // Running on after a divergence neither reports again nor changes the first report.
  for (int c = 0; c < 10; ++c)
    dut.step(traffic.next(0.2, 0.9));
  o.divergence = dut.checker().divergence();
  return o;
}

}  // namespace

TEST_CASE("lockstep: the broken mr_table is caught at the right cycle, block and port",
          "[rtl][lockstep]") {
  Rng seeds = seeded_rng("lockstep broken mr_table");
  const std::uint64_t seed = seeds();
  const Outcome good = run(make_mr_table_rtl(), seed, 20000);
  const Outcome bad = run(make_mr_table_broken_rtl(), seed, 20000);

  INFO((good.divergence ? good.divergence->to_string() : "correct RTL: no divergence"));
  CHECK_FALSE(good.divergence.has_value());
  CHECK(good.handler_calls == 0);

  REQUIRE(bad.divergence.has_value());
  const Divergence& d = *bad.divergence;
  INFO(d.to_string());
  CHECK(bad.handler_calls == 1);
  CHECK(d.block == "mr_table");
  CHECK(d.port == "rsp_status");
  CHECK(d.expected == "bounds");  // the model refuses the access; the broken RTL does not
  CHECK(d.to_string() == "lockstep divergence at cycle " + std::to_string(d.cycle) +
                             " in mr_table, port rsp_status: expected (model) bounds, actual "
                             "(RTL) " +
                             d.actual);

  // The cycle and the RTL's answer are right: the lookup one cycle earlier (latency 1) ends
  // exactly one byte past its region, and the RTL answered what the model answers for the same
  // lookup one byte shorter (or one byte earlier, if empty): ok, or permission if the access also
  // lacks a permission bit (checked after bounds).
  REQUIRE(d.cycle >= 1);
  REQUIRE(d.cycle < bad.inputs.size());
  MrTableModel replay;
  for (std::uint64_t c = 0; c + 1 < d.cycle; ++c)
    replay.step(bad.inputs[c]);
  MrTableLookup culprit = bad.inputs[d.cycle - 1].lookup;
  REQUIRE(culprit.valid);
  CHECK(replay.check(culprit) == MrStatus::bounds);
  if (culprit.len > 0) {
    --culprit.len;
  } else {
    --culprit.va;
  }
  const MrStatus one_byte_less = replay.check(culprit);
  CHECK((one_byte_less == MrStatus::ok || one_byte_less == MrStatus::permission));
  CHECK(d.actual == to_string(one_byte_less));
}

namespace {

// add_const that gets byte 3 of its 5th dst beat wrong: a stand-in for a datapath bug, wrapped
// around the model at the kernel ports.
class CorruptAddConst final : public KernelPort {
 public:
  explicit CorruptAddConst(std::uint32_t width) : inner_(width) {}
  std::string_view block() const noexcept override { return inner_.block(); }
  std::uint32_t width() const noexcept override { return inner_.width(); }
  KernelOutputs step(const KernelInputs& in) override {
    KernelOutputs o = inner_.step(in);
    if (o.dst_valid && in.dst_ready && ++beats_ == 5) o.dst.data[3] ^= 0x40;
    return o;
  }

 private:
  AddConstModel inner_;
  int beats_ = 0;
};

}  // namespace

TEST_CASE("lockstep: a stream divergence names the port and the byte", "[rtl][lockstep]") {
  KernelLockstep dut(std::make_unique<AddConstModel>(16), std::make_unique<CorruptAddConst>(16));
  KernelInputs in;
  in.rst_n = false;
  dut.step(in);  // cycle 0: reset
  in.rst_n = true;
  in.ap_start = true;
  in.user = 1;
  in.dst_ready = true;
  REQUIRE(dut.step(in).ap_ready);  // cycle 1: the call is accepted
  in.ap_start = false;
  in.src_valid = true;
  in.src.keep = keep_mask(16);
  for (int c = 2; c < 12; ++c) {
    in.src.data[3] = static_cast<std::uint8_t>(c);
    REQUIRE(dut.step(in).src_ready);  // a beat per cycle, never the last
  }
  REQUIRE(dut.checker().diverged());
  const Divergence& d = *dut.checker().divergence();
  CHECK(d.block == "add_const");
  CHECK(d.port == "dst_TDATA (byte 3)");
  // Beat k enters on cycle 2 + k and leaves the output register on cycle 3 + k: beat 4 on 7.
  CHECK(d.cycle == 7);
  CHECK(d.expected.size() == 32);  // the whole beat, W = 16 bytes in hex
  CHECK(d.expected.substr(6, 2) != d.actual.substr(6, 2));
}

TEST_CASE("lockstep: mismatched widths are refused", "[rtl][lockstep]") {
  CHECK_THROWS_AS(KernelLockstep(std::make_unique<AddConstModel>(16), make_add_const_rtl(64)),
                  std::invalid_argument);
  CHECK(make_add_const_rtl(32) == nullptr);  // not Verilated at that width: "not supported"
}

TEST_CASE("rtl: an FST waveform is written when asked, and only then", "[rtl][lockstep]") {
  const auto dir = std::filesystem::temp_directory_path() / "naa_rtl_trace_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / "mr_table.fst";
  std::filesystem::remove(path);
  {
    RtlOptions options;
    options.trace_fst = path.string();
    auto rtl = make_mr_table_rtl(options);
    MrTableInputs in;
    in.rst_n = false;
    rtl->step(in);
    in.rst_n = true;
    for (int c = 0; c < 100; ++c) {
      in.lookup.valid = (c % 3) == 0;
      in.lookup.rkey = static_cast<std::uint32_t>(c);
      rtl->step(in);
    }
  }
  REQUIRE(std::filesystem::exists(path));
  // Read it back with GTKWave's own FST reader (the copy inside Verilator).
  void* reader = fstReaderOpen(path.string().c_str());
  REQUIRE(reader != nullptr);
  std::vector<std::string> vars;
  while (const fstHier* h = fstReaderIterateHier(reader)) {
    if (h->htyp == FST_HT_VAR) vars.emplace_back(h->u.var.name, h->u.var.name_length);
  }
  const std::uint64_t end_time = fstReaderGetEndTime(reader);
  fstReaderClose(reader);
  // FST variable names carry their range: "rsp_status_o [2:0]".
  const auto has = [&vars](std::string_view name) {
    return std::any_of(vars.begin(), vars.end(), [name](const std::string& v) {
      return v == name || v.starts_with(std::string(name) + " [");
    });
  };
  CHECK(has("rsp_status_o"));
  CHECK(has("lk_va_i"));
  CHECK(has("clk_i"));
  CHECK(end_time >= 100 * 4000);  // 101 cycles of 4 ns, in ps
  {
    auto quiet = make_mr_table_rtl();  // no trace_fst: nothing written anywhere
    quiet->step(MrTableInputs{});
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("rtl: flops without reset start random unless x_seed is 0", "[rtl][lockstep]") {
  // Before any reset, add_const's datapath register shows its initial value on dst_TDATA.
  const auto initial_data = [](std::uint32_t x_seed) {
    RtlOptions options;
    options.x_seed = x_seed;
    auto rtl = make_add_const_rtl(16, options);
    const KernelOutputs o = rtl->step(KernelInputs{});  // rst_n high, nothing valid
    return std::vector<std::uint8_t>(o.dst.data.begin(), o.dst.data.begin() + 16);
  };
  const auto zero = std::vector<std::uint8_t>(16, 0);
  CHECK(initial_data(0) == zero);
  CHECK(initial_data(1) != zero);
  CHECK(initial_data(2) != initial_data(1));  // the seed matters...
  CHECK(initial_data(2) == initial_data(2));  // ...and reproduces
}

TEST_CASE("rtl: blocks of one RtlSession share one waveform on the caller's time axis",
          "[rtl][lockstep]") {
  const auto dir = std::filesystem::temp_directory_path() / "naa_rtl_session_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / "session.fst";
  std::filesystem::remove(path);
  std::uint64_t last_ps = 0;
  {
    auto session = std::make_shared<RtlSession>(RtlSessionOptions{path.string(), 1, 4000});
    RtlOptions a;
    a.name = "table";
    a.session = session;
    RtlOptions b;
    b.name = "adder";
    b.session = session;
    auto table = make_mr_table_rtl(a);
    auto adder = make_add_const_rtl(16, b);
    MrTableInputs reset;
    reset.rst_n = false;
    table->step(reset);  // cycle at 0 ps
    CHECK(session->last_cycle_ps() == 0);
    adder->step(KernelInputs{});  // the next free slot: 4000 ps
    CHECK(session->last_cycle_ps() == 4000);
    session->advance_to(1'000'000);  // the caller's clock moved on: 1 us
    table->step(MrTableInputs{});
    CHECK(session->last_cycle_ps() == 1'000'000);
    session->advance_to(500'000);  // never backwards
    adder->step(KernelInputs{});
    CHECK(session->last_cycle_ps() == 1'004'000);
    CHECK(session->cycles() == 4);
    last_ps = session->last_cycle_ps();
    // Verilator cannot add a model to a waveform that has started: refused, not aborted.
    RtlOptions late;
    late.session = session;
    CHECK_THROWS_AS(make_mr_table_rtl(late), std::logic_error);
    session->close_trace();  // complete now; later cycles are not recorded
    table->step(MrTableInputs{});
  }
  void* reader = fstReaderOpen(path.string().c_str());
  REQUIRE(reader != nullptr);
  std::vector<std::string> scopes;
  while (const fstHier* h = fstReaderIterateHier(reader)) {
    if (h->htyp == FST_HT_SCOPE) scopes.emplace_back(h->u.scope.name, h->u.scope.name_length);
  }
  const std::uint64_t end_time = fstReaderGetEndTime(reader);
  fstReaderClose(reader);
  CHECK(std::find(scopes.begin(), scopes.end(), "table") != scopes.end());
  CHECK(std::find(scopes.begin(), scopes.end(), "adder") != scopes.end());
  CHECK(end_time == last_ps + 2000);  // the last recorded rising edge
  std::filesystem::remove_all(dir);
}
