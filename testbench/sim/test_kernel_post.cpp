// KernelEngine::post_call's check at the post (issue 31, docs/performance-cost.md item 42): a call
// that finds its lane idle is checked when it is posted, and the lane wakes once, when the kernel
// latency has passed, only when nothing else can run before the lane's delta cycle. These tests
// hold it to what the lane's own check (one delta cycle after the post) would decide: the same
// outcome at the same simulated time, and no check at the post when another process could still
// change the QP in between. In-process, against stand-ins for the engine's ports.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "model_context_rig.hpp"
#include "naa/sim/context.hpp"
#include "naa/sim/kernel_engine.hpp"
#include "naa/sim/memory.hpp"

namespace {

namespace s = naa::sim;
using sc_core::sc_time;

class NoRegions final : public s::RegionDirectory {
 public:
  [[nodiscard]] const std::vector<s::Region>& regions(std::uint32_t) const override {
    return none_;
  }
  [[nodiscard]] const s::PeerBinding* peer(std::uint32_t, std::uint32_t) const override {
    return nullptr;
  }

 private:
  std::vector<s::Region> none_;
};

class CountingSends final : public s::SendQueue {
 public:
  void post_send(s::Qp&, s::SendWqe) override { ++posts; }
  void open_peer(s::Qp&, std::uint32_t) override {}
  void close_peer(s::Qp&) override {}
  int posts = 0;
};

// An immediate with bit 7 clear is not a call (PROTOCOL.md 5.2): the engine counts it as
// kernel.bad_immediate once the kernel latency has passed, and needs no region, memory or send.
constexpr std::uint32_t kNotACall = 0x01;

struct EngineRig {
  EngineRig() {
    qps[0].state = s::QpState::rts;
    engine.directory(directory);
    engine.sends(sends);
    engine.mem.bind_memory(memory, memory.kernel_socket);
  }
  [[nodiscard]] std::uint64_t stat(const std::string& key) const {
    return naa::testbench::reported(engine, key);
  }
  [[nodiscard]] sc_time latency() const {
    return cfg.cycle() * static_cast<double>(cfg.kernel_latency);
  }

  naa::testbench::ModelContextRig model;
  const s::SimConfig& cfg = model.cfg;
  std::vector<s::Qp>& qps = model.qps;
  s::Memory memory{"memory", cfg};
  s::KernelEngine engine{"kernel_engine", model.ctx, s::KernelRegistry::with_builtins()};
  NoRegions directory;
  CountingSends sends;
  naa::testbench::UnusedMemoryInitiators unused{
      "unused",
      memory,
      {&memory.socket, &memory.handler_socket}};  // the Transport's, the HandlerEngine's
};

// What happens at the post's instant, before the post, in the poster's own activation.
enum class Beside {
  nothing,      // the poster is all that runs: the post makes the lane's check
  delta_event,  // a delta notification is pending: another process runs with the lane
  runnable,     // another process is runnable now: it runs before the lane's delta cycle
};

// Posts kNotACall on QP 0 at 1 us. With `qp_error_beside`, the process `beside` wakes puts QP 0
// in error at the same instant (as a CM agent's DREQ would).
struct PostRun {
  std::uint64_t accepted_at_post = 0, bad_immediate = 0, stale = 0;
  bool counted_before_latency = true, counted_after_latency = false;
};

PostRun post_once(Beside beside, bool qp_error_beside) {
  EngineRig rig;
  PostRun r;
  sc_core::sc_event other;
  sc_core::sc_spawn(
      [&] {
        for (;;) {
          sc_core::wait(other);
          if (qp_error_beside) rig.qps[0].state = s::QpState::error;
        }
      },
      "beside");
  sc_core::sc_spawn(
      [&] {
        sc_core::wait(sc_time(1, sc_core::SC_US));
        if (beside == Beside::delta_event) other.notify(sc_core::SC_ZERO_TIME);
        if (beside == Beside::runnable) other.notify();
        rig.engine.post_call(rig.qps[0], kNotACall);
        const sc_time one_ps(1, sc_core::SC_PS);
        sc_core::wait(rig.latency() - one_ps);
        r.counted_before_latency = rig.stat("kernel.bad_immediate") == 1;
        sc_core::wait(2 * one_ps);
        r.counted_after_latency = rig.stat("kernel.bad_immediate") == 1;
      },
      "poster");
  sc_core::sc_start(sc_time(10, sc_core::SC_US));
  r.accepted_at_post = rig.stat("activity.kernel.accepted_at_post");
  r.bad_immediate = rig.stat("kernel.bad_immediate");
  r.stale = rig.stat("kernel.stale_calls");
  CHECK(rig.sends.posts == 0);
  return r;
}

// The call was taken (not stale) and its outcome counted exactly one kernel latency after the
// post: what the lane's own check, one delta cycle after the post, gives.
void check_ran_one_latency_after_the_post(const PostRun& r) {
  CHECK(r.bad_immediate == 1);
  CHECK(r.stale == 0);
  CHECK_FALSE(r.counted_before_latency);
  CHECK(r.counted_after_latency);
}

}  // namespace

// Each case builds its own model: CTest runs every test case in a process of its own.

TEST_CASE("kernel post: an idle lane's check made at the post, outcome due after the latency",
          "[sim][kernel]") {
  const PostRun r = post_once(Beside::nothing, false);
  CHECK(r.accepted_at_post == 1);
  check_ran_one_latency_after_the_post(r);
}

TEST_CASE("kernel post: with a delta notification pending the lane checks, at the same times",
          "[sim][kernel]") {
  const PostRun r = post_once(Beside::delta_event, false);
  CHECK(r.accepted_at_post == 0);  // sc_pending_activity_at_current_time(): the lane checks
  check_ran_one_latency_after_the_post(r);
}

// The race the guard is for: the post sees the QP ready to send, but another process at the same
// instant (runnable when the post is made) puts it in error before the lane's delta cycle. The
// lane's check sees the error and drops the call as stale; a check made at the post would have run
// it.
TEST_CASE("kernel post: a QP put in error beside the post leaves the call stale, as the lane sees",
          "[sim][kernel]") {
  const PostRun r = post_once(Beside::runnable, true);
  CHECK(r.accepted_at_post == 0);
  CHECK(r.stale == 1);
  CHECK(r.bad_immediate == 0);
}
