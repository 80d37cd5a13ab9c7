// MemoryPort's accesses in pieces (sim/include/naa/sim/memory_port.hpp, issue 31): an access
// longer than kPieceBytes moves its bytes piece by piece over its time. It must end at the time
// of one transaction (latency + ceil(len / width) cycles after the channel is free), move every
// byte to the right place, count as one access, and hold the channel against another port as
// before. Random lengths and offsets replay from NAA_TEST_SEED. SystemC elaborates once per
// process: one test case.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "naa/sim/memory.hpp"
#include "naa/sim/memory_port.hpp"

namespace {

namespace s = naa::sim;
using sc_core::sc_time;

std::uint64_t test_seed() {
  const char* e = std::getenv("NAA_TEST_SEED");
  return e != nullptr ? std::strtoull(e, nullptr, 0) : 31;
}

struct Access {
  std::uint64_t addr;
  std::uint64_t len;
};

SC_MODULE(Bench) {
  SC_HAS_PROCESS(Bench);
  Bench(sc_core::sc_module_name n, const s::SimConfig& cfg, std::vector<Access> accesses,
        std::uint64_t seed)
      : sc_module(n),
        cfg_(cfg),
        accesses_(std::move(accesses)),
        seed_(seed),
        mem_("mem", cfg),
        big_("big"),
        small_("small"),
        unused_("unused"),
        big_meter_(cfg),
        small_meter_(cfg) {
    big_.socket.bind(mem_.kernel_socket);
    small_.socket.bind(mem_.socket);
    unused_.socket.bind(mem_.handler_socket);  // every target socket must be bound
    SC_THREAD(run_big);
    SC_THREAD(run_small);
    SC_THREAD(run_sampler);
  }

  std::uint64_t cycles_of(std::uint64_t len) const {
    return s::SimConfig::stage_cycles(len, cfg_.mem_width, cfg_.mem_latency);
  }

  // Each access: write a random pattern, read it back; both must take one transaction's time.
  void run_big() {
    std::mt19937_64 rng(seed_);
    for (const Access& a : accesses_) {
      std::vector<std::uint8_t> in(a.len), out(a.len, 0xEE);
      for (auto& b : in)
        b = static_cast<std::uint8_t>(rng());
      sc_time t0 = sc_core::sc_time_stamp();
      REQUIRE(big_.write(a.addr, in.data(), a.len, big_meter_));
      CHECK(sc_core::sc_time_stamp() - t0 == cfg_.cycle() * static_cast<double>(cycles_of(a.len)));
      t0 = sc_core::sc_time_stamp();
      REQUIRE(big_.read(a.addr, out.data(), a.len, big_meter_));
      CHECK(sc_core::sc_time_stamp() - t0 == cfg_.cycle() * static_cast<double>(cycles_of(a.len)));
      CHECK(out == in);
      ++done;
    }
    // In the middle of a long read, another port's access waits for the channel (contention).
    contended_start = sc_core::sc_time_stamp();
    std::vector<std::uint8_t> out(3 * s::MemoryPort::kPieceBytes + 7);
    REQUIRE(big_.read(0, out.data(), out.size(), big_meter_));
    big_end = sc_core::sc_time_stamp();
    // The unwaited read (started as the long read ended, so behind the small read's access):
    // every share but the last waited, the last returned.
    sc_time last;
    REQUIRE(big_.read_unwaited(0, out.data(), out.size(), big_meter_, last));
    sc_core::wait(last);
    unwaited_end = sc_core::sc_time_stamp();
    // A read that grows its vector piece by piece (KernelEngine's OUTPUT buffers): the same
    // bytes as a plain read, the full size at the end, and only part of it half-way through.
    grown.reserve(out.size());
    grow_started.notify(cfg_.cycle() * static_cast<double>(cycles_of(out.size())) / 2);
    REQUIRE(big_.read(0, grown.data(), out.size(), big_meter_, &grown));
    REQUIRE(big_.read(0, out.data(), out.size(), big_meter_));
    grown_equal = grown == out;
  }

  // Half-way through the growing read: how much of the vector exists.
  void run_sampler() {
    sc_core::wait(grow_started);
    size_mid = grown.size();
  }

  void run_small() {
    sc_core::wait(contended_event_delay());
    std::uint8_t b = 0;
    REQUIRE(small_.read(0, &b, 1, small_meter_));
    small_end = sc_core::sc_time_stamp();
  }

  // The small read starts while the last long read runs: after every earlier access plus a bit.
  sc_time contended_event_delay() const {
    std::uint64_t cycles = 0;
    for (const Access& a : accesses_)
      cycles += 2 * cycles_of(a.len);
    return cfg_.cycle() * static_cast<double>(cycles + 100);
  }

  std::string report() const {
    std::ostringstream os;
    mem_.report(os);
    return os.str();
  }

  const s::SimConfig& cfg_;
  std::vector<Access> accesses_;
  std::uint64_t seed_;
  s::Memory mem_;
  s::MemoryPort big_, small_, unused_;
  s::CycleMeter big_meter_, small_meter_;
  std::size_t done = 0;
  sc_time contended_start, big_end, small_end, unwaited_end;
  sc_core::sc_event grow_started;
  std::vector<std::uint8_t> grown;
  std::size_t size_mid = 0;
  bool grown_equal = false;
};

}  // namespace

TEST_CASE("MemoryPort in pieces: one transaction's time, every byte, one access, contention",
          "[sim][memory]") {
  const std::uint64_t seed = test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::uint64_t piece = s::MemoryPort::kPieceBytes;
  // Around one piece (one transaction, or two pieces the second of one byte), several pieces
  // with a short last one, and odd page offsets (SparseStore pages are 64 KiB).
  std::vector<Access> accesses{{0, piece}, {3, piece + 1}, {1 << 20, 4 * piece}};
  for (int i = 0; i < 4; ++i)
    accesses.push_back({rng() % (1 << 22), piece + rng() % (5 * piece)});
  s::SimConfig cfg;
  Bench bench("bench", cfg, accesses, seed);
  sc_core::sc_start(sc_time(1, sc_core::SC_SEC));

  REQUIRE(bench.done == accesses.size());
  // The small read asked for the channel during the long read and got it when that ended.
  CHECK(bench.small_end == bench.big_end + cfg.cycle() * static_cast<double>(bench.cycles_of(1)));
  CHECK(bench.unwaited_end ==
        bench.small_end + cfg.cycle() * static_cast<double>(bench.cycles_of(3 * piece + 7)));
  CHECK(bench.grown.size() == 3 * piece + 7);
  CHECK(bench.grown_equal);
  CHECK(bench.size_mid > 0);
  CHECK(bench.size_mid < 3 * piece + 7);
  std::uint64_t bytes = 0;
  for (const Access& a : accesses)
    bytes += a.len;
  const std::string r = bench.report();
  INFO(r);
  const std::uint64_t long_read = 3 * piece + 7;
  CHECK(r.find("memory.reads=" + std::to_string(accesses.size() + 5) + "\n") != std::string::npos);
  CHECK(r.find("memory.writes=" + std::to_string(accesses.size()) + "\n") != std::string::npos);
  CHECK(r.find("memory.bytes_read=" + std::to_string(bytes + 4 * long_read + 1) + "\n") !=
        std::string::npos);
  CHECK(r.find("memory.bytes_written=" + std::to_string(bytes) + "\n") != std::string::npos);
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
