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
        new_wire_(2),
        dir_meter_(cfg),
        dir_in_(2),
        dir_wire_(2) {
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
    SC_THREAD(dir_stage);
    SC_THREAD(dir_reader);
  }

  void producer() {
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      if (steps_[i].gap != 0) wait(ref_meter_.cycle() * static_cast<double>(steps_[i].gap));
      ref_in_.put(&packets_[i]);  // all block while full: back-pressure on the same producer
      new_in_.put(&packets_[i]);
      dir_in_.put(&packets_[i]);
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
  // NetPort's wire without its process (tx_emit): a frame that finds the reader idle is handed
  // on by the producer at once (recorded with its due time) and books the queue until then.
  void dir_stage() {
    for (;;) {
      s::Packet* p = dir_in_.get();
      dir_meter_.spend(service_of(*p));
      dir_out.emplace_back(p->src_qpn, sc_core::sc_time_stamp());
      wait_downstream(*p);
      const sc_time due = sc_core::sc_time_stamp() + due_after(*p);
      if (dir_wire_.try_book(due)) {
        ++dir_booked;
        dir_wire_out.emplace_back(p->src_qpn, due);
      } else {
        dir_wire_.put(Frame{p, due}, due);
      }
    }
  }
  void dir_reader() {
    for (;;) {
      const Frame f = dir_wire_.next();
      dir_wire_out.emplace_back(f.p->src_qpn, sc_core::sc_time_stamp());
    }
  }

  struct Frame {
    s::Packet* p = nullptr;
    sc_time due;
  };
  // StageQueue's service: the stage's time from when it takes the packet, metered.
  static sc_time new_service(void* self, const s::Packet& p, sc_time /*start*/) {
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
  s::CycleMeter dir_meter_;
  s::Channel<s::Packet*> dir_in_;
  s::ReadyQueue<Frame> dir_wire_;
  std::size_t dir_booked = 0;
  std::vector<std::pair<std::uint32_t, sc_time>> ref_out, new_out, ref_wire_out, new_wire_out;
  std::vector<std::pair<std::uint32_t, sc_time>> dir_out, dir_wire_out;
};

// Two stages in a row (NetPort's receive stage into RxPipe, TxPipe into NetPort's transmit
// stage): in the reference each stage's process takes every packet (StageQueue put + next, as
// the Pair above checks against get + spend); the new pair books the first stage from the
// producer when it may (StageQueue::reserve: its process does not wake) and hands the packet to
// the second with its time (try_put_at, chained behind a packet in service). The producer never
// blocks (try_put, as the runner injects); a packet that finds the first stage's FIFO full is
// dropped in both. The second stage is sometimes held downstream, so the first one waits on its
// FIFO (back-pressure).
SC_MODULE(Chain) {
  SC_HAS_PROCESS(Chain);
  Chain(sc_core::sc_module_name n, const s::SimConfig& cfg, std::vector<Step> steps)
      : sc_module(n),
        steps_(std::move(steps)),
        meter_(cfg),
        ref_a_(3, this, &Chain::service_a),
        ref_b_(2, this, &Chain::service_b),
        new_a_(3, this, &Chain::service_a),
        new_b_(2, this, &Chain::service_b) {
    packets_.resize(steps_.size());
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      packets_[i].size = steps_[i].size;
      packets_[i].src_qpn = static_cast<std::uint32_t>(i);
    }
    SC_THREAD(producer);
    SC_THREAD(ref_first);
    SC_THREAD(ref_second);
    SC_THREAD(new_first);
    SC_THREAD(new_second);
  }
  static std::uint64_t cycles_a(const s::Packet& p) {
    return 4 + (p.size + 63) / 64;
  }
  static std::uint64_t cycles_b(const s::Packet& p) {
    return 2 + (p.size + 127) / 128;
  }
  void producer() {
    // Every put at its own offset within a cycle (1 .. cycle - 1 time resolution units, a
    // different one per packet), stage times whole cycles: a put never falls on the instant a stage
    // finishes, where the order of two processes woken at the same time (SystemC's choice, which
    // the new path may change) would decide whether the FIFO is full.
    const std::uint64_t cycle_units = meter_.cycle().value();
    sc_time base = sc_core::SC_ZERO_TIME;
    std::uint64_t last_offset = 0;
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      const std::uint64_t offset = 1 + (i * 7919) % (cycle_units - 1);
      base += meter_.times(steps_[i].gap + (steps_[i].gap == 0 && offset < last_offset ? 1 : 0));
      last_offset = offset;
      wait(base + sc_time::from_value(offset) - sc_core::sc_time_stamp());
      s::Packet* p = &packets_[i];
      if (ref_a_.full() || !ref_a_.try_put(p)) ref_dropped.push_back(p->src_qpn);
      const sc_time now = sc_core::sc_time_stamp();
      if (new_a_.full()) {
        new_dropped.push_back(p->src_qpn);
      } else if (const sc_time done = new_a_.start_for(now) + meter_.times(cycles_a(*p));
                 new_a_.can_book() && new_b_.try_put_at(p, done)) {
        (void)new_a_.reserve(*p, now);
        ++passed_by_call;
      } else if (!new_a_.try_put(p)) {
        new_dropped.push_back(p->src_qpn);
      }
    }
  }
  void ref_first() {
    for (;;)
      ref_b_.put(ref_a_.next());
  }
  void ref_second() {
    for (;;) {
      s::Packet* p = ref_b_.next();
      ref_out.emplace_back(p->src_qpn, sc_core::sc_time_stamp());
      hold(*p);
    }
  }
  void new_first() {
    for (;;)
      new_b_.put(new_a_.next());
  }
  void new_second() {
    for (;;) {
      s::Packet* p = new_b_.next();
      new_out.emplace_back(p->src_qpn, sc_core::sc_time_stamp());
      hold(*p);
    }
  }
  void hold(const s::Packet& p) {
    if (const std::uint64_t extra = steps_[p.src_qpn].downstream; extra != 0) {
      wait(meter_.times(extra));
    }
  }
  static sc_time service_a(void* self, const s::Packet& p, sc_time /*start*/) {
    return static_cast<Chain*>(self)->meter_.times(cycles_a(p));
  }
  static sc_time service_b(void* self, const s::Packet& p, sc_time /*start*/) {
    return static_cast<Chain*>(self)->meter_.times(cycles_b(p));
  }

  std::vector<Step> steps_;
  std::vector<s::Packet> packets_;
  s::CycleMeter meter_;
  s::StageQueue ref_a_, ref_b_, new_a_, new_b_;
  std::vector<std::pair<std::uint32_t, sc_time>> ref_out, new_out;
  std::vector<std::uint32_t> ref_dropped, new_dropped;
  std::size_t passed_by_call = 0;
};

// Many packets booked behind one another (StageQueue::reserve while the stage is still booked,
// as NetPort's receive stage books a read's datagrams): each counts as queued (size()) from when
// it is ready until it starts, also when more are booked after some have started.
SC_MODULE(Backlog) {
  SC_HAS_PROCESS(Backlog);
  Backlog(sc_core::sc_module_name n, const s::SimConfig& cfg)
      : sc_module(n), meter_(cfg), q_(32, this, &Backlog::service), packets_(29) {
    SC_THREAD(stage);
    SC_THREAD(producer);
  }
  static sc_time service(void* self, const s::Packet& /*p*/, sc_time /*start*/) {
    return static_cast<Backlog*>(self)->meter_.times(10);
  }
  void stage() {
    for (;;)
      (void)q_.next();  // parked: nothing is put, every packet is booked
  }
  void producer() {
    wait(meter_.times(1));  // the stage's process is parked by now
    const sc_time t0 = sc_core::sc_time_stamp();
    const sc_time service_time = meter_.times(10);
    for (std::size_t i = 0; i < 10; ++i) {
      bookable = bookable && q_.can_book();
      starts.push_back(q_.reserve(packets_[i], t0) - service_time);
      sizes.push_back(q_.size());  // 0, 1, .., 9: the first started at once
    }
    // Just after packet k started: 9 - k still queued.
    for (std::size_t k = 1; k <= 5; ++k) {
      wait(t0 + service_time * static_cast<double>(k) + meter_.times(1) - sc_core::sc_time_stamp());
      sizes.push_back(q_.size());
    }
    // Six more behind the rest (the started ones are forgotten first): 4 + 6 queued.
    const sc_time now = sc_core::sc_time_stamp();
    for (std::size_t i = 10; i < 16; ++i) {
      bookable = bookable && q_.can_book();
      starts.push_back(q_.reserve(packets_[i], now) - service_time);
    }
    sizes.push_back(q_.size());
    wait(service_time * 20.0);
    sizes.push_back(q_.size());  // all started
    // Twelve more once every earlier one has started, then one more after three of them
    // started: the bookings behind a booking are kept in a ring of 16 by now, whose head goes
    // round its end here (the ten started entries forgotten first leave it at 15).
    const sc_time later = sc_core::sc_time_stamp();
    for (std::size_t i = 16; i < 28; ++i) {
      bookable = bookable && q_.can_book();
      starts.push_back(q_.reserve(packets_[i], later) - service_time);
    }
    sizes.push_back(q_.size());  // 11: the first started at once
    for (std::size_t k = 1; k <= 3; ++k) {
      wait(later + service_time * static_cast<double>(k) + meter_.times(1) -
           sc_core::sc_time_stamp());
      sizes.push_back(q_.size());
    }
    bookable = bookable && q_.can_book();
    starts.push_back(q_.reserve(packets_[28], sc_core::sc_time_stamp()) - service_time);
    sizes.push_back(q_.size());  // 8 + 1
    wait(service_time * 20.0);
    sizes.push_back(q_.size());
  }
  s::CycleMeter meter_;
  s::StageQueue q_;
  std::vector<s::Packet> packets_;
  bool bookable = true;
  std::vector<sc_time> starts;
  std::vector<std::size_t> sizes;
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
  std::vector<Step> chain_steps;
  for (int i = 0; i < 3000; ++i) {
    Step st;
    const auto r = rng() % 10;
    st.gap = r < 3 ? 0 : r < 8 ? rng() % 12 : 60 + rng() % 200;
    st.size = 20 + rng() % 1200;
    st.downstream = rng() % 10 == 0 ? rng() % 60 : 0;
    chain_steps.push_back(st);
  }
  Chain chain("chain", cfg, chain_steps);
  Backlog backlog("backlog", cfg);
  sc_core::sc_start(sc_time(1, sc_core::SC_SEC));

  // Sixteen bookings behind one another, then thirteen more: back to back, each queued until
  // it starts.
  CHECK(backlog.bookable);
  REQUIRE(backlog.starts.size() == 29);
  for (std::size_t i = 1; i < backlog.starts.size(); ++i) {
    if (i == 16) continue;  // the second group starts when it is booked
    CHECK(backlog.starts[i] == backlog.starts[i - 1] + backlog.meter_.times(10));
  }
  CHECK(backlog.sizes == std::vector<std::size_t>{0, 1, 2, 3,  4, 5,  6,  7, 8, 9, 8, 7,
                                                  6, 5, 4, 10, 0, 11, 10, 9, 8, 9, 0});

  // Two stages crossed by a call when idle, chained behind a packet in service, booked behind a
  // booking: the times, order, drops (a full FIFO counts the booked packets) of the reference.
  REQUIRE(chain.ref_out.size() + chain.ref_dropped.size() == chain_steps.size());
  for (std::size_t i = 0; i < std::min(chain.new_out.size(), chain.ref_out.size()); ++i) {
    INFO("packet " << i << " of the chain's output");  // the first that differs
    REQUIRE(chain.new_out[i].first == chain.ref_out[i].first);
    REQUIRE(chain.new_out[i].second == chain.ref_out[i].second);
  }
  REQUIRE(chain.new_out.size() == chain.ref_out.size());
  REQUIRE(chain.new_dropped == chain.ref_dropped);
  CHECK(chain.passed_by_call > 300);                       // the call path was taken often
  CHECK(chain.passed_by_call < chain_steps.size() - 300);  // and the process path too
  CHECK(chain.ref_dropped.size() > 10);                    // the FIFO did fill

  REQUIRE(pair.ref_out.size() == steps.size());
  REQUIRE(pair.new_out == pair.ref_out);
  REQUIRE(pair.ref_wire_out.size() == steps.size());
  REQUIRE(pair.new_wire_out == pair.ref_wire_out);
  // The wire without its process where a frame finds it idle (ReadyQueue::try_book): the same
  // times, order and back-pressure (the stage in front of it leaves at the same times).
  REQUIRE(pair.dir_out == pair.ref_out);
  REQUIRE(pair.dir_wire_out == pair.ref_wire_out);
  CHECK(pair.dir_booked > 100);                 // frames handed on without the reader
  CHECK(pair.dir_booked < steps.size() - 100);  // and through it (queued behind a booking too)
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
