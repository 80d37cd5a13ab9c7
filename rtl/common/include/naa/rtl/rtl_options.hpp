// Options for a Verilated RTL block (naa::rtl_<block> libraries). Plain data, so that callers
// (the simulated NAA, testbenches) can pass them without seeing Verilator.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace naa::rtl {

class RtlSession;  // naa/rtl/rtl_session.hpp, library naa::rtl_session

struct RtlOptions {
  // Instance name in the waveform and in messages; empty = the block name.
  std::string name;
  // Path of an FST waveform to write (GTKWave-readable); empty = no tracing. Tracing is compiled
  // into every Verilated block and switched on here, at run time.
  std::string trace_fst;
  // Seed for Verilator's initial values of flops without reset (--x-initial unique): every flop
  // that is not reset starts random, so a block that reads an unreset flop diverges from its
  // model. 0 = all such flops start at 0.
  std::uint32_t x_seed = 1;
  // Clock period in the waveform (picoseconds); 4000 = the 250 MHz NAA core clock.
  std::uint64_t clock_period_ps = 4000;
  // Several blocks in one VerilatedContext and one waveform (naa-sim does this): the block joins
  // the session, whose trace file, seed and clock period then apply (trace_fst, x_seed and
  // clock_period_ps above are ignored). Null = the block gets a session of its own, built from the
  // fields above.
  std::shared_ptr<RtlSession> session;
};

}  // namespace naa::rtl
