// Whole picoseconds and nanoseconds as sc_time without SystemC's double constructor (issue 31:
// ~36 instructions per construction, several per datagram).
//
// sc_time(v, unit) sets value = uint64(v * (unit / resolution) + 0.5). At the model's 1 ps
// resolution the factor is exactly 1 (ps) or 1000 (ns), and for a whole v whose product is
// below 2^52 the sum is exact, so the value is v or v * 1000: what from_value sets directly.
// At 2^52 and above, + 0.5 is a tie that the double may round up, so those (more than an hour of
// simulated time) and any other resolution take the double constructor as before.
#pragma once

#include <cstdint>

#include <systemc>

namespace naa::sim {

// sc_get_curr_simcontext() for a context not made yet: out of line, so that sim_now() is two loads
// (GCC often kept the inline accessor, with its creating path, out of line: a call per read).
[[gnu::noinline]] inline sc_core::sc_simcontext* sim_context_made() {
  return sc_core::sc_get_curr_simcontext();
}

// The current simulated time, as sc_core::sc_time_stamp() returns it (that is a library call
// around these same two inline accessors; issue 31: ~25 per nop call in naa-sim).
[[nodiscard]] inline const sc_core::sc_time& sim_now() {
  sc_core::sc_simcontext* const context = sc_core::sc_curr_simcontext;
  return (context != nullptr ? context : sim_context_made())->time_stamp();
}

// Whether the time resolution is 1 ps (SystemC's default; the resolution is fixed once the first
// non-zero time exists, as it does here).
[[nodiscard]] inline bool resolution_is_1ps() {
  static const bool one = sc_core::sc_time(1.0, sc_core::SC_PS).value() == 1;
  return one;
}

[[nodiscard]] inline sc_core::sc_time ps_time(std::uint64_t ps) {
  if (ps < (std::uint64_t{1} << 52) && resolution_is_1ps()) return sc_core::sc_time::from_value(ps);
  return sc_core::sc_time(static_cast<double>(ps), sc_core::SC_PS);
}

[[nodiscard]] inline sc_core::sc_time ns_time(std::uint64_t ns) {
  if (ns < (std::uint64_t{1} << 52) / 1000 && resolution_is_1ps()) {
    return sc_core::sc_time::from_value(ns * 1000);
  }
  return sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS);
}

}  // namespace naa::sim
