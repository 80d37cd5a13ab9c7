// The harness of the SVA checker tests (test_sva.cpp, test_sva_kernels.cpp): one checker
// Verilated alone (rtl/<block>/<block>_sva.sv), clocked a cycle at a time with the inputs a trace
// sets, and checks that a trace makes a given assertion fail (Verilator's message names it) or
// that a legal trace passes. Include after <catch2/catch.hpp>.
#pragma once

#include <functional>
#include <string>

#include "support/captured_stdout.hpp"
#include "verilated.h"

namespace naa::testbench::rtl {

// One checker, clocked a cycle at a time with the inputs the trace set. Verilator's failed
// assertions are counted and printed, never fatal: under the error limit each failure prints its
// message and the simulation goes on, so every assertion failing at an edge says so (at the
// limit, Verilator's $stop would report only the first).
template <class Top>
class Bench {
 public:
  Bench() : top_(&ctx_) {
    ctx_.fatalOnError(false);
    ctx_.errorLimit(1 << 20);
  }
  Top* operator->() { return &top_; }
  // One cycle: the inputs as set, then the rising edge.
  void cycle() {
    clock(false);
    top_.eval();
    ctx_.timeInc(1);
    clock(true);
    top_.eval();
    ctx_.timeInc(1);
  }
  void reset() {
    rst(false);
    cycle();
    rst(true);
  }
  [[nodiscard]] bool failed() const { return ctx_.errorCount() > 0; }

 private:
  void clock(bool v) {
    if constexpr (requires { top_.ap_clk; })
      top_.ap_clk = v;
    else
      top_.clk_i = v;
  }
  void rst(bool v) {
    if constexpr (requires { top_.ap_rst_n; })
      top_.ap_rst_n = v;
    else
      top_.rst_ni = v;
  }
  VerilatedContext ctx_;
  Top top_;
};

// One idle cycle with the block's outputs at their values after reset. Verilator 5.006 checks a
// `|=>` only when both of its edges are enabled, and the checkers disable the first edge after
// reset: a trace starts after this cycle.
template <class Top>
void settle(Bench<Top>& b) {
  if constexpr (requires { b->ap_idle; }) {
    b->ap_idle = 1;
    b->dst_TREADY = 1;
  } else if constexpr (requires { b->free_any_o; }) {
    b->free_any_o = 1;
    b->free_count_o = 32;
  } else {
    b->in_ready_o = 1;
    b->out_ready_i = 1;
  }
  b.cycle();
}

// Runs `trace` on a fresh checker after a reset; returns what Verilator printed.
template <class Top>
std::string run(const std::function<void(Bench<Top>&)>& trace, bool* failed = nullptr) {
  Bench<Top> b;
  const std::string out = captured_stdout([&] {
    b.reset();
    settle(b);
    trace(b);
  });
  if (failed) *failed = b.failed();
  return out;
}

// `trace` fails the assertion `label` ("<checker> <assertion>", how its message starts), and
// Verilator says so.
template <class Top>
void check_fires(const std::string& label, const std::function<void(Bench<Top>&)>& trace) {
  bool failed = false;
  const std::string out = run<Top>(trace, &failed);
  INFO("assertion " << label << ", Verilator printed:\n" << out);
  CHECK(failed);
  CHECK(out.find(label + ":") != std::string::npos);
}

template <class Top>
void check_quiet(const std::function<void(Bench<Top>&)>& trace) {
  bool failed = true;
  const std::string out = run<Top>(trace, &failed);
  INFO("Verilator printed:\n" << out);
  CHECK_FALSE(failed);
  CHECK(out.empty());
}

}  // namespace naa::testbench::rtl
