// naa-sim's MR table in RTL mode (MrTableRtl, sim/rtl/src/rtl_blocks.cpp) keeps its inputs between
// cycles and tells the port which input groups changed (rtl::MrTablePort::step_changed, issue
// 31): the Verilated adapter writes only those ports, so a group left out while it changed would
// leave a stale value on the RTL's ports (a write's valid bit left high repeats the write, which
// no answer shows). A port between MrTableRtl and the RTL checks every cycle that the groups
// outside `changed` equal the previous cycle's inputs, and that the RTL answers as the model
// (in the output groups asked for), through program, invalidate, lookups, entry reads and searches.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/mr_table_rtl.hpp"
#include "naa/sim/config.hpp"
#include "naa/sim/mr_table.hpp"
#include "naa/sim/rtl_blocks.hpp"

namespace {

namespace r = naa::rtl;
namespace s = naa::sim;

struct PortLog {
  std::uint64_t cycles = 0;
  std::uint64_t partial = 0;     // cycles with some input group not written
  std::uint64_t stale = 0;       // cycles with a changed group outside `changed`
  std::uint64_t mismatches = 0;  // outputs asked for that differ from the model's
  std::string first;             // the first problem
};

class CheckingPort final : public r::MrTablePort {
 public:
  CheckingPort(std::unique_ptr<r::MrTablePort> rtl, PortLog& log)
      : rtl_(std::move(rtl)), log_(log) {}

  r::MrTableOutputs step(const r::MrTableInputs& in) override {
    return step_changed(in, r::kMrInputAll, r::kMrOutputAll);
  }

  r::MrTableOutputs step_changed(const r::MrTableInputs& in, std::uint8_t changed,
                                 std::uint8_t wanted) override {
    ++log_.cycles;
    log_.partial += changed != r::kMrInputAll ? 1U : 0U;
    const std::uint8_t differ = r::changed_groups(last_, in);
    if ((differ & ~changed) != 0) {
      note(log_.stale, "cycle " + std::to_string(log_.cycles) + ": groups " +
                           std::to_string(differ) + " changed, " + std::to_string(changed) +
                           " named");
    }
    last_ = in;
    const r::MrTableOutputs want = model_.step(in);
    const r::MrTableOutputs got = rtl_->step_changed(in, changed, wanted);
    const bool rsp_ok = (wanted & r::kMrOutputResponse) == 0 ||
                        (got.rsp_valid == want.rsp_valid && got.rsp_status == want.rsp_status);
    const bool rd_ok = (wanted & r::kMrOutputRead) == 0 ||
                       (got.rd_valid == want.rd_valid && got.rd_entry == want.rd_entry);
    const bool free_ok = (wanted & r::kMrOutputSearch) == 0 ||
                         (got.free_any == want.free_any && got.free_index == want.free_index &&
                          got.free_count == want.free_count);
    if (!rsp_ok || !rd_ok || !free_ok) {
      note(log_.mismatches, "cycle " + std::to_string(log_.cycles) + ": RTL and model differ");
    }
    return got;
  }

 private:
  void note(std::uint64_t& count, const std::string& what) {
    if (log_.first.empty()) log_.first = what;
    ++count;
  }

  std::unique_ptr<r::MrTablePort> rtl_;
  r::MrTableModel model_;
  r::MrTableInputs last_;
  PortLog& log_;
};

s::MrEntry region(std::uint32_t index, std::uint32_t tag, std::uint64_t base, std::uint64_t length,
                  std::uint32_t owner) {
  return s::MrEntry{true, tag << 8 | index, base, length, s::kMrRemoteRead | s::kMrRemoteWrite,
                    owner};
}

}  // namespace

TEST_CASE("MR table in RTL mode: every cycle names the input groups that changed",
          "[sim][rtl][mr_table]") {
  PortLog log;
  s::RtlBlocksOptions options;
  options.mr_table = s::BlockMode::rtl;
  options.mr_table_rtl = [&log](const r::RtlOptions& o) -> std::unique_ptr<r::MrTablePort> {
    return std::make_unique<CheckingPort>(r::make_mr_table_rtl(o), log);
  };
  const s::SimConfig cfg;
  s::RtlBlocks blocks(options, cfg);
  const std::unique_ptr<s::MrTableIf> table = blocks.make_mr_table(cfg);
  REQUIRE(table);

  CHECK(table->free_count() == 32);
  table->program(0, region(0, 0x11, 0x1000, 0x100, 7));
  table->program(1, region(1, 0x22, 0x8000, 0x40, 9));
  // The same lookup twice (naa-sim's nop calls: only the valid bit changes), then others.
  CHECK(table->lookup(0x1100, 0x1000, 64, s::kMrRemoteWrite, 7) == s::MrCheck::ok);
  CHECK(table->lookup(0x1100, 0x1000, 64, s::kMrRemoteWrite, 7) == s::MrCheck::ok);
  CHECK(table->lookup(0x1100, 0x10C1, 64, s::kMrRemoteWrite, 7) == s::MrCheck::bounds);
  CHECK(table->lookup(0x2201, 0x8000, 64, s::kMrRemoteRead, 9) == s::MrCheck::ok);
  CHECK(table->lookup(0x2201, 0x8000, 64, s::kMrRemoteRead, 8) == s::MrCheck::owner_mismatch);
  CHECK(table->lookup(0x2202, 0x8000, 64, s::kMrRemoteRead, 9) == s::MrCheck::no_entry);
  CHECK(table->entry(1).base == 0x8000);
  CHECK(table->free_index() == 2);
  // A write right after a write, and a lookup right after a write of its entry.
  table->invalidate(0);
  table->program(2, region(2, 0x33, 0x2000, 0x10, 7));
  CHECK(table->lookup(0x1100, 0x1000, 64, s::kMrRemoteWrite, 7) == s::MrCheck::no_entry);
  CHECK(table->lookup(0x3302, 0x2000, 16, s::kMrRemoteWrite, 7) == s::MrCheck::ok);
  CHECK_FALSE(table->entry(0).valid);
  CHECK(table->entry(2).rkey == 0x3302);
  CHECK(table->free_index() == 0);
  CHECK(table->free_count() == 30);
  table->invalidate(1);
  table->invalidate(2);
  CHECK(table->free_count() == 32);

  INFO(log.first);
  CHECK(log.stale == 0);
  CHECK(log.mismatches == 0);
  CHECK(log.cycles == blocks.counters.mr_cycles);
  // Every cycle skips some group but two: the reset cycle and MrTableRtl's first.
  CHECK(log.partial + 2 == log.cycles);
}

// libsystemc's own main() refers to sc_main (naa::sim_rtl links SystemC); Catch brings this
// test's main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 1;
}
