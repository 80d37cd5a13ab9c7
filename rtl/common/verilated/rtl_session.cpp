#include "naa/rtl/rtl_session.hpp"

#include <algorithm>
#include <stdexcept>

#include <verilated.h>
#include <verilated_fst_c.h>

namespace naa::rtl {

RtlSession::RtlSession(const RtlSessionOptions& options)
    : context_(std::make_unique<VerilatedContext>()),
      trace_path_(options.trace_fst),
      period_ps_(options.clock_period_ps),
      trace_start_ps_(options.trace_start_ps) {
  if (period_ps_ < 2) throw std::invalid_argument("RtlSession: clock period below 2 ps");
  // Flops without reset start random (--x-initial unique) unless x_seed is 0; Verilator draws
  // them when a model is constructed, so this precedes every model of the session.
  context_->randReset(options.x_seed != 0 ? 2 : 0);
  context_->fatalOnError(options.fatal_assertions);
  if (options.x_seed != 0) context_->randSeed(static_cast<int>(options.x_seed & 0x7FFFFFFFU));
  if (!trace_path_.empty()) {
    context_->traceEverOn(true);
    trace_ = std::make_unique<VerilatedFstC>();
  }
}

RtlSession::~RtlSession() {
  close_trace();
}

void RtlSession::advance_to(std::uint64_t t_ps) noexcept {
  floor_ps_ = std::max(floor_ps_, t_ps);
}

bool RtlSession::assertion_failed() const noexcept {
  return context_->gotError();
}

bool RtlSession::tracing() const noexcept {
  return trace_ && !closed_;
}

void RtlSession::close_trace() {
  if (!trace_ || closed_) return;
  closed_ = true;
  if (opened_) trace_->close();
}

VerilatedFstC* RtlSession::attach() {
  if (!trace_ || closed_) return nullptr;
  if (opened_) {
    throw std::logic_error(
        "RtlSession: a block joined after the waveform started (create every "
        "block of a traced session before clocking any)");
  }
  return trace_.get();
}

std::uint64_t RtlSession::begin_cycle() noexcept {
  const std::uint64_t start = std::max(floor_ps_, next_ps_);
  next_ps_ = start + period_ps_;
  last_ps_ = start;
  ++cycles_;
  context_->time(start);
  return start;
}

void RtlSession::dump(std::uint64_t t_ps) {
  // Whole cycles only: a cycle that starts before trace_start is left out, edge included.
  if (!trace_ || closed_ || !recording_ || last_ps_ < trace_start_ps_) return;
  if (!opened_) {
    // Times are picoseconds. Said explicitly: Verilator 5.006's FST writer takes its resolution
    // from a context other than this session's and wrote "$timescale 1s" (seen with fst2vcd).
    trace_->set_time_unit("1ps");
    trace_->set_time_resolution("1ps");
    trace_->open(trace_path_.c_str());
    opened_ = true;
  }
  trace_->dump(t_ps);
  last_dump_ps_ = t_ps;
}

}  // namespace naa::rtl
