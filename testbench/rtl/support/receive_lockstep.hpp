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
#include <utility>
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

// Resets in the middle of the traffic (issue 25 item 4): streams `packets` (one datagram's beats
// each) through `dut` at random valid and ready rates, and resets it (1 to 3 cycles, random valid
// and ready) after a random number of a datagram's beats (0 < k < its beats) for about one
// datagram in four, and while a finished datagram's result waits for about one in twenty. A
// datagram cut so has no result; the results of all others are returned with their index, in
// order. extra(in, i) sets the block's other inputs while datagram i is offered.
struct ResetRunStats {
  std::size_t mid_packet = 0;    // resets after some, not all, of a datagram's beats
  std::size_t result_waits = 0;  // resets while a result waited for out_ready
};

template <class Dut, class Inputs, class Result, class Extra>
ResetRunStats run_with_resets(Dut& dut, Inputs& in, Rng& rng,
                              const std::vector<std::vector<naa::rtl::StreamBeat>>& packets,
                              std::vector<std::pair<std::size_t, Result>>& results, Extra&& extra) {
  ResetRunStats stats;
  std::vector<std::size_t> in_flight;  // datagrams whose last beat went in, results not taken
  const auto step = [&](std::size_t i) {
    extra(in, i);
    const auto o = dut.step(in);
    if (in.rst_n && o.out_valid && in.out_ready && !in_flight.empty()) {
      results.emplace_back(in_flight.front(), o.out);
      in_flight.erase(in_flight.begin());
    }
    return o;
  };
  const auto reset = [&](std::size_t i) {
    const int cycles = uniform(rng, 1, 3);
    for (int c = 0; c < cycles; ++c) {
      in.rst_n = false;
      in.in_valid = chance(rng, 0.5);
      in.out_ready = chance(rng, 0.5);
      step(i);
    }
    in.rst_n = true;
    in.in_valid = false;
    in_flight.clear();  // every result not yet taken is lost
  };
  for (std::size_t i = 0; i < packets.size() && !dut.checker().diverged(); ++i) {
    const std::vector<naa::rtl::StreamBeat>& beats = packets[i];
    const std::size_t cut =
        beats.size() > 1 && chance(rng, 0.25) ? uniform<std::size_t>(rng, 1, beats.size() - 1) : 0;
    std::size_t taken = 0;
    in.in_valid = false;
    while (taken < beats.size() && !dut.checker().diverged()) {
      if (!in.in_valid) in.in_valid = chance(rng, 0.8);  // held until taken
      in.in = beats[taken];
      in.out_ready = chance(rng, 0.7);
      const auto o = step(i);
      if (in.in_valid && o.in_ready) {
        in.in_valid = false;
        if (++taken == cut) {
          reset(i);
          ++stats.mid_packet;
          break;
        }
      }
    }
    if (taken < beats.size()) continue;
    in_flight.push_back(i);
    if (chance(rng, 0.05)) {
      // Hold the output until this datagram's result waits on it, then reset.
      in.in_valid = false;
      for (int c = 0; c < 8 && !dut.checker().diverged(); ++c) {
        in.out_ready = false;
        if (step(i).out_valid) {
          reset(i);
          ++stats.result_waits;
          break;
        }
      }
    }
  }
  in.in_valid = false;
  in.out_ready = true;
  for (int c = 0; c < 8 && !in_flight.empty() && !dut.checker().diverged(); ++c)
    step(packets.size());
  return stats;
}

// The end of a run_with_resets(): no divergence, enough resets of both kinds, about half the
// datagrams or more with results, in order and none twice, each agreeing with its expected one.
template <class Dut, class Expected, class Result, class Disagreement>
void check_reset_run(const Dut& dut, std::uint32_t w, const ResetRunStats& stats,
                     const std::vector<Expected>& expected,
                     const std::vector<std::pair<std::size_t, Result>>& results,
                     Disagreement&& disagreement) {
  INFO((dut.checker().diverged() ? dut.checker().divergence()->to_string() : "no divergence"));
  REQUIRE_FALSE(dut.checker().diverged());
  std::cout << "  W=" << w << ": " << stats.mid_packet << " resets mid-datagram, "
            << stats.result_waits << " with a result waiting, " << results.size() << " results\n";
  CHECK(stats.mid_packet >= 50);
  CHECK(stats.result_waits >= 5);
  CHECK(results.size() >= expected.size() / 2);
  std::size_t last = 0;
  for (const auto& [i, r] : results) {
    INFO("datagram " << i);
    CHECK((i >= last));  // in order, none twice
    last = i + 1;
    CHECK(disagreement(expected[i], r).empty());
  }
}

}  // namespace naa::testbench::rtl
