// mr_table (rtl/mr_table/mr_table.sv) against its C++ model (naa/rtl/mr_table.hpp): every check of
// rtl/mr_table/README.md as a known answer on both, then model and Verilated RTL in lockstep on
// seeded random traffic biased to the edges of the regions.
#include <catch2/catch.hpp>

#include <iostream>
#include <limits>
#include <memory>
#include <string>

#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/mr_table_rtl.hpp"
#include "support/mr_traffic.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;

namespace {

constexpr std::uint64_t kTop = std::numeric_limits<std::uint64_t>::max();

class Driver {
 public:
  explicit Driver(MrTablePort& port) : port_(port) {
    MrTableInputs in;
    in.rst_n = false;
    port_.step(in);
    port_.step(MrTableInputs{});
  }

  void program(std::uint32_t rkey, std::uint64_t base, std::uint32_t length, std::uint8_t access,
               std::uint32_t qpn) {
    MrTableInputs in;
    in.write = {
        true, static_cast<std::uint8_t>(rkey & kMrIndexMask), true, rkey, base, length, access,
        qpn};
    port_.step(in);
  }

  void invalidate(std::uint8_t index) {
    MrTableInputs in;
    in.write.valid = true;
    in.write.index = index;
    port_.step(in);
  }

  // One lookup, then an idle cycle on which its result must appear (latency 1).
  MrStatus lookup(std::uint32_t rkey, std::uint64_t va, std::uint32_t len, std::uint8_t access,
                  std::uint32_t qpn) {
    MrTableInputs in;
    in.lookup = {true, rkey, va, len, access, qpn};
    const MrTableOutputs during = port_.step(in);
    CHECK_FALSE(during.rsp_valid);
    const MrTableOutputs after = port_.step(MrTableInputs{});
    REQUIRE(after.rsp_valid);
    return after.rsp_status;
  }

  MrTablePort& port() { return port_; }

 private:
  MrTablePort& port_;
};

std::vector<std::unique_ptr<MrTablePort>> implementations() {
  std::vector<std::unique_ptr<MrTablePort>> ports;
  ports.push_back(std::make_unique<MrTableModel>());
  ports.push_back(make_mr_table_rtl());
  return ports;
}

const char* name(std::size_t i) {
  return i == 0 ? "model" : "RTL";
}

constexpr std::uint8_t kR = kMrAccessRemoteRead;
constexpr std::uint8_t kW = kMrAccessRemoteWrite;

}  // namespace

TEST_CASE("mr_table: every lookup outcome, on model and RTL", "[rtl][mr_table]") {
  auto ports = implementations();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    INFO(name(i));
    Driver d(*ports[i]);
    const std::uint32_t rkey = 0xABCDE000U | 7U;  // index 7
    d.program(rkey, 0x1000, 0x100, kR | kW, 0x42);

    CHECK(d.lookup(rkey, 0x1000, 0x100, kW, 0x42) == MrStatus::ok);      // the whole region
    CHECK(d.lookup(rkey, 0x10FF, 1, kR, 0x42) == MrStatus::ok);          // last byte
    CHECK(d.lookup(rkey, 0x1100, 0, kR, 0x42) == MrStatus::ok);          // empty, at the end
    CHECK(d.lookup(rkey, 0x1000, 0x101, kW, 0x42) == MrStatus::bounds);  // one byte too long
    CHECK(d.lookup(rkey, 0x10FF, 2, kW, 0x42) == MrStatus::bounds);      // ends one past
    CHECK(d.lookup(rkey, 0x0FFF, 1, kW, 0x42) == MrStatus::bounds);      // starts before
    CHECK(d.lookup(rkey, 0x1101, 0, kW, 0x42) == MrStatus::bounds);      // empty, past the end
    CHECK(d.lookup(rkey | 0x100U, 0x1000, 1, kW, 0x42) == MrStatus::key_mismatch);
    CHECK(d.lookup(rkey + 1, 0x1000, 1, kW, 0x42) == MrStatus::no_entry);  // index 8: empty
    CHECK(d.lookup(rkey, 0x1000, 1, kW, 0x43) == MrStatus::owner_mismatch);
    CHECK(d.lookup(rkey, 0x1000, 1, kMrAccessRemoteAtomic, 0x42) == MrStatus::permission);
    CHECK(d.lookup(rkey, 0x1000, 1, 0, 0x42) == MrStatus::ok);  // asking for nothing
    // Priority: owner is checked before bounds, bounds before permission.
    CHECK(d.lookup(rkey, 0, 1, kMrAccessRemoteAtomic, 0x43) == MrStatus::owner_mismatch);
    CHECK(d.lookup(rkey, 0, 1, kMrAccessRemoteAtomic, 0x42) == MrStatus::bounds);

    // A region at the top of the address space: va + len must not pass 2^64.
    const std::uint32_t top_key = 0x55500000U | 31U;
    d.program(top_key, kTop - 0xFF, 0x1000, kR, 0x42);  // base + length is past 2^64: clamped
    CHECK(d.lookup(top_key, kTop - 0xFF, 0x100, kR, 0x42) == MrStatus::ok);  // ends at 2^64
    CHECK(d.lookup(top_key, kTop, 1, kR, 0x42) == MrStatus::ok);
    CHECK(d.lookup(top_key, kTop, 2, kR, 0x42) == MrStatus::bounds);  // would wrap to 0
    CHECK(d.lookup(top_key, kTop - 0xFF, 0x101, kR, 0x42) == MrStatus::bounds);

    // The largest region: length 2^32 - 1.
    const std::uint32_t big_key = 0x77700000U | 3U;
    d.program(big_key, 1ULL << 40, 0xFFFFFFFFU, kR, 0x1);
    CHECK(d.lookup(big_key, 1ULL << 40, 0xFFFFFFFFU, kR, 0x1) == MrStatus::ok);
    CHECK(d.lookup(big_key, (1ULL << 40) + 1, 0xFFFFFFFFU, kR, 0x1) == MrStatus::bounds);

    // Owner QPN is 24 bits: higher bits are not part of the port.
    CHECK(d.lookup(big_key, 1ULL << 40, 1, kR, 0x1000001) == MrStatus::ok);

    d.invalidate(7);
    CHECK(d.lookup(rkey, 0x1000, 1, kW, 0x42) == MrStatus::no_entry);
  }
}

TEST_CASE("mr_table: a lookup sees the table before a write in the same cycle", "[rtl][mr_table]") {
  auto ports = implementations();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    INFO(name(i));
    Driver d(*ports[i]);
    const std::uint32_t rkey = 0x12300000U | 5U;
    MrTableInputs in;
    in.write = {true, 5, true, rkey, 0x2000, 0x10, kR, 9};
    in.lookup = {true, rkey, 0x2000, 4, kR, 9};
    d.port().step(in);  // program and look up together: the entry was not there yet
    const MrTableOutputs first = d.port().step(MrTableInputs{});
    CHECK(first.rsp_valid);
    CHECK(first.rsp_status == MrStatus::no_entry);
    CHECK(d.lookup(rkey, 0x2000, 4, kR, 9) == MrStatus::ok);

    in.write = {true, 5, false, 0, 0, 0, 0, 0};  // invalidate, and look up in the same cycle
    d.port().step(in);
    const MrTableOutputs second = d.port().step(MrTableInputs{});
    CHECK(second.rsp_status == MrStatus::ok);
    CHECK(d.lookup(rkey, 0x2000, 4, kR, 9) == MrStatus::no_entry);
  }
}

TEST_CASE("mr_table: one lookup per cycle, results in order", "[rtl][mr_table]") {
  auto ports = implementations();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    INFO(name(i));
    Driver d(*ports[i]);
    const std::uint32_t rkey = 0x99900000U | 1U;
    d.program(rkey, 0x100, 0x10, kR, 2);
    const MrStatus want[] = {MrStatus::ok, MrStatus::bounds, MrStatus::owner_mismatch,
                             MrStatus::permission, MrStatus::ok};
    const MrTableLookup asks[] = {{true, rkey, 0x100, 0x10, kR, 2},
                                  {true, rkey, 0x100, 0x11, kR, 2},
                                  {true, rkey, 0x100, 0x10, kR, 3},
                                  {true, rkey, 0x100, 0x10, kW, 2},
                                  {true, rkey, 0x10F, 1, kR, 2}};
    std::vector<MrStatus> got;
    for (int c = 0; c < 6; ++c) {
      MrTableInputs in;
      if (c < 5) in.lookup = asks[c];
      const MrTableOutputs out = d.port().step(in);
      CHECK(out.rsp_valid == (c >= 1));
      if (out.rsp_valid) got.push_back(out.rsp_status);
    }
    CHECK(got == std::vector<MrStatus>(std::begin(want), std::end(want)));
  }
}

TEST_CASE("mr_table: model and RTL agree every cycle on random traffic", "[rtl][mr_table]") {
  Rng rng = seeded_rng("mr_table");
  RtlOptions options;
  options.x_seed = static_cast<std::uint32_t>(rng());
  MrTableLockstep dut(std::make_unique<MrTableModel>(), make_mr_table_rtl(options));
  MrTraffic traffic(rng);
  std::uint64_t lookups = 0;
  std::uint64_t reads = 0;  // of valid entries (every field compared)
  std::uint64_t full = 0;   // cycles with no free entry
  std::array<std::uint64_t, 6> outcomes{};
  constexpr double kRates[][2] = {{0.3, 1.0}, {0.05, 0.5}, {0.5, 0.1}, {0.02, 0.9}};
  for (int round = 0; round < 16 && !dut.checker().diverged(); ++round) {
    MrTableInputs reset;
    reset.rst_n = false;
    dut.step(reset);
    traffic.reset();
    const auto& rate = kRates[static_cast<std::size_t>(round) % 4];
    for (int c = 0; c < 10000 && !dut.checker().diverged(); ++c) {
      const MrTableOutputs out = dut.step(traffic.next(rate[0], rate[1], 0.3));
      if (out.rsp_valid) {
        ++lookups;
        ++outcomes[static_cast<std::size_t>(out.rsp_status)];
      }
      reads += out.rd_valid && out.rd_entry.valid ? 1U : 0U;
      full += out.free_any ? 0U : 1U;
    }
  }
  INFO((dut.checker().diverged() ? dut.checker().divergence()->to_string() : "no divergence"));
  REQUIRE_FALSE(dut.checker().diverged());
  std::cout << "  " << dut.checker().cycles() << " cycles, " << lookups << " lookups compared\n";
  CHECK(lookups > 50000);
  CHECK(reads > 10000);
  INFO("cycles with a full table: " << full);
  // The stimulus reached every outcome, each often enough to matter.
  for (std::size_t s = 0; s < outcomes.size(); ++s) {
    INFO("outcome " << to_string(static_cast<MrStatus>(s)) << ": " << outcomes[s]);
    CHECK(outcomes[s] > 100);
  }
}

TEST_CASE("mr_table: the read port and the free-entry search answer from the table",
          "[rtl][mr_table]") {
  auto ports = implementations();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    INFO(name(i));
    Driver d(*ports[i]);
    const auto idle = [&d] { return d.port().step(MrTableInputs{}); };
    // After reset: every entry free, the lowest is 0.
    MrTableOutputs o = idle();
    CHECK(o.free_any);
    CHECK(o.free_index == 0);
    CHECK(o.free_count == kMrEntries);
    const std::uint32_t rkey0 = 0xABC00000U | 0U;
    const std::uint32_t rkey1 = 0x12300000U | 1U;
    d.program(rkey0, 0x1000, 256, kR | kW, 0x11);
    d.program(rkey1, kTop - 9, 10, kR, 0xABCDEF);
    o = idle();
    CHECK(o.free_index == 2);
    CHECK(o.free_count == kMrEntries - 2);
    // Read entry 1 (latency 1, like a lookup), then entry 5 (invalid: every field 0).
    MrTableInputs rd;
    rd.read = {true, 1};
    CHECK_FALSE(d.port().step(rd).rd_valid);
    rd.read = {true, 5};
    o = d.port().step(rd);
    REQUIRE(o.rd_valid);
    CHECK(o.rd_entry == MrTableEntry{true, rkey1, kTop - 9, 10, kR, 0xABCDEF});
    o = idle();
    REQUIRE(o.rd_valid);
    CHECK(o.rd_entry == MrTableEntry{});
    CHECK_FALSE(idle().rd_valid);
    // A read in the cycle of a write sees the entry before the write; the search outputs show
    // the table of the cycle (before its write).
    MrTableInputs both;
    both.write.valid = true;
    both.write.index = 0;  // invalidate entry 0
    both.read = {true, 0};
    o = d.port().step(both);
    CHECK(o.free_index == 2);
    o = idle();
    REQUIRE(o.rd_valid);
    CHECK(o.rd_entry.valid);
    CHECK(o.rd_entry.rkey == rkey0);
    CHECK(o.free_index == 0);
    CHECK(o.free_count == kMrEntries - 1);
    // A full table: no free entry.
    for (std::uint32_t k = 0; k < kMrEntries; ++k)
      d.program(0x5500U << 8 | k, 0x100 * k, 0x100, kR, 0x12);
    o = idle();
    CHECK_FALSE(o.free_any);
    CHECK(o.free_count == 0);
    d.invalidate(17);
    o = idle();
    CHECK(o.free_any);
    CHECK(o.free_index == 17);
    CHECK(o.free_count == 1);
  }
}

// A reset with a lookup's answer due (the cover c_reset_answer_due of mr_table_sva.sv): the
// answer is dropped and the table is empty again, in the model and the RTL alike.
TEST_CASE("mr_table: a reset with an answer due drops it and empties the table",
          "[rtl][mr_table]") {
  auto ports = implementations();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    INFO(name(i));
    Driver d(*ports[i]);
    const std::uint32_t rkey = 0x45600000U | 3U;
    d.program(rkey, 0x3000, 0x100, kR, 4);
    REQUIRE(d.lookup(rkey, 0x3000, 8, kR, 4) == MrStatus::ok);
    MrTableInputs in;
    in.lookup = {true, rkey, 0x3000, 8, kR, 4};
    (void)d.port().step(in);
    MrTableInputs reset;
    reset.rst_n = false;
    CHECK_FALSE(d.port().step(reset).rsp_valid);  // the answer that was due
    CHECK_FALSE(d.port().step(MrTableInputs{}).rsp_valid);
    CHECK(d.lookup(rkey, 0x3000, 8, kR, 4) == MrStatus::no_entry);
  }
}

// MrTablePort::step_changed (issue 31): a caller that holds an idle port's fields (valid low, as
// naa-sim's MrTableRtl does) tells the RTL which input groups changed and which outputs it
// reads; the RTL must give the model's answers in the groups read, cycle by cycle, although it
// writes only the changed ports. changed_groups() finds the groups as such a caller knows them.
TEST_CASE("mr_table: step_changed writes only the changed ports and gives step()'s answers",
          "[rtl][mr_table]") {
  MrTableInputs a;
  MrTableInputs b = a;
  CHECK(changed_groups(a, b) == 0);
  b.lookup.valid = true;
  CHECK(changed_groups(a, b) == kMrInputLookupValid);
  b.lookup.va = 1;
  CHECK(changed_groups(a, b) == kMrInputLookup);
  b = a;
  b.rst_n = false;
  b.write.owner_qpn = 1;
  b.read.index = 3;
  CHECK(changed_groups(a, b) == (kMrInputReset | kMrInputWrite | kMrInputRead));

  Rng rng = seeded_rng("mr_table_step_changed");
  RtlOptions options;
  options.x_seed = static_cast<std::uint32_t>(rng());
  MrTableModel model;
  const std::unique_ptr<MrTablePort> rtl = make_mr_table_rtl(options);
  MrTraffic traffic(rng);
  MrTableInputs reset;
  reset.rst_n = false;
  (void)model.step(reset);
  (void)rtl->step(reset);
  MrTableInputs last = reset;
  std::uint64_t partial = 0;  // cycles with fewer than all 17 input ports written
  std::uint64_t lookups = 0;
  for (int c = 0; c < 20000; ++c) {
    MrTableInputs in = traffic.next(0.1, 0.4, 0.2);
    // Hold an idle port's fields, as a hardware driver (and MrTableRtl) would.
    if (!in.write.valid) {
      in.write = last.write;
      in.write.valid = false;
    }
    if (!in.lookup.valid && chance(rng, 0.8)) {
      in.lookup = last.lookup;
      in.lookup.valid = false;
    }
    if (!in.read.valid) in.read.index = last.read.index;
    const std::uint8_t changed = changed_groups(last, in);
    const auto wanted = static_cast<std::uint8_t>(uniform<unsigned>(rng, 0, kMrOutputAll));
    partial += changed != kMrInputAll ? 1U : 0U;
    const MrTableOutputs want = model.step(in);
    const MrTableOutputs got = rtl->step_changed(in, changed, wanted);
    INFO("cycle " << c << ", changed " << unsigned{changed} << ", wanted " << unsigned{wanted});
    if (wanted & kMrOutputResponse) {
      REQUIRE(got.rsp_valid == want.rsp_valid);
      REQUIRE(got.rsp_status == want.rsp_status);
      lookups += got.rsp_valid ? 1U : 0U;
    }
    if (wanted & kMrOutputRead) {
      REQUIRE(got.rd_valid == want.rd_valid);
      REQUIRE(got.rd_entry == want.rd_entry);
    }
    if (wanted & kMrOutputSearch) {
      REQUIRE(got.free_any == want.free_any);
      REQUIRE(got.free_index == want.free_index);
      REQUIRE(got.free_count == want.free_count);
    }
    last = in;
  }
  CHECK(partial > 15000);
  CHECK(lookups > 2000);
}
