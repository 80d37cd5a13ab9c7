#include "naa/rtl/rtl_session.hpp"

#include <algorithm>
#include <stdexcept>

#include <verilated.h>
#include <verilated_fst_c.h>

#if NAA_RTL_COVERAGE
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <verilated_cov.h>
#endif

namespace naa::rtl {

#if NAA_RTL_COVERAGE
namespace {

// The live sessions, so that a program that ends with exit() while sessions are alive (naa-sim
// stopping on a divergence, a test's early exit) still writes their counts. Never freed: a
// session may be destroyed during static destruction, after this would be.
struct LiveSessions {
  std::mutex mutex;
  std::set<RtlSession*> sessions;
};
LiveSessions& live_sessions() {
  static auto* live = new LiveSessions;
  return *live;
}

void write_live_sessions_at_exit() {
  std::set<RtlSession*> sessions;
  {
    const std::lock_guard lock(live_sessions().mutex);
    sessions = live_sessions().sessions;
  }
  for (RtlSession* s : sessions)
    s->write_coverage();
}

// A new file <dir>/<program>-<pid>-<n>.dat, created exclusively: several sessions, and the
// private runtime of each kernel plug-in in the same process, never overwrite each other.
std::string new_coverage_file() {
  const char* env = std::getenv("NAA_RTL_COVERAGE_DIR");
  const std::filesystem::path dir = env && *env ? env : NAA_RTL_COVERAGE_DEFAULT_DIR;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string stem =
      std::string(program_invocation_short_name) + "-" + std::to_string(::getpid()) + "-";
  for (unsigned n = 0;; ++n) {
    const std::string path = (dir / (stem + std::to_string(n) + ".dat")).string();
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return path;
    }
    if (errno != EEXIST) return {};  // unwritable folder: Verilator would abort; skip instead
  }
}

}  // namespace

bool RtlSession::collects_coverage() noexcept {
  return true;
}

void RtlSession::write_coverage() {
  if (cycles_ == covered_cycles_) return;
  covered_cycles_ = cycles_;
  const std::string path = new_coverage_file();
  if (path.empty()) return;
  context_->coveragep()->write(path.c_str());
  context_->coveragep()->zero();
}
#else
bool RtlSession::collects_coverage() noexcept {
  return false;
}

void RtlSession::write_coverage() {}
#endif

void RtlSession::retire(std::shared_ptr<void> model) {
  retired_.push_back(std::move(model));
}

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
#if NAA_RTL_COVERAGE
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(write_live_sessions_at_exit); });
  const std::lock_guard lock(live_sessions().mutex);
  live_sessions().sessions.insert(this);
#endif
}

RtlSession::~RtlSession() {
  close_trace();
#if NAA_RTL_COVERAGE
  {
    const std::lock_guard lock(live_sessions().mutex);
    live_sessions().sessions.erase(this);
  }
  write_coverage();
  // The models go only after their counters were written. Verilator 5.006 erases a model's
  // scopes from the thread's current context (~VerilatedScope), which may be another session's,
  // already gone: make it this one for the deletion, and leave none behind.
  Verilated::threadContextp(context_.get());
  retired_.clear();
  Verilated::threadContextp(nullptr);
#endif
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
