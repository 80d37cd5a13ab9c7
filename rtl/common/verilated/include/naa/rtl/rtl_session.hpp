// RtlSession: one VerilatedContext shared by several Verilated blocks, and their one FST waveform
// (docs/rtl/plug-in-your-rtl.md). A block joins a session through RtlOptions::session; without
// one, each block gets a private session (its own context and, if asked, its own file).
//
// Waveform time. Each cycle a block is clocked starts at the session's next free time slot, which
// is never earlier than the time the caller last gave advance_to(): a caller with its own clock
// (naa-sim: simulated time) keeps the waveform on that time axis, idle gaps included, while
// cycles clocked back to back (a kernel streaming a region) follow each other one period apart.
// Cycles never overlap in the file, so when two blocks are busy during the same simulated interval
// the later one is shifted after the earlier one; last_cycle_ps() tells where a cycle landed.
//
// Ordering rules of Verilator 5.006 that this class enforces: every traced model must join before
// the first cycle is dumped (Verilator aborts otherwise: attach() throws instead), and dump times
// must increase.
//
// Concurrency: one thread at a time, like the blocks themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class VerilatedContext;
class VerilatedFstC;

namespace naa::rtl {

struct RtlSessionOptions {
  // FST waveform of every block of the session (GTKWave-readable); empty = no tracing.
  std::string trace_fst;
  // Seed for the initial values of flops without reset (--x-initial unique); 0 = all zero.
  std::uint32_t x_seed = 1;
  // Clock period in the waveform (picoseconds); 4000 = the 250 MHz NAA core clock. At least 2.
  std::uint64_t clock_period_ps = 4000;
  // A failed SystemVerilog assertion (blocks are Verilated with --assert: the stream port rules of
  // rtl/prim/naa_stream_assert.sv) ends the program with Verilator's message (true), or is only
  // recorded, for assertion_failed() (false: for testbenches that provoke one on purpose).
  bool fatal_assertions = true;
  // Cycles that start before this time (ps) are not recorded (naa-sim --trace-start): the file
  // begins with the first cycle at or after it.
  std::uint64_t trace_start_ps = 0;
};

class RtlSession {
 public:
  // Throws std::invalid_argument for a clock period below 2 ps.
  explicit RtlSession(const RtlSessionOptions& options);
  ~RtlSession();
  RtlSession(const RtlSession&) = delete;
  RtlSession& operator=(const RtlSession&) = delete;

  // The next cycle starts no earlier than t_ps (picoseconds).
  void advance_to(std::uint64_t t_ps) noexcept;
  [[nodiscard]] std::uint64_t period_ps() const noexcept { return period_ps_; }
  // Start time (ps) of the last cycle begun by any block of the session.
  [[nodiscard]] std::uint64_t last_cycle_ps() const noexcept { return last_ps_; }
  // Cycles clocked by all blocks of the session together.
  [[nodiscard]] std::uint64_t cycles() const noexcept { return cycles_; }
  // The waveform's path, empty if not tracing.
  [[nodiscard]] const std::string& trace_path() const noexcept { return trace_path_; }
  // True while cycles are still being written to the waveform.
  [[nodiscard]] bool tracing() const noexcept;
  // Ends the waveform now: the file is complete and readable, later cycles are not recorded.
  // Idempotent. Called when a lockstep divergence stops a run, and when a traced block goes away.
  void close_trace();
  // Recording on (the default) or paused: while paused, cycles are clocked but not written
  // (the shadow blocks of naa-sim's --trace-window, sim/rtl/src/trace_window.hpp).
  void set_recording(bool on) noexcept { recording_ = on; }
  // The time (ps) of the last sample written to the waveform; 0 if none.
  [[nodiscard]] std::uint64_t last_dump_ps() const noexcept { return last_dump_ps_; }
  // True once an assertion of a block of the session has failed (fatal_assertions = false;
  // otherwise the failure has ended the program). Verilator printed the assertion's message.
  [[nodiscard]] bool assertion_failed() const noexcept;

  // ---- for the adapter kit (naa/rtl/verilated/harness.hpp) ----
  [[nodiscard]] VerilatedContext& context() noexcept { return *context_; }
  // The waveform a new model must add itself to (model.trace(fst, levels)), or nullptr if the
  // session does not trace. Throws std::logic_error once cycles have been dumped (Verilator
  // cannot add a model to a waveform after that).
  [[nodiscard]] VerilatedFstC* attach();
  // A block starts a cycle: returns its start time (ps) and sets the context's time to it.
  std::uint64_t begin_cycle() noexcept;
  // Records the signals of every block at time t_ps (opens the file on first use).
  void dump(std::uint64_t t_ps);

  // ---- coverage (NAA_RTL_COVERAGE, docs/rtl/coverage.md) ----
  // True when rtl_session.cpp was built with NAA_RTL_COVERAGE: the session then writes its
  // context's coverage counts to a new file (under $NAA_RTL_COVERAGE_DIR, default
  // <build>/coverage) when it goes away, or at exit if it is still alive.
  [[nodiscard]] static bool collects_coverage() noexcept;
  // A model's coverage counters live in the model, and Verilator's coverage table points at them:
  // under coverage a harness hands its model here instead of deleting it, and the session deletes
  // it after writing the counts.
  void retire(std::shared_ptr<void> model);
  // Writes the counts so far to a new file and zeroes them (so a later write adds only what
  // came after); nothing if no cycle ran since the last write, or without coverage.
  void write_coverage();

 private:
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<VerilatedFstC> trace_;
  std::string trace_path_;
  std::uint64_t period_ps_;
  std::uint64_t floor_ps_ = 0;
  std::uint64_t next_ps_ = 0;
  std::uint64_t last_ps_ = 0;
  std::uint64_t cycles_ = 0;
  std::uint64_t trace_start_ps_ = 0;
  std::uint64_t last_dump_ps_ = 0;
  bool recording_ = true;
  bool opened_ = false;
  bool closed_ = false;
  std::uint64_t covered_cycles_ = 0;            // cycles_ at the last write_coverage()
  std::vector<std::shared_ptr<void>> retired_;  // see retire()
};

}  // namespace naa::rtl
