#include "naa/sim/runner.hpp"

#include <poll.h>
#include <sched.h>
#include <algorithm>
#include <boost/asio.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "naa/protocol/ipv4_udp.hpp"
#include "naa/sim/heap_stats.hpp"
#include "naa/sim/naa.hpp"
#include "naa/sim/poll_window.hpp"
#include "naa/sim/wall_timers.hpp"

namespace naa::sim {
namespace {

using Clock = std::chrono::steady_clock;
// While the model has work, the runner checks the socket at least every this much simulated time.
const sc_core::sc_time kMaxChunk(100, sc_core::SC_US);
// While the model is busy, Asio's handlers (signals) run at least this often; idle waits run
// them at once. A poll per loop turn was an epoll_wait per simulation step (issue 19).
constexpr auto kIoPollInterval = std::chrono::milliseconds(1);

// sc_core::sc_pending_activity() with the context passed: its default argument was an
// out-of-line sc_get_curr_simcontext() call per use (issue 31: 12 instructions per nop call).
bool model_pending() {
  sc_core::sc_simcontext* const context = sc_core::sc_curr_simcontext;
  return sc_core::sc_pending_activity(context != nullptr ? context : sim_context_made());
}

}  // namespace

struct Runner::Impl {
  Impl(const SimConfig& c, RunOptions o, LogLevel level)
      : cfg(c), opts(std::move(o)), log(level), signals(io, SIGINT, SIGTERM, SIGUSR1) {}

  using Timer = WallTimerList::Timer;

  SimConfig cfg;
  RunOptions opts;
  Log log;
  boost::asio::io_context io;
  boost::asio::signal_set signals;
  std::unique_ptr<Naa> naa;
  WallTimerList timers;
  // The wall length of the last `after` armed, and that `after` (issue 31: nearly every arm is
  // the IRN retransmit timer with the QP's RTO, and to_seconds() is a library call).
  sc_core::sc_time last_after = sc_core::SC_ZERO_TIME;
  std::chrono::nanoseconds last_after_wall{0};
  bool stop = false;
  bool dump = false;
  bool wait_armed = false;
  std::uint64_t stats_seq = 0;
  std::uint64_t sc_starts = 0;
  // Issue 19: blocking waits (wake-ups), loop turns and non-blocking Asio polls. An idle naa-sim
  // makes no turns at all (test sim_idle_wakeups).
  std::uint64_t waits = 0, turns = 0, io_polls = 0;
  // --poll-us: short polls before a blocking wait, those that found a datagram, and the
  // non-blocking readiness checks (poll(2) with timeout 0) they made.
  std::uint64_t polls = 0, poll_hits = 0, poll_checks = 0;
  // When a wait polls first: --poll-us after the last datagram the model sent or read.
  PollWindow poll_window{std::chrono::microseconds(opts.poll_us)};
  // Simulated time that passed while the model only waited for peers (wall-clock waits): not
  // work, so "sim.work_cycles" leaves it out.
  sc_core::sc_time idle_advanced = sc_core::SC_ZERO_TIME;
  Clock::time_point wall_start;
  // The wall time the runner's current turn started: read once per turn, or, after a simulation
  // step, at the step's end (run_sim; `wall_after_step` says so), which the next turn takes as
  // its start (issue 31: between the two reads the runner only asked whether the model is idle).
  Clock::time_point turn_wall;
  bool wall_after_step = false;
  std::vector<Timer> due;
  // Link model stream hold (docs/sim/timing.md "Link model"): the wall deadline of the current
  // wait at the stream horizon, and the datagram count it was set at.
  std::optional<Clock::time_point> hold_deadline;
  std::uint64_t hold_datagrams = 0;

  // At the stream horizon with nothing to read: wait in wall time (woken by a datagram or a
  // signal) up to --link-hold-us for the stream's next datagram; if none comes the stream has
  // ended and simulated time may pass the horizon.
  void wait_at_horizon() {
    const std::uint64_t seen = naa->net().rx_link().frames();
    if (!hold_deadline || hold_datagrams != seen) {
      hold_deadline = Clock::now() + std::chrono::microseconds(naa->net().stream_hold_us());
      hold_datagrams = seen;
    }
    const auto now_wall = Clock::now();
    if (now_wall >= *hold_deadline) {
      // The loop reads only when a wait or a busy model says there may be input: look once
      // more before declaring the stream over.
      if (naa->net().poll_receive(512) > 0) return;
      naa->net().end_stream_hold();
      hold_deadline.reset();
      return;
    }
    arm_readable();
    ++waits;
    io.run_one_for(std::chrono::duration_cast<std::chrono::nanoseconds>(*hold_deadline - now_wall));
  }

  void arm_signals() {
    signals.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (sig == SIGUSR1) {
        dump = true;
      } else {
        stop = true;
      }
      arm_signals();
    });
  }

  void arm_readable() {
    if (wait_armed) return;
    wait_armed = true;
    naa->net().async_wait_readable([this] { wait_armed = false; });
  }

  // Fires every timer whose simulated and wall-clock deadlines have both passed, at the wall
  // time the turn started (turn_wall; issue 31: one clock read per turn for the turn's
  // decisions before its simulation step; a deadline passed since then is seen next turn).
  void fire_due() {
    if (timers.empty()) return;
    const auto now_wall = turn_wall;
    const auto now_sim = sim_now();
    timers.take_due(now_wall, now_sim, due);
    for (const Timer& t : due)
      t.client->on_peer_timer(t.cookie);
  }

  // Whether a timer's wall deadline had passed at the end of the last step (run_sim's clock
  // read): it may fire as soon as simulated time gets to its simulated deadline.
  [[nodiscard]] bool wall_passed_after_step() const { return timers.any_wall_passed(turn_wall); }
  // The earliest simulated deadline among timers whose wall deadline has passed at `now_wall`
  // (they may fire as soon as simulated time gets there), or nullopt.
  std::optional<sc_core::sc_time> next_sim_deadline_wall_passed(Clock::time_point now_wall) const {
    return timers.next_sim_deadline_wall_passed(now_wall);
  }

  void run_sim(const sc_core::sc_time& step, sc_core::sc_starvation_policy policy) {
    ++sc_starts;
    sc_core::sc_start(step, policy);
    // Everything this step transmitted leaves in one sendmmsg per socket.
    naa->net().flush_tx();
    // One clock read at the step's end serves the poll window, the caller's look at the timers
    // and the next turn (issue 31: three reads before, a few hundred instructions apart with no
    // wait or step between, so a deadline they would tell apart is seen one turn later, as one
    // that passes just after the single read is).
    turn_wall = Clock::now();
    wall_after_step = true;
    note_activity(turn_wall);
  }

  // A datagram sent or read since the last look opens the poll window anew, at `now`.
  void note_activity(Clock::time_point now) {
    if (opts.poll_us == 0) return;
    const std::uint64_t datagrams = naa->net().rx_datagram_count() + naa->net().tx_datagram_count();
    if (poll_window.moved(datagrams)) poll_window.note(datagrams, now);
  }

  // Before blocking (issue 19): the peer's next datagram often comes sooner than a blocking
  // wait's wake-up (the scheduler's latency) would return. Within the poll window (PollWindow:
  // --poll-us after the last datagram sent or read), checks the socket without blocking until
  // `until` or the window's end; true if a datagram is waiting. An idle naa-sim never polls (test
  // 'naa-sim idle'), and one that serves a peer uses at most --poll-us of CPU after its last
  // datagram. `now`: the wall time the wait starts (the caller has just read it).
  bool poll_before_wait(Clock::time_point until, Clock::time_point now) {
    note_activity(now);  // what poll_receive read since the last step
    if (opts.poll_us == 0 || !poll_window.open(now)) return false;
    ++polls;
    until = poll_window.end(until);
    pollfd pfd{naa->net().listen_fd(), POLLIN, 0};
    do {
      ++poll_checks;
      pfd.revents = 0;
      if (::poll(&pfd, 1, 0) > 0 && pfd.revents != 0) {
        ++poll_hits;
        return true;
      }
      // Let a runnable thread on this core go first: on a machine with few cores it is often
      // the peer's, which must run before its answer can come (measured: without the yield the
      // poll slowed calls down under load; docs/performance.md).
      ::sched_yield();
    } while (Clock::now() < until && !stop);
    return false;
  }

  void write_stats(std::ostream& os, const heap_stats::Snapshot& heap) {
    const double sim_s = sim_now().to_seconds();
    const double wall_s = std::chrono::duration<double>(Clock::now() - wall_start).count();
    const double cycles = sim_s * cfg.clock_mhz * 1e6;
    const double work_cycles = (sim_s - idle_advanced.to_seconds()) * cfg.clock_mhz * 1e6;
    os << "naa-sim.stats_seq=" << ++stats_seq << '\n'
       << "sim.time_ns=" << static_cast<std::uint64_t>(sim_s * 1e9 + 0.5) << '\n'
       << "sim.cycles=" << static_cast<std::uint64_t>(cycles + 0.5) << '\n'
       << "sim.peer_wait_ns=" << static_cast<std::uint64_t>(idle_advanced.to_seconds() * 1e9 + 0.5)
       << '\n'
       << "sim.work_cycles=" << static_cast<std::uint64_t>(work_cycles + 0.5) << '\n'
       << "sim.clock_mhz=" << cfg.clock_mhz << '\n'
       << "sim.width=" << cfg.width << '\n'
       << "wall.seconds=" << wall_s << '\n'
       << "sim.work_cycles_per_wall_second="
       << static_cast<std::uint64_t>(wall_s > 0 ? work_cycles / wall_s : 0) << '\n'
       << "runner.sc_start_calls=" << sc_starts << '\n'
       << "runner.waits=" << waits << '\n'
       << "runner.loop_turns=" << turns << '\n'
       << "runner.io_polls=" << io_polls << '\n'
       << "runner.polls=" << polls << '\n'
       << "runner.poll_hits=" << poll_hits << '\n'
       << "runner.poll_checks=" << poll_checks << '\n'
       << "runner.peer_timers_pending=" << timers.size() << '\n'
       << "naa-sim.seeded=" << (cfg.seed ? 1 : 0) << '\n';
    if (heap_stats::enabled()) {
      os << "naa-sim.heap_bytes=" << heap.live << '\n'
         << "naa-sim.heap_peak_bytes=" << heap.peak << '\n';
    }
    naa->report(os);
    naa->report_activity(os, sc_starts);
    os << "naa-sim.end=1\n";
  }

  void dump_stats() {
    // The heap figures are taken before the report allocates anything, and the peak restarts
    // after it: each snapshot's peak covers the model's work since the previous one, not the
    // reports themselves.
    const heap_stats::Snapshot heap = heap_stats::snapshot();
    dump_stats_text(heap);
    heap_stats::reset_peak();
  }

  void dump_stats_text(const heap_stats::Snapshot& heap) {
    std::ostringstream ss;
    write_stats(ss, heap);
    if (opts.stats_file.empty()) {
      std::cout << ss.str() << std::flush;
      return;
    }
    // Write-then-rename so a reader never sees a half-written file.
    const std::string tmp = opts.stats_file + ".tmp";
    {
      std::ofstream f(tmp, std::ios::trunc);
      f << ss.str();
    }
    if (std::rename(tmp.c_str(), opts.stats_file.c_str()) != 0) {
      log.write(LogLevel::error, "runner", "cannot write " + opts.stats_file);
    }
  }
};

Runner::Runner(const SimConfig& cfg, RunOptions opts, LogLevel level)
    : impl_(std::make_unique<Impl>(cfg, std::move(opts), level)) {}

Runner::~Runner() = default;

void Runner::arm(PeerTimerClient& client, std::uint32_t cookie, sc_core::sc_time after) {
  Impl& m = *impl_;
  if (after != m.last_after) {
    m.last_after = after;
    m.last_after_wall =
        std::chrono::nanoseconds(static_cast<std::int64_t>(after.to_seconds() * 1e9));
  }
  // The wall deadline counts from the arm itself (not the turn's start): the model may have
  // run for a while in this step, and the peer's time starts now.
  m.timers.arm(client, cookie, sim_now() + after, Clock::now() + m.last_after_wall);
}

void Runner::cancel(PeerTimerClient& client, std::uint32_t cookie) {
  impl_->timers.cancel(client, cookie);
}

int Runner::run() {
  Impl& m = *impl_;
  m.naa = std::make_unique<Naa>("naa", m.cfg, m.log, *this, m.io, KernelRegistry::with_builtins());
  try {
    m.naa->net().open(m.opts.listen_ip);
  } catch (const std::exception& e) {
    std::cerr << "naa-sim: cannot listen: " << e.what() << std::endl;
    return 1;
  }
  if (!m.opts.pcap_path.empty()) {
    if (const auto ec = m.naa->net().open_pcap(m.opts.pcap_path)) {
      std::cerr << "naa-sim: cannot open " << m.opts.pcap_path << ": " << ec.message() << std::endl;
      return 1;
    }
  }
  if (!m.cfg.seed && (m.cfg.fault_rx.active() || m.cfg.fault_tx.active())) {
    // Unseeded fault decisions come from a seed drawn at start: say it, so a failing run can be
    // repeated (with --seed the secrets are the seeded ones too; docs/sim/naa-sim.md).
    std::cerr << "naa-sim: fault injection seed " << m.naa->fault_seed() << " (--seed "
              << m.naa->fault_seed() << " repeats this run's fault decisions)" << std::endl;
  }
  m.run_sim(sc_core::SC_ZERO_TIME, sc_core::SC_EXIT_ON_STARVATION);  // elaborate, start processes
  m.wall_after_step = false;  // the first turn reads the clock itself
  m.arm_signals();
  m.wall_start = Clock::now();
  char ip[16];
  protocol::format_ipv4(m.opts.listen_ip, ip, sizeof ip);
  std::cout << "naa-sim: listening on " << ip << ':' << protocol::kRoceUdpPort << " (cm port "
            << m.cfg.cm_port << ")" << std::endl;

  auto last_io_poll = Clock::now();
  // Whether the socket may hold datagrams the model has not read: false only right after a step
  // that left the model idle (the wait that follows tells), so no read ends in EAGAIN there.
  bool may_have_input = true;
  while (!m.stop) {
    // Settled: may_have_input is false only right after a step that left the model idle with no
    // timer's wall deadline passed at the step's end, and this turn's wall time is that step's
    // end (run_sim). Then this turn's looks are known without asking again (issue 31: ~100
    // instructions per nop call): no timer is due or waits only for simulated time (none has
    // its wall deadline passed at turn_wall, and only a step arms one), and the model is still
    // idle (its state changes only in a step, a read of datagrams, which the turn skips, or a
    // fired timer; the Asio handlers only set flags).
    bool settled = !may_have_input;
    ++m.turns;
    if (!m.wall_after_step) m.turn_wall = Clock::now();
    m.wall_after_step = false;
    if (m.turn_wall - last_io_poll >= kIoPollInterval) {
      last_io_poll = m.turn_wall;
      ++m.io_polls;
      m.io.poll();
    }
    if (m.dump) {
      m.dump = false;
      m.dump_stats();
      settled = false;  // the reports only read the model; not worth relying on
    }
    if (m.stop) break;
    // Link model: while a stream comes in, the model may not run past the earliest time its next
    // datagram could arrive before that datagram has been read (docs/sim/timing.md).
    if (may_have_input) m.naa->net().poll_receive(512);
    may_have_input = true;
    if (!settled) m.fire_due();
    const sc_core::sc_time now = sim_now();
    const std::optional<sc_core::sc_time> horizon = m.naa->net().stream_horizon();
    if (horizon && now >= *horizon) {
      m.wait_at_horizon();
      continue;
    }
    if (!settled && model_pending()) {
      // The model's own work: run it, at most a chunk, and not past a timer that may fire.
      // A chunk must reach the next event: sc_start(d, SC_EXIT_ON_STARVATION) makes no progress
      // at all when the next event lies beyond d (e.g. a kernel busy for more than one chunk),
      // and the loop would spin without simulated time ever moving.
      sc_core::sc_time step = std::max(kMaxChunk, sc_core::sc_time_to_pending_activity());
      sc_core::sc_starvation_policy policy = sc_core::SC_EXIT_ON_STARVATION;
      if (const auto dl = m.next_sim_deadline_wall_passed(m.turn_wall); dl && *dl < now + step) {
        if (*dl <= now) continue;  // due now: fire_due() takes it on the next turn
        // Simulated time must reach the deadline even if the model has no event before it.
        step = *dl - now;
        policy = sc_core::SC_RUN_TO_TIME;
      }
      if (horizon && *horizon < now + step) {
        step = *horizon - now;
        policy = sc_core::SC_RUN_TO_TIME;
      }
      m.run_sim(step, policy);
      // Idle now, no stream and no timer waiting only for simulated time: the next turn blocks
      // on the socket, which says whether anything came.
      may_have_input = model_pending() || m.wall_passed_after_step();
      continue;
    }
    // Idle. A timer whose wall deadline passed only waits for simulated time: advance to it.
    if (const auto dl = settled ? std::nullopt : m.next_sim_deadline_wall_passed(m.turn_wall)) {
      if (*dl <= now) continue;  // due now: fire_due() takes it on the next turn
      sc_core::sc_time step = *dl - now;
      if (horizon && *horizon < now + step) step = *horizon - now;
      m.idle_advanced += step;
      m.run_sim(step, sc_core::SC_RUN_TO_TIME);
      continue;
    }
    if (m.timers.empty()) {
      if (m.poll_before_wait(Clock::time_point::max(), Clock::now())) {
        may_have_input = true;  // the next turn reads it
        continue;
      }
      m.arm_readable();
      ++m.waits;
      m.io.run_one();  // datagram or signal; no CPU while idle
      continue;
    }
    // Only peer-wait timers are pending: wait in wall time for the earliest, woken early by a
    // datagram or a signal, and let simulated time follow the wall time waited (never past the
    // earliest simulated deadline, so no timer fires late in simulated time).
    // Settled, the model has been idle since the step's end, when turn_wall was read, and the
    // turn has made no system call since (issue 31: a clock read per nop call): the wait counts
    // from there, as the idle time it stands for does.
    const auto now_wall = settled ? m.turn_wall : Clock::now();
    auto wall_dl = m.timers.timers().front().wall_deadline;
    sc_core::sc_time sim_dl = m.timers.timers().front().sim_deadline;
    for (const auto& t : m.timers.timers()) {
      wall_dl = std::min(wall_dl, t.wall_deadline);
      sim_dl = std::min(sim_dl, t.sim_deadline);
    }
    // The short poll counts as part of the wait: simulated time follows it too, and a datagram
    // it finds takes the same path as one that ends the blocking wait.
    if (!m.poll_before_wait(wall_dl, now_wall)) {
      m.arm_readable();
      ++m.waits;
      m.io.run_one_for(
          std::chrono::duration_cast<std::chrono::nanoseconds>(wall_dl - Clock::now()));
    }
    // The end of the wait: also the wall time of this wake-up's decisions before its step (the
    // timers below), as turn_wall is a turn's.
    const auto woke_wall = Clock::now();
    sc_core::sc_time advance = wall_wait_time(woke_wall - now_wall);
    if (sim_dl > now && advance > sim_dl - now) advance = sim_dl - now;
    if (sim_dl <= now) advance = sc_core::SC_ZERO_TIME;
    if (horizon && advance > *horizon - now) advance = *horizon - now;
    // The model is idle: the turn found no pending activity above, and the poll and the wait run
    // no model code (issue 31: this asked SystemC again).
    if (advance > sc_core::SC_ZERO_TIME && !horizon && sim_dl > now && advance < sim_dl - now) {
      // One step instead of two (issue 19): read what woke us, stamped at the advanced time, and
      // let the step that processes it also cover the time waited. Only when no timer's
      // simulated deadline falls inside the advance (fire_due() would have run between the two
      // steps) and no stream horizon applies; the model has no event before the datagrams then,
      // so every simulated time is the same as with the separate step.
      m.naa->net().set_stamp_floor(now + advance);
      if (m.naa->net().poll_receive(512) > 0) {
        m.idle_advanced += advance;
        sc_core::sc_time step = advance + kMaxChunk;
        sc_core::sc_starvation_policy policy = sc_core::SC_EXIT_ON_STARVATION;
        if (const auto dl = m.next_sim_deadline_wall_passed(woke_wall); dl && *dl < now + step) {
          step = *dl - now;
          policy = sc_core::SC_RUN_TO_TIME;
        }
        // What was just read may start a stream: not past its horizon (as the turn above).
        if (const auto h = m.naa->net().stream_horizon(); h && *h < now + step) {
          step = *h - now;
          policy = sc_core::SC_RUN_TO_TIME;
        }
        m.run_sim(step, policy);
        may_have_input = model_pending() || m.wall_passed_after_step();
        continue;
      }
    }
    if (advance > sc_core::SC_ZERO_TIME) {
      m.idle_advanced += advance;
      m.run_sim(advance, sc_core::SC_RUN_TO_TIME);
    }
  }

  if (m.opts.stats_on_exit || !m.opts.stats_file.empty()) m.dump_stats();
  m.naa->net().close_pcap();
  return 0;
}

}  // namespace naa::sim
