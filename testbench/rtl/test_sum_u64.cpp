// sum_u64 (rtl/sum_u64/sum_u64.sv) against its C++ model (naa/rtl/sum_u64.hpp): known answers on
// both; model and Verilated RTL in lockstep on seeded random traffic (lengths that are not
// multiples of 4 or W, empty packets, lane-ragged beats, idle cycles, back-pressure) at every
// Verilated width, with a scoreboard against a reference sum over the packet bytes; and the broken
// variant (the accumulator's carry into bit 32 dropped) caught by lockstep at the right block,
// port and cycle.
#include <catch2/catch.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/sum_u64_broken_rtl.hpp"
#include "naa/rtl/sum_u64_rtl.hpp"
#include "support/block_driver.hpp"
#include "support/verilated_widths.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;

namespace {

using SumDriver = BlockDriver<SumU64Inputs, SumU64Outputs, 1>;
constexpr StreamPorts<SumU64Inputs, SumU64Outputs, 1> kPorts{
    {{{&SumU64Inputs::in_valid, &SumU64Inputs::in, &SumU64Outputs::in_ready}}},
    &SumU64Inputs::out_ready,
    &SumU64Outputs::out_valid,
    &SumU64Outputs::out};

// The kernel's definition (PROTOCOL.md 5.3, fn 5): the uint32 little-endian elements of the
// bytes, trailing bytes that do not fill an element ignored, summed mod 2^64.
std::uint64_t reference_sum(const Bytes& b) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i + 4 <= b.size(); i += 4) {
    s += static_cast<std::uint64_t>(b[i]) | static_cast<std::uint64_t>(b[i + 1]) << 8 |
         static_cast<std::uint64_t>(b[i + 2]) << 16 | static_cast<std::uint64_t>(b[i + 3]) << 24;
  }
  return s;
}

std::uint64_t le64(const Bytes& b) {
  REQUIRE(b.size() == 8);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = v << 8 | b[static_cast<std::size_t>(i)];
  return v;
}

// Beats whose keep covers whole lanes only, a random number of them per beat (and empty beats):
// what the block sums is then exactly the packet's bytes read lane by lane, beat by beat.
std::vector<StreamBeat> lane_ragged_beats(const Bytes& packet, std::uint32_t w, Rng& rng,
                                          Bytes& summed) {
  std::vector<StreamBeat> beats;
  std::size_t pos = 0;
  const std::size_t whole = packet.size() / 4 * 4;
  do {
    StreamBeat b;
    for (std::uint32_t i = 0; i < w; ++i)
      b.data[i] = uniform<std::uint8_t>(rng, 0, 255);
    std::size_t n = std::min<std::size_t>(w, whole - pos);
    if (n > 0 && chance(rng, 0.5)) n = 4 * uniform<std::size_t>(rng, 0, n / 4);
    for (std::size_t i = 0; i < n; ++i)
      b.data[i] = packet[pos + i];
    b.keep = keep_mask(static_cast<std::uint32_t>(n));
    pos += n;
    b.last = pos == whole;
    beats.push_back(b);
  } while (pos < whole);
  summed.assign(packet.begin(), packet.begin() + static_cast<std::ptrdiff_t>(whole));
  return beats;
}

struct Run {
  std::vector<Bytes> results;
  std::uint64_t cycles = 0;
};

Run run_packets(SumU64Port& port, const std::vector<Bytes>& packets) {
  Rng rng(11);
  SumDriver driver(rng, port.width(), kPorts);
  for (const auto& p : packets)
    driver.source().push(to_beats(p, port.width(), BeatShape::full, rng));
  SumU64Inputs in;
  in.rst_n = false;
  port.step(in);
  Run run;
  while (driver.sink().packets().size() < packets.size() && run.cycles < 10000) {
    driver.cycle(port, in);
    ++run.cycles;
  }
  run.results = driver.sink().packets();
  return run;
}

std::vector<std::unique_ptr<SumU64Port>> implementations() {
  std::vector<std::unique_ptr<SumU64Port>> ports;
  for (const std::uint32_t w : naa::testbench::verilated(sum_u64_rtl_widths())) {
    ports.push_back(std::make_unique<SumU64Model>(w));
    ports.push_back(make_sum_u64_rtl(w));
  }
  return ports;
}

}  // namespace

TEST_CASE("sum_u64: known answers on model and RTL", "[rtl][sum_u64]") {
  Bytes ones(4 * 100 + 3, 0xFF);  // 100 elements of 2^32 - 1 and 3 trailing bytes
  Bytes counting;
  for (std::uint32_t i = 1; i <= 37; ++i) {
    for (int b = 0; b < 4; ++b)
      counting.push_back(static_cast<std::uint8_t>(i >> (8 * b)));
  }
  const std::vector<Bytes> packets{Bytes{}, Bytes{1, 2, 3}, ones, counting};
  REQUIRE_FALSE(sum_u64_rtl_widths().empty());
  for (auto& port : implementations()) {
    REQUIRE(port != nullptr);
    INFO("width " << port->width());
    const Run run = run_packets(*port, packets);
    REQUIRE(run.results.size() == 4);
    CHECK(le64(run.results[0]) == 0);
    CHECK(le64(run.results[1]) == 0);  // no whole element
    CHECK(le64(run.results[2]) == 100 * 0xFFFFFFFFULL);
    CHECK(le64(run.results[3]) == 37 * 38 / 2);
  }
  CHECK_THROWS_AS(SumU64Model(4), std::invalid_argument);
  CHECK_THROWS_AS(SumU64Model(6), std::invalid_argument);
}

TEST_CASE("sum_u64: one beat per cycle, result one cycle after the last beat", "[rtl][sum_u64]") {
  for (auto& port : implementations()) {
    INFO("width " << port->width());
    const Run run = run_packets(*port, {Bytes(port->width() * 8, 0x5A)});
    REQUIRE(run.results.size() == 1);
    CHECK(run.cycles == 8 + 1);
  }
}

TEST_CASE("sum_u64: model and RTL agree every cycle on random traffic", "[rtl][sum_u64]") {
  for (const std::uint32_t w : naa::testbench::verilated(sum_u64_rtl_widths())) {
    DYNAMIC_SECTION("W=" << w) {
      Rng rng = seeded_rng("sum_u64 W=" + std::to_string(w));
      RtlOptions options;
      options.x_seed = static_cast<std::uint32_t>(rng());
      SumU64Lockstep dut(std::make_unique<SumU64Model>(w), make_sum_u64_rtl(w, options));
      SumDriver driver(rng, w, kPorts);
      std::vector<std::uint64_t> expected;
      bool protocol_ok = true;
      std::size_t odd_lengths = 0;

      SumU64Inputs in;
      for (int c = 0; c < 3; ++c) {
        in.rst_n = false;
        in.in_valid = chance(rng, 0.5);
        in.out_ready = chance(rng, 0.5);
        dut.step(in);
      }
      for (const Phase& phase : kPhases) {
        driver.set_phase(phase);
        for (int p = 0; p < 400; ++p) {
          Bytes bytes = random_bytes(rng, uniform<std::size_t>(rng, 0, 6 * w));
          if (chance(rng, 0.1)) std::fill(bytes.begin(), bytes.end(), 0xFF);  // big carries
          odd_lengths += (bytes.size() % 4 != 0 || bytes.size() % w != 0) ? 1U : 0U;
          if (chance(rng, 0.7)) {
            driver.source().push(to_beats(bytes, w, BeatShape::full, rng));
            expected.push_back(reference_sum(bytes));
          } else {
            Bytes summed;
            driver.source().push(lane_ragged_beats(bytes, w, rng, summed));
            expected.push_back(reference_sum(summed));
          }
        }
        for (int c = 0; c < 200000 && driver.sink().packets().size() < expected.size(); ++c) {
          protocol_ok = driver.cycle(dut, in) && protocol_ok;
          if (dut.checker().diverged()) break;
        }
        if (dut.checker().diverged()) break;
      }
      INFO((dut.checker().diverged() ? dut.checker().divergence()->to_string() : "no divergence"));
      REQUIRE_FALSE(dut.checker().diverged());
      std::cout << "  W=" << w << ": " << dut.checker().cycles() << " cycles, "
                << driver.sink().beats() << " output beats compared, " << odd_lengths
                << " lengths not a multiple of 4 or W\n";
      CHECK(protocol_ok);
      CHECK(odd_lengths > 0);
      const auto& results = driver.sink().packets();
      REQUIRE(results.size() == expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i)
        CHECK(le64(results[i]) == expected[i]);
    }
  }
}

TEST_CASE("sum_u64: lockstep catches the broken variant at the right block, port and cycle",
          "[rtl][sum_u64][lockstep]") {
  // The bug (NAA_SUM_U64_BROKEN): the accumulator's carry out of bit 31 is dropped. Packets whose
  // running sum never carries pass; two full beats of 0xFF bytes carry on the second beat.
  Rng rng = seeded_rng("sum_u64 broken");
  for (const std::uint32_t w : naa::testbench::verilated(sum_u64_rtl_widths())) {
    INFO("W=" << w);
    int handler_calls = 0;
    SumU64Lockstep dut(std::make_unique<SumU64Model>(w), make_sum_u64_broken_rtl(w),
                       [&handler_calls](const Divergence&) { ++handler_calls; });
    SumU64Inputs in;
    in.rst_n = false;
    dut.step(in);  // cycle 0
    in.rst_n = true;
    in.out_ready = true;
    // One packet back to back; returns the cycle its result appeared on.
    const auto send = [&](const Bytes& bytes) {
      Rng garbage(3);
      const std::vector<StreamBeat> beats = to_beats(bytes, w, BeatShape::full, garbage);
      std::size_t next = 0;
      for (int c = 0; c < 100; ++c) {
        in.in_valid = next < beats.size();
        if (in.in_valid) in.in = beats[next];
        const std::uint64_t cycle = dut.checker().cycles();
        const SumU64Outputs o = dut.step(in);
        if (in.in_valid && o.in_ready) ++next;
        if (o.out_valid) return cycle;
      }
      FAIL("no result");
      return std::uint64_t{0};
    };
    for (int p = 0; p < 50; ++p) {
      Bytes small = random_bytes(rng, uniform<std::size_t>(rng, 0, 6 * w));
      for (std::size_t i = 0; i < small.size(); ++i)
        small[i] = i % 4 < 2 ? small[i] : 0;  // elements below 2^16: no carry out of bit 31
      (void)send(small);
    }
    REQUIRE_FALSE(dut.checker().diverged());
    const std::uint64_t first_beat = dut.checker().cycles();
    const std::uint64_t result_cycle = send(Bytes(2 * w, 0xFF));
    REQUIRE(dut.checker().diverged());
    const Divergence& d = *dut.checker().divergence();
    INFO(d.to_string());
    CHECK(d.block == "sum_u64");
    CHECK(d.port == "out_data (byte 4)");  // bit 32 is the low bit of byte 4
    CHECK(d.cycle == first_beat + 2);      // the cycle after the second (last) beat
    CHECK(result_cycle == d.cycle);
    CHECK(handler_calls == 1);
  }
}
