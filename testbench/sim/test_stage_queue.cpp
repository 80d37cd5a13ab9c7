// StageQueue and ReadyQueue (sim/include/naa/sim/common.hpp, issue 31) against what they
// replace: a stage that takes a packet from a Channel and then spends its service time, and a
// reader that takes a frame and waits for its due time. The same random traffic (bursts, gaps,
// back-pressure from a small capacity, a stage that is sometimes slow downstream) drives both;
// every packet must leave each pair at the same simulated time, in the same order, with the same
// busy cycles. Replays from NAA_TEST_SEED. SystemC elaborates once per process: one test case.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

#include <systemc>

#include "naa/sim/common.hpp"

namespace {

namespace s = naa::sim;
using sc_core::sc_time;

std::uint64_t test_seed() {
  const char* e = std::getenv("NAA_TEST_SEED");
  return e != nullptr ? std::strtoull(e, nullptr, 0) : 31;
}

std::uint64_t service_of(const s::Packet& p) {
  return 4 + (p.size + 63) / 64;  // stage_cycles at W = 64 with latency 4
}

// One producer schedule: (gap in cycles before the put, packet size, extra downstream cycles the
// stage is held after this packet).
struct Step {
  std::uint64_t gap;
  std::size_t size;
  std::uint64_t downstream;
};

SC_MODULE(Pair) {
  SC_HAS_PROCESS(Pair);
  Pair(sc_core::sc_module_name n, const s::SimConfig& cfg, std::vector<Step> steps)
      : sc_module(n),
        steps_(std::move(steps)),
        ref_meter_(cfg),
        new_meter_(cfg),
        ref_in_(2),
        new_in_(2, this, &Pair::new_service),
        ref_wire_(2),
        new_wire_(2) {
    packets_.resize(steps_.size());
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      packets_[i].size = steps_[i].size;
      packets_[i].src_qpn = static_cast<std::uint32_t>(i);
    }
    SC_THREAD(producer);
    SC_THREAD(ref_stage);
    SC_THREAD(new_stage);
    SC_THREAD(ref_reader);
    SC_THREAD(new_reader);
  }

  void producer() {
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      if (steps_[i].gap != 0) wait(ref_meter_.cycle() * static_cast<double>(steps_[i].gap));
      ref_in_.put(&packets_[i]);  // both block while full: back-pressure on the same producer
      new_in_.put(&packets_[i]);
    }
  }
  void ref_stage() {
    for (;;) {
      s::Packet* p = ref_in_.get();
      ref_meter_.spend(service_of(*p));
      ref_out.emplace_back(p->src_qpn, sc_core::sc_time_stamp());
      wait_downstream(*p);
      ref_wire_.put(Frame{p, sc_core::sc_time_stamp() + due_after(*p)});
    }
  }
  void new_stage() {
    for (;;) {
      s::Packet* p = new_in_.next();
      new_out.emplace_back(p->src_qpn, sc_core::sc_time_stamp());
      wait_downstream(*p);
      new_wire_.put(Frame{p, sc_core::sc_time_stamp() + due_after(*p)},
                    sc_core::sc_time_stamp() + due_after(*p));
    }
  }
  void ref_reader() {
    for (;;) {
      const Frame f = ref_wire_.get();
      if (const sc_time now = sc_core::sc_time_stamp(); f.due > now) wait(f.due - now);
      ref_wire_out.emplace_back(f.p->src_qpn, sc_core::sc_time_stamp());
    }
  }
  void new_reader() {
    for (;;) {
      const Frame f = new_wire_.next();
      new_wire_out.emplace_back(f.p->src_qpn, sc_core::sc_time_stamp());
    }
  }

  struct Frame {
    s::Packet* p = nullptr;
    sc_time due;
  };
  // StageQueue's service: the stage's time from when it takes the packet, metered.
  static sc_time new_service(void* self, const s::Packet& p) {
    auto* pair = static_cast<Pair*>(self);
    pair->new_meter_.account(service_of(p));
    return pair->new_meter_.times(service_of(p));
  }
  void wait_downstream(const s::Packet& p) {
    const std::uint64_t extra = steps_[p.src_qpn].downstream;
    if (extra != 0) wait(ref_meter_.cycle() * static_cast<double>(extra));
  }
  // Some frames are due at once (0), others later.
  sc_time due_after(const s::Packet& p) const {
    return ref_meter_.cycle() * static_cast<double>((p.size % 3 == 0) ? 0 : p.size / 100);
  }

  std::vector<Step> steps_;
  std::vector<s::Packet> packets_;
  s::CycleMeter ref_meter_, new_meter_;
  s::Channel<s::Packet*> ref_in_;
  s::StageQueue new_in_;
  s::Channel<Frame> ref_wire_;
  s::ReadyQueue<Frame> new_wire_;
  std::vector<std::pair<std::uint32_t, sc_time>> ref_out, new_out, ref_wire_out, new_wire_out;
};

}  // namespace

TEST_CASE("StageQueue and ReadyQueue give the times of get + spend and get + wait",
          "[sim][stage_queue]") {
  const std::uint64_t seed = test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  std::vector<Step> steps;
  for (int i = 0; i < 2000; ++i) {
    Step st;
    const auto r = rng() % 10;
    st.gap = r < 4 ? 0 : r < 8 ? rng() % 40 : 200 + rng() % 400;  // bursts, gaps, idle
    st.size = 64 + rng() % 4096;
    st.downstream = rng() % 8 == 0 ? rng() % 150 : 0;  // sometimes held downstream
    steps.push_back(st);
  }
  s::SimConfig cfg;
  Pair pair("pair", cfg, steps);
  sc_core::sc_start(sc_time(1, sc_core::SC_SEC));

  REQUIRE(pair.ref_out.size() == steps.size());
  REQUIRE(pair.new_out == pair.ref_out);
  REQUIRE(pair.ref_wire_out.size() == steps.size());
  REQUIRE(pair.new_wire_out == pair.ref_wire_out);
  CHECK(pair.new_meter_.busy_cycles() == pair.ref_meter_.busy_cycles());
  // The traffic did exercise both paths: some packets met an idle stage, some a busy one.
  std::size_t idle_starts = 0;
  for (std::size_t i = 1; i < pair.ref_out.size(); ++i) {
    if (pair.ref_out[i].second - pair.ref_out[i - 1].second >
        cfg.cycle() * static_cast<double>(service_of(pair.packets_[i]) + 1)) {
      ++idle_starts;
    }
  }
  CHECK(idle_starts > 100);
  CHECK(idle_starts < steps.size() - 100);
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
