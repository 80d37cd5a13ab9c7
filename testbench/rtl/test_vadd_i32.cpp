// vadd_i32 (rtl/vadd_i32/vadd_i32.sv) against its C++ model (naa/rtl/vadd_i32.hpp): known answers
// on both, then model and Verilated RTL in lockstep on seeded random traffic, the two inputs
// throttled independently, with back-pressure, at every Verilated width, with a scoreboard.
#include <catch2/catch.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "naa/rtl/vadd_i32.hpp"
#include "naa/rtl/vadd_i32_rtl.hpp"
#include "support/block_driver.hpp"
#include "support/verilated_widths.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;

namespace {

Bytes le32s(std::initializer_list<std::uint32_t> words) {
  Bytes b;
  for (const std::uint32_t w : words) {
    for (int i = 0; i < 4; ++i)
      b.push_back(static_cast<std::uint8_t>(w >> (8 * i)));
  }
  return b;
}

std::uint32_t load_le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// The kept bytes of a + b for one pair of beats (bytes outside a keep count as 0).
Bytes expected_bytes(const StreamBeat& a, const StreamBeat& b, std::uint32_t width) {
  Bytes out;
  for (std::uint32_t lane = 0; lane < width / 4; ++lane) {
    std::uint8_t x[4];
    std::uint8_t y[4];
    for (std::uint32_t k = 0; k < 4; ++k) {
      const std::uint32_t i = 4 * lane + k;
      x[k] = ((a.keep >> i) & 1U) ? a.data[i] : 0;
      y[k] = ((b.keep >> i) & 1U) ? b.data[i] : 0;
    }
    const std::uint32_t s = load_le32(x) + load_le32(y);
    for (std::uint32_t k = 0; k < 4; ++k) {
      const std::uint32_t i = 4 * lane + k;
      if ((a.keep >> i) & (b.keep >> i) & 1U)
        out.push_back(static_cast<std::uint8_t>(s >> (8 * k)));
    }
  }
  return out;
}

using VaddI32Driver = BlockDriver<VaddI32Inputs, VaddI32Outputs, 2>;
constexpr StreamPorts<VaddI32Inputs, VaddI32Outputs, 2> kPorts{
    {{{&VaddI32Inputs::a_valid, &VaddI32Inputs::a, &VaddI32Outputs::a_ready},
      {&VaddI32Inputs::b_valid, &VaddI32Inputs::b, &VaddI32Outputs::b_ready}}},
    &VaddI32Inputs::out_ready,
    &VaddI32Outputs::out_valid,
    &VaddI32Outputs::out};

struct Run {
  std::vector<Bytes> packets;
  std::uint64_t cycles = 0;
};

Run run_packets(VaddI32Port& port, const Bytes& a, const Bytes& b) {
  Rng rng(3);
  VaddI32Driver driver(rng, port.width(), kPorts);
  StreamSource& src_a = driver.source(0);
  StreamSource& src_b = driver.source(1);
  const StreamSink& sink = driver.sink();
  src_a.push(to_beats(a, port.width(), BeatShape::full, rng));
  src_b.push(to_beats(b, port.width(), BeatShape::full, rng));
  VaddI32Inputs in;
  in.rst_n = false;
  port.step(in);
  Run run;
  while (sink.packets().empty() && run.cycles < 10000) {
    driver.cycle(port, in);
    ++run.cycles;
  }
  run.packets = sink.packets();
  return run;
}

std::vector<std::unique_ptr<VaddI32Port>> implementations() {
  std::vector<std::unique_ptr<VaddI32Port>> ports;
  for (const std::uint32_t w : naa::testbench::verilated(vadd_i32_rtl_widths())) {
    ports.push_back(std::make_unique<VaddI32Model>(w));
    ports.push_back(make_vadd_i32_rtl(w));
  }
  return ports;
}

}  // namespace

TEST_CASE("vadd_i32: known answers on model and RTL", "[rtl][vadd_i32]") {
  const Bytes a = le32s({1,   0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x12345678, 0xFFFFFFFE, 0,
                         100, 0x00FF00FF, 5,          6,          7,          8,          9,
                         10,  11,         12,         13,         14,         15,         16});
  const Bytes b =
      le32s({2, 1, 1, 0x80000000, 0x87654321, 0xFFFFFFFE, 0, 0xFFFFFF9C, 0x00010001, 1,         1,
             1, 1, 1, 1,          1,          1,          1, 1,          1,          0xFFFFFFF0});
  const Bytes sum = le32s({3, 0x80000000, 0,  0,  0x99999999, 0xFFFFFFFC, 0,  0,  0x01000100, 6, 7,
                           8, 9,          10, 11, 12,         13,         14, 15, 16,         0});
  for (auto& port : implementations()) {
    REQUIRE(port != nullptr);
    INFO("width " << port->width());
    const Run run = run_packets(*port, a, b);
    REQUIRE(run.packets.size() == 1);
    CHECK(run.packets[0] == sum);
  }
}

TEST_CASE("vadd_i32: one beat per cycle, latency one cycle", "[rtl][vadd_i32]") {
  for (auto& port : implementations()) {
    INFO("width " << port->width());
    const Bytes x(port->width() * 6, 0x01);
    const Run run = run_packets(*port, x, x);
    REQUIRE(run.packets.size() == 1);
    CHECK(run.packets[0] == Bytes(port->width() * 6, 0x02));
    CHECK(run.cycles == 6 + 1);
  }
}

TEST_CASE("vadd_i32: model and RTL agree every cycle on random traffic", "[rtl][vadd_i32]") {
  for (const std::uint32_t w : naa::testbench::verilated(vadd_i32_rtl_widths())) {
    DYNAMIC_SECTION("W=" << w) {
      Rng rng = seeded_rng("vadd_i32 W=" + std::to_string(w));
      RtlOptions options;
      options.x_seed = static_cast<std::uint32_t>(rng());
      VaddI32Lockstep dut(std::make_unique<VaddI32Model>(w), make_vadd_i32_rtl(w, options));
      VaddI32Driver driver(rng, w, kPorts);
      StreamSource& src_a = driver.source(0);
      StreamSource& src_b = driver.source(1);
      StreamSink& sink = driver.sink();
      std::vector<Bytes> expected;
      bool protocol_ok = true;

      VaddI32Inputs in;
      for (int c = 0; c < 3; ++c) {
        in.rst_n = false;
        in.a_valid = chance(rng, 0.5);
        in.b_valid = chance(rng, 0.5);
        in.out_ready = chance(rng, 0.5);
        dut.step(in);
      }
      for (const Phase& phase : kPhases) {
        // b runs at a different rate from a, so the join sees every valid combination.
        src_a.set_rate(phase.p_valid);
        src_b.set_rate(1.0 - phase.p_valid / 2);
        sink.set_rate(phase.p_ready);
        for (int p = 0; p < 400; ++p) {
          const std::size_t n = 4 * uniform<std::size_t>(rng, 1, 2 * w);
          auto beats_a = to_beats(random_bytes(rng, n), w, BeatShape::full, rng);
          auto beats_b = to_beats(random_bytes(rng, n), w, BeatShape::full, rng);
          Bytes kept;
          for (std::size_t i = 0; i < beats_a.size(); ++i) {
            if (chance(rng, 0.1)) beats_a[i].keep &= rng();
            if (chance(rng, 0.1)) beats_b[i].keep &= rng();
            const Bytes e = expected_bytes(beats_a[i], beats_b[i], w);
            kept.insert(kept.end(), e.begin(), e.end());
          }
          src_a.push(beats_a);
          src_b.push(beats_b);
          expected.push_back(kept);
        }
        for (int c = 0; c < 200000 && sink.packets().size() < expected.size(); ++c) {
          protocol_ok = driver.cycle(dut, in) && protocol_ok;
          if (dut.checker().diverged()) break;
        }
        if (dut.checker().diverged()) break;
      }
      INFO((dut.checker().diverged() ? dut.checker().divergence()->to_string() : "no divergence"));
      REQUIRE_FALSE(dut.checker().diverged());
      std::cout << "  W=" << w << ": " << dut.checker().cycles() << " cycles, " << sink.beats()
                << " output beats compared\n";
      CHECK(protocol_ok);
      REQUIRE(sink.packets().size() == expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i)
        CHECK(sink.packets()[i] == expected[i]);
    }
  }
}
