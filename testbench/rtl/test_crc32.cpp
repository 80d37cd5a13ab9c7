// crc32 (rtl/crc32/crc32.sv) against its C++ model (naa/rtl/crc32.hpp): known answers on both, then
// model and Verilated RTL in lockstep on seeded random traffic (ragged and empty beats, idle
// cycles, back-pressure) at every Verilated width, with a scoreboard against naa::protocol's
// CRC-32 (a third, independent implementation, itself checked against external vectors).
#include <catch2/catch.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include "naa/protocol/crc32.hpp"
#include "naa/rtl/crc32.hpp"
#include "naa/rtl/crc32_rtl.hpp"
#include "support/block_driver.hpp"
#include "support/verilated_widths.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;

namespace {

using Crc32Driver = BlockDriver<Crc32Inputs, Crc32Outputs, 1>;
constexpr StreamPorts<Crc32Inputs, Crc32Outputs, 1> kPorts{
    {{{&Crc32Inputs::in_valid, &Crc32Inputs::in, &Crc32Outputs::in_ready}}},
    &Crc32Inputs::out_ready,
    &Crc32Outputs::out_valid,
    &Crc32Outputs::out};

Bytes as_bytes(std::string_view s) {
  return Bytes(s.begin(), s.end());
}

std::uint32_t le32(const Bytes& b) {
  REQUIRE(b.size() == 4);
  return static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 |
         static_cast<std::uint32_t>(b[2]) << 16 | static_cast<std::uint32_t>(b[3]) << 24;
}

struct Run {
  std::vector<Bytes> results;
  std::uint64_t cycles = 0;
};

Run run_packets(Crc32Port& port, const std::vector<Bytes>& packets, BeatShape shape) {
  Rng rng(11);
  Crc32Driver driver(rng, port.width(), kPorts);
  StreamSource& src = driver.source();
  const StreamSink& sink = driver.sink();
  for (const auto& p : packets)
    src.push(to_beats(p, port.width(), shape, rng));
  Crc32Inputs in;
  in.rst_n = false;
  port.step(in);
  Run run;
  while (sink.packets().size() < packets.size() && run.cycles < 10000) {
    driver.cycle(port, in);
    ++run.cycles;
  }
  run.results = sink.packets();
  return run;
}

std::vector<std::unique_ptr<Crc32Port>> implementations() {
  std::vector<std::unique_ptr<Crc32Port>> ports;
  for (const std::uint32_t w : naa::testbench::verilated(crc32_rtl_widths())) {
    ports.push_back(std::make_unique<Crc32Model>(w));
    ports.push_back(make_crc32_rtl(w));
  }
  return ports;
}

}  // namespace

TEST_CASE("crc32: known answers on model and RTL", "[rtl][crc32]") {
  const std::vector<Bytes> packets{
      as_bytes("123456789"),                                    // the CRC-32 check value
      Bytes{},                                                  // empty packet: 0
      as_bytes("The quick brown fox jumps over the lazy dog"),  // 0x414FA339
      Bytes(100, 0x00),                                         // more than one beat at any W
  };
  for (auto& port : implementations()) {
    REQUIRE(port != nullptr);
    for (const BeatShape shape : {BeatShape::full, BeatShape::ragged}) {
      INFO("width " << port->width() << (shape == BeatShape::ragged ? " ragged" : " full"));
      const Run run = run_packets(*port, packets, shape);
      REQUIRE(run.results.size() == 4);
      CHECK(le32(run.results[0]) == 0xCBF43926U);
      CHECK(le32(run.results[1]) == 0x00000000U);
      CHECK(le32(run.results[2]) == 0x414FA339U);
      CHECK(le32(run.results[3]) == naa::protocol::crc32(Bytes(100, 0x00)));
    }
  }
}

TEST_CASE("crc32: one beat per cycle, result one cycle after the last beat", "[rtl][crc32]") {
  for (auto& port : implementations()) {
    INFO("width " << port->width());
    const Run run = run_packets(*port, {Bytes(port->width() * 8, 0x5A)}, BeatShape::full);
    REQUIRE(run.results.size() == 1);
    CHECK(run.cycles == 8 + 1);
  }
}

TEST_CASE("crc32: model and RTL agree every cycle on random traffic", "[rtl][crc32]") {
  for (const std::uint32_t w : naa::testbench::verilated(crc32_rtl_widths())) {
    DYNAMIC_SECTION("W=" << w) {
      Rng rng = seeded_rng("crc32 W=" + std::to_string(w));
      RtlOptions options;
      options.x_seed = static_cast<std::uint32_t>(rng());
      Crc32Lockstep dut(std::make_unique<Crc32Model>(w), make_crc32_rtl(w, options));
      Crc32Driver driver(rng, w, kPorts);
      StreamSource& src = driver.source();
      StreamSink& sink = driver.sink();
      std::vector<std::uint32_t> expected;
      bool protocol_ok = true;

      Crc32Inputs in;
      for (int c = 0; c < 3; ++c) {
        in.rst_n = false;
        in.in_valid = chance(rng, 0.5);
        in.out_ready = chance(rng, 0.5);
        dut.step(in);
      }
      for (const Phase& phase : kPhases) {
        driver.set_phase(phase);
        for (int p = 0; p < 400; ++p) {
          const Bytes bytes = random_bytes(rng, uniform<std::size_t>(rng, 0, 6 * w));
          src.push(to_beats(bytes, w, chance(rng, 0.5) ? BeatShape::ragged : BeatShape::full, rng));
          expected.push_back(naa::protocol::crc32(bytes));
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
        CHECK(le32(sink.packets()[i]) == expected[i]);
    }
  }
}
