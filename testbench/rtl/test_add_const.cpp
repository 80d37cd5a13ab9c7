// add_const (rtl/add_const/add_const.sv) against its C++ model (naa/rtl/add_const.hpp): known
// answers on both, then model and Verilated RTL in lockstep on seeded random traffic with idle
// cycles and back-pressure, at every Verilated width, with a scoreboard against a direct
// computation.
#include <catch2/catch.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "support/block_driver.hpp"
#include "support/verilated_widths.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;

namespace {

using AddConstDriver = BlockDriver<AddConstInputs, AddConstOutputs, 1>;
constexpr StreamPorts<AddConstInputs, AddConstOutputs, 1> kPorts{
    {{{&AddConstInputs::in_valid, &AddConstInputs::in, &AddConstOutputs::in_ready}}},
    &AddConstInputs::out_ready,
    &AddConstOutputs::out_valid,
    &AddConstOutputs::out};

struct Run {
  std::vector<Bytes> packets;
  std::uint64_t cycles = 0;
};

// Drives whole packets (all with one addend) at full rate with the output always ready.
Run run_packets(AddConstPort& port, const std::vector<Bytes>& packets, std::uint8_t addend) {
  Rng rng(7);
  AddConstDriver driver(rng, port.width(), kPorts);
  StreamSource& src = driver.source();
  const StreamSink& sink = driver.sink();
  for (const auto& p : packets)
    src.push(to_beats(p, port.width(), BeatShape::full, rng));
  AddConstInputs in;
  in.rst_n = false;
  port.step(in);
  Run run;
  while (sink.packets().size() < packets.size() && run.cycles < 10000) {
    driver.cycle(port, in, [&](AddConstInputs& i) { i.addend = addend; });
    ++run.cycles;
  }
  run.packets = sink.packets();
  return run;
}

std::vector<std::unique_ptr<AddConstPort>> implementations() {
  std::vector<std::unique_ptr<AddConstPort>> ports;
  for (const std::uint32_t w : naa::testbench::verilated(add_const_rtl_widths())) {
    ports.push_back(std::make_unique<AddConstModel>(w));
    ports.push_back(make_add_const_rtl(w));
  }
  return ports;
}

}  // namespace

TEST_CASE("add_const: known answers for add1 and add2 on model and RTL", "[rtl][add_const]") {
  Bytes ramp(150);
  for (std::size_t i = 0; i < ramp.size(); ++i)
    ramp[i] = static_cast<std::uint8_t>(0xB0 + i);
  const std::vector<Bytes> packets{ramp, Bytes{0xFF}, Bytes{0xFE, 0xFF, 0x00, 0x7F}};
  for (auto& port : implementations()) {
    REQUIRE(port != nullptr);
    INFO("width " << port->width());
    for (const std::uint8_t k : {std::uint8_t{1}, std::uint8_t{2}}) {
      const Run run = run_packets(*port, packets, k);
      REQUIRE(run.packets.size() == 3);
      // 0xB0 + 0x4F = 0xFF wraps to 0x00 (+1) and 0x01 (+2).
      CHECK(run.packets[0][0] == 0xB0 + k);
      CHECK(run.packets[0][0x4F] == (k == 1 ? 0x00 : 0x01));
      CHECK(run.packets[1] == Bytes{static_cast<std::uint8_t>(0xFF + k)});
      CHECK(run.packets[2] ==
            (k == 1 ? Bytes{0xFF, 0x00, 0x01, 0x80} : Bytes{0x00, 0x01, 0x02, 0x81}));
      for (std::size_t i = 0; i < ramp.size(); ++i) {
        CHECK(run.packets[0][i] == static_cast<std::uint8_t>(ramp[i] + k));
      }
    }
  }
}

TEST_CASE("add_const: one beat per cycle, latency one cycle", "[rtl][add_const]") {
  for (auto& port : implementations()) {
    INFO("width " << port->width());
    const Bytes big(port->width() * 10, 0x11);
    const Run run = run_packets(*port, {big}, 1);
    REQUIRE(run.packets.size() == 1);
    CHECK(run.cycles == 10 + 1);  // 10 beats in, the last one out a cycle later
  }
}

TEST_CASE("add_const: model and RTL agree every cycle on random traffic", "[rtl][add_const]") {
  for (const std::uint32_t w : naa::testbench::verilated(add_const_rtl_widths())) {
    DYNAMIC_SECTION("W=" << w) {
      Rng rng = seeded_rng("add_const W=" + std::to_string(w));
      RtlOptions options;
      options.x_seed = static_cast<std::uint32_t>(rng());
      AddConstLockstep dut(std::make_unique<AddConstModel>(w), make_add_const_rtl(w, options));
      AddConstDriver driver(rng, w, kPorts);
      StreamSource& src = driver.source();
      const StreamSink& sink = driver.sink();
      std::vector<Bytes> expected;
      bool protocol_ok = true;

      AddConstInputs in;
      for (int c = 0; c < 3; ++c) {  // reset with random inputs
        in.rst_n = false;
        in.in_valid = chance(rng, 0.5);
        in.out_ready = chance(rng, 0.5);
        dut.step(in);
      }
      for (const Phase& phase : kPhases) {
        driver.set_phase(phase);
        for (int p = 0; p < 400; ++p) {
          const Bytes bytes = random_bytes(rng, uniform<std::size_t>(rng, 1, 5 * w));
          const auto k = uniform<std::uint8_t>(rng, 0, 255);
          // add_const passes any keep through, so sparse keeps are legal: punch holes.
          auto beats = to_beats(bytes, w, BeatShape::full, rng);
          Bytes kept;
          for (auto& b : beats) {
            if (chance(rng, 0.2)) b.keep &= rng();
            for (std::uint32_t i = 0; i < w; ++i) {
              if ((b.keep >> i) & 1U) kept.push_back(static_cast<std::uint8_t>(b.data[i] + k));
            }
          }
          src.push(beats, k);
          expected.push_back(kept);
        }
        for (int c = 0; c < 200000 && sink.packets().size() < expected.size(); ++c) {
          protocol_ok = driver.cycle(dut, in, [&](AddConstInputs& i) {
            i.addend = static_cast<std::uint8_t>(src.user());
            if (!src.valid()) i.addend = uniform<std::uint8_t>(rng, 0, 255);
          }) && protocol_ok;
          if (dut.checker().diverged()) break;
        }
        if (dut.checker().diverged()) break;
      }
      INFO((dut.checker().diverged() ? dut.checker().divergence()->to_string() : "no divergence"));
      REQUIRE_FALSE(dut.checker().diverged());
      std::cout << "  W=" << w << ": " << dut.checker().cycles() << " cycles, " << sink.beats()
                << " output beats compared\n";
      CHECK(protocol_ok);
      CHECK(dut.checker().cycles() > 1000);
      REQUIRE(sink.packets().size() == expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i)
        CHECK(sink.packets()[i] == expected[i]);
    }
  }
}
