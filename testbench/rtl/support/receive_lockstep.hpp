// The cycle loop of the receive-path lockstep testbenches (rx_parser, icrc_check): one seeded
// StreamSource feeds datagrams, out_ready is drawn each cycle, and the lockstep pair compares
// model and RTL every cycle. The draws from the Rng happen in the order the two testbenches used
// when each had its own copy (begin_cycle, out_ready, then `extra`), so a seed gives the same
// traffic. Include after <catch2/catch.hpp>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "stream_traffic.hpp"

namespace naa::testbench::rtl {

// Three reset cycles with random valid and ready (the port must ignore them), then reset off.
template <class Dut, class Inputs>
void reset_randomly(Dut& dut, Inputs& in, Rng& rng) {
  for (int c = 0; c < 3; ++c) {
    in.rst_n = false;
    in.in_valid = chance(rng, 0.5);
    in.out_ready = chance(rng, 0.5);
    dut.step(in);
  }
  in.rst_n = true;
}

// Clocks `dut` at the phase's ready rate until `results` holds `want` results (taken when
// out_valid && out_ready), 400000 cycles pass, or the pair diverges. extra(in) sets the block's
// other inputs before each step; after(in, outputs) sees every cycle's outputs.
template <class Dut, class Inputs, class Result, class Extra, class After>
void run_phase(Dut& dut, Inputs& in, StreamSource& src, Rng& rng, const Phase& phase,
               std::size_t want, std::vector<Result>& results, Extra&& extra, After&& after) {
  for (int c = 0; c < 400000 && results.size() < want; ++c) {
    src.begin_cycle();
    in.out_ready = chance(rng, phase.p_ready);
    in.in_valid = src.valid();
    in.in = src.beat();
    extra(in);
    const auto o = dut.step(in);
    after(in, o);
    src.end_cycle(o.in_ready);
    if (o.out_valid && in.out_ready) results.push_back(o.out);
    if (dut.checker().diverged()) return;
  }
}

// The end of a lockstep run: no divergence, every expected result arrived and agrees
// (disagreement(expected, actual) empty), with the cycle count printed.
template <class Dut, class Result, class Disagreement>
void check_lockstep_results(const Dut& dut, std::uint32_t w, const std::vector<Result>& expected,
                            const std::vector<Result>& results, Disagreement&& disagreement) {
  INFO((dut.checker().diverged() ? dut.checker().divergence()->to_string() : "no divergence"));
  REQUIRE_FALSE(dut.checker().diverged());
  std::cout << "  W=" << w << ": " << dut.checker().cycles() << " cycles, " << results.size()
            << " datagrams compared\n";
  REQUIRE(results.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("datagram " << i);
    CHECK(disagreement(expected[i], results[i]).empty());
  }
}

}  // namespace naa::testbench::rtl
