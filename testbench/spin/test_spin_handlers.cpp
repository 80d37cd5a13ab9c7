// sPIN handlers written in C (testbench/spin/handlers, built by naa_add_handler) installed with
// naa-sim --handler and run on the HPU cores as the model, the RTL and both in lockstep, called
// from the host library: result bytes, the handlers' own counters, naa-sim's statistics; a fault,
// the watchdog, FAIL and ECALL answered with their return codes; images naa-sim must refuse.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "naa/host/session.hpp"
#include "naa/protocol/bytes.hpp"
#include "naa_sim.hpp"
#include "seed.hpp"
#include "session_against_sim.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::Region;
using naa::testbench::NaaSim;
namespace host = naa::host;

namespace {

using naa::testbench::host_ip;
using naa::testbench::random_bytes;
using naa::testbench::sim_ip;

host::SessionOptions opts(std::uint8_t fn, std::uint64_t arg, int m = 1) {
  return naa::testbench::stream_session_options(fn, m, arg, 60000ms);
}

}  // namespace

TEST_CASE("spin: a C handler on the HPU cores (model, rtl, lockstep) gives the bytes and counts") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  for (const std::string mode : {"model", "rtl", "lockstep"}) {
    SECTION(mode) {
      NaaSim sim(sim_ip(), {"--handler", SPIN_XOR_COUNT_ELF, "--hpu=" + mode, "--hpus", "4"});
      REQUIRE(sim.ready());
      const std::uint64_t key = 0x5A + (seed & 0xFF00);  // the handler uses the low byte
      const auto in = random_bytes(64 * 1024 + 13, seed);
      auto io = in;
      std::vector<std::uint8_t> counts(8);
      host::Session s(opts(20, key), {Region::inout(io).stream(), Region::output(counts)});
      const auto r = s.call(20);
      REQUIRE(r.return_code == 0);
      INFO("bytes received " << r.bytes_received << ", per region " << r.output_bytes.at(0) << " "
                             << r.output_bytes.at(1));
      for (std::size_t i = 0; i < in.size(); ++i) {
        REQUIRE(io[i] == static_cast<std::uint8_t>(in[i] ^ 0x5A));
      }
      const std::string st = sim.stats_text();
      INFO(st);
      const std::uint64_t payloads = NaaSim::stat_in(st, "handler.payloads");
      CHECK(payloads >= 16);  // 64 KiB in packets of at most 4 KiB
      CHECK(naa::protocol::load_le32(counts.data()) == payloads);
      CHECK(naa::protocol::load_le32(counts.data() + 4) == in.size());
      CHECK(NaaSim::stat_in(st, "hpu.fn20.invocations") == payloads + 1);
      CHECK(NaaSim::stat_in(st, "hpu.fn20.traps") == 0);
      // The cycles are executed instructions: at least 3 per byte XORed (load, xor, store).
      CHECK(NaaSim::stat_in(st, "hpu.fn20.cycles") > 3 * in.size());
      CHECK(NaaSim::stat_in(st, "handler.segv") == 0);
      CHECK(NaaSim::stat_in(st, "rtl.hpu.verilated") == (mode == "model" ? 0U : 4U));
      if (mode == "lockstep") {
        CHECK(NaaSim::stat_in(st, "rtl.hpu.lockstep") == 1);
        CHECK(NaaSim::stat_in(st, "rtl.lockstep.divergences") == 0);
      }
    }
  }
}

TEST_CASE("spin: accumulate into memory (DMA from and to NAA memory) gives acc + data per word") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  NaaSim sim(sim_ip(), {"--handler", SPIN_ACCUMULATE_ELF, "--hpus", "4"});
  REQUIRE(sim.ready());
  const std::size_t words = 8 * 1024 + 3;  // 32 KiB and a partial packet
  const auto acc_bytes = random_bytes(4 * words, seed);
  auto data = random_bytes(4 * words, seed + 1);
  auto acc = acc_bytes;
  host::Session s(opts(25, 0), {Region::inout(acc), Region::input(data).stream()});
  REQUIRE(s.call(25).return_code == 0);
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint32_t want = naa::protocol::load_le32(acc_bytes.data() + 4 * i) +
                               naa::protocol::load_le32(data.data() + 4 * i);
    REQUIRE(naa::protocol::load_le32(acc.data() + 4 * i) == want);
  }
  const std::string st = sim.stats_text();
  INFO(st);
  const std::uint64_t payloads = NaaSim::stat_in(st, "handler.payloads");
  CHECK(payloads >= 8);
  // One read per 256 words of each packet.
  CHECK(NaaSim::stat_in(st, "handler.dma_reads") >= payloads);
  CHECK(NaaSim::stat_in(st, "handler.segv") == 0);
}

TEST_CASE("spin: accumulate under flow control: RNR NAKs cost the host no retry") {
  // One HPU and 8 KiB of HPU memory: the C handler is far slower than the link, so most packets
  // are RNR-NAKed while the host's window is in flight, and the packets behind each draw a
  // sequence-error NAK for the same PSN (PROTOCOL.md 3). That NAK is no new loss: the host must
  // not spend a retry on it (a 1 MiB call used to run out of them).
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  NaaSim sim(sim_ip(), {"--handler", SPIN_ACCUMULATE_ELF, "--hpus", "1", "--hpu-mem", "8K"});
  REQUIRE(sim.ready());
  const std::size_t words = 64 * 1024;  // 256 KiB
  const auto acc_bytes = random_bytes(4 * words, seed);
  auto data = random_bytes(4 * words, seed + 1);
  auto acc = acc_bytes;
  host::SessionOptions o = opts(25, 0);
  o.irn_streaming = false;  // RNR NAKs are go-back-N's flow control (IRN drops instead)
  host::Session s(o, {Region::inout(acc), Region::input(data).stream()});
  REQUIRE(s.call(25).return_code == 0);
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint32_t want = naa::protocol::load_le32(acc_bytes.data() + 4 * i) +
                               naa::protocol::load_le32(data.data() + 4 * i);
    REQUIRE(naa::protocol::load_le32(acc.data() + 4 * i) == want);
  }
  const std::string st = sim.stats_text();
  INFO(st);
  CHECK(NaaSim::stat_in(st, "handler.rnr_naks") > 0);
  CHECK(NaaSim::stat_in(st, "transport.nak_sent.rnr") > 0);
  // Whether sequence-error NAKs follow depends on how the host's window met the RNR NAK in wall
  // time; the co-simulated test below makes that case happen every time.
}

TEST_CASE("spin: the built-in handlers in C give the C++ built-ins' bytes") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  // The C++ classes at 1..7 (the oracles), the C images at 41..47.
  NaaSim sim(sim_ip(), {"--builtin-handlers=cpp", "--handler", SPIN_C_ADD1_ELF, "--handler",
                        SPIN_C_ADD2_ELF, "--handler", SPIN_C_SUM_U64_ELF, "--handler",
                        SPIN_C_CRC32_ELF, "--handler", SPIN_C_UNPACK_STRIDED_ELF, "--hpus", "4"});
  REQUIRE(sim.ready());
  int m = 1;
  // One streaming call of `fn` (C++ built-in) and of `fn + 40` (its C image) on the same input:
  // the output regions must be equal byte for byte.
  const auto both = [&](std::uint8_t fn, std::uint64_t arg, std::size_t in_size,
                        std::size_t out_size, bool inout) {
    INFO("function " << int{fn} << ", " << in_size << " bytes");
    std::vector<std::vector<std::uint8_t>> results;
    for (const std::uint8_t f : {fn, static_cast<std::uint8_t>(fn + 40)}) {
      auto in = random_bytes(in_size, seed + fn);
      std::vector<std::uint8_t> out(out_size);
      std::vector<Region> regions;
      if (inout) {
        regions = {Region::inout(in).stream()};
      } else {
        regions = {Region::input(in).stream(), Region::output(out)};
      }
      host::Session s(opts(f, arg, m++), regions);
      REQUIRE(s.call(f).return_code == 0);
      results.push_back(inout ? in : out);
    }
    CHECK(results[0] == results[1]);
    return results[0];
  };
  const auto add1 = both(1, 0, 40 * 1024 + 7, 0, true);
  CHECK(add1[0] == static_cast<std::uint8_t>(random_bytes(1, seed + 1)[0] + 1));
  both(2, 0, 9000, 0, true);
  both(5, 0, 100 * 1024 + 12, 8, false);
  both(6, 0, 70 * 1024 + 3, 4, false);
  both(7, std::uint64_t{96} << 32 | 40, 40 * 500, 96 * 500, false);  // 500 blocks of 40 in 96
  CHECK(NaaSim::stat_in(sim.stats_text(), "handler.segv") == 0);
}

TEST_CASE("spin: naa-sim runs the built-in handlers in C by default, with the oracles' bytes") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  struct Call {
    std::uint8_t fn;
    std::uint64_t arg;
    std::size_t in_size, out_size;
  };
  const Call calls[] = {{1, 0, 20 * 1024 + 7, 0},
                        {2, 0, 9000, 0},
                        {5, 0, 30 * 1024 + 12, 8},
                        {6, 0, 20 * 1024 + 3, 4},
                        {7, std::uint64_t{96} << 32 | 40, 40 * 200, 96 * 200}};
  // Each call's output (add1/add2: the streamed region), by naa-sim with `args`; `too_small`
  // gets the return code of a crc32 whose 5 packets do not fit a state of 2 slots.
  const auto run = [&](const std::vector<std::string>& args, std::string& stats,
                       std::uint32_t& too_small) {
    NaaSim sim(sim_ip(), args);
    REQUIRE(sim.ready());
    std::vector<std::vector<std::uint8_t>> results;
    int m = 1;
    {
      auto in = random_bytes(5 * 4096, seed);
      std::vector<std::uint8_t> out(4);
      auto o = opts(6, 0, m++);
      o.stream_state_bytes = 8 + 2 * 16;
      host::Session s(o, {Region::input(in).stream(), Region::output(out)});
      too_small = s.call(6).return_code;
    }
    for (const Call& c : calls) {
      INFO("function " << int{c.fn});
      auto in = random_bytes(c.in_size, seed + c.fn);
      std::vector<std::uint8_t> out(c.out_size);
      std::vector<Region> regions = {Region::inout(in).stream()};
      if (c.out_size != 0) regions = {Region::input(in).stream(), Region::output(out)};
      host::Session s(opts(c.fn, c.arg, m++), regions);
      REQUIRE(s.call(c.fn).return_code == 0);
      results.push_back(c.out_size == 0 ? in : out);
    }
    stats = sim.stats_text();
    return results;
  };
  std::string c_stats, cpp_stats;
  std::uint32_t c_small = 0, cpp_small = 0;
  const auto in_c = run({"--hpus", "4"}, c_stats, c_small);
  const auto in_cpp = run({"--hpus", "4", "--builtin-handlers=cpp"}, cpp_stats, cpp_small);
  CHECK(in_c == in_cpp);
  // The one difference (docs/spin.md): the C crc32 fails the call (0x7F) when its state runs
  // out of slots; the C++ oracle refuses the state before the first packet (0x7D).
  CHECK(c_small == 0x7F);
  CHECK(cpp_small == 0x7D);
  INFO(c_stats);
  for (const Call& c : calls) {
    const std::string key = "hpu.fn" + std::to_string(c.fn);
    CHECK(NaaSim::stat_in(c_stats, key + ".invocations") > 0);
    CHECK(NaaSim::stat_in(c_stats, key + ".traps") == 0);
    CHECK(NaaSim::stat_in(cpp_stats, key + ".invocations") == 0);  // the C++ classes ran there
  }
  CHECK(NaaSim::stat_in(c_stats, "handler.segv") == 0);
}

TEST_CASE("spin: a fault, the watchdog, FAIL and ECALL end the call with their return codes") {
  struct Case {
    const char* image;
    std::uint8_t fn;
    std::uint32_t rc;
    const char* counter;
  };
  // PROTOCOL.md 5.2 / docs/protocol.md "Streaming regions": 0x7E SEGV, 0x02 timeout, 0x7F FAIL.
  const Case cases[] = {{SPIN_SEGV_ELF, 21, 0x7E, "handler.segv"},
                        {SPIN_LOOP_ELF, 22, 0x02, "handler.timeouts"},
                        {SPIN_FAIL_ELF, 23, 0x7F, "handler.failed"},
                        {SPIN_ECALL_ELF, 24, 0x7F, "handler.failed"},
                        {SPIN_HEADER_SEGV_ELF, 34, 0x7E, "handler.segv"}};
  NaaSim sim(sim_ip(), {"--handler", SPIN_SEGV_ELF, "--handler", SPIN_LOOP_ELF, "--handler",
                        SPIN_FAIL_ELF, "--handler", SPIN_ECALL_ELF, "--handler",
                        SPIN_HEADER_SEGV_ELF, "--hpu-max-cycles", "20000"});
  REQUIRE(sim.ready());
  int m = 1;
  for (const Case& c : cases) {
    INFO(c.image);
    auto io = random_bytes(4096, c.fn);
    host::Session s(opts(c.fn, 0, m++), {Region::inout(io).stream()});
    CHECK(s.call(c.fn).return_code == c.rc);
    CHECK(NaaSim::stat_in(sim.stats_text(), c.counter) >= 1);
  }
  const std::string st = sim.stats_text();
  CHECK(NaaSim::stat_in(st, "hpu.fn21.traps") >= 1);
  CHECK(NaaSim::stat_in(st, "hpu.fn24.traps") >= 1);
  CHECK(NaaSim::stat_in(st, "hpu.fn34.traps") == 1);        // the header handler, once
  CHECK(NaaSim::stat_in(st, "hpu.fn34.invocations") == 1);  // no payload handler after it
}

TEST_CASE("spin: naa-sim refuses an image that cannot run, with the reason (exit 2)") {
  struct Case {
    std::vector<std::string> args;
    const char* why;
  };
  const Case cases[] = {
      {{"--handler", NAA_SIM_PATH}, "not ELF32"},  // an x86-64 program
      {{"--handler", "/nonexistent.elf"}, "cannot read it"},
      {{"--handler", SPIN_NOT_A_HANDLER_ELF}, "naa_spin_info"},
      {{"--handler", SPIN_XOR_COUNT_FN1_ELF}, "function code 1 is a built-in handler's"},
      {{"--handler", SPIN_XOR_COUNT_ELF, "--handler", SPIN_XOR_COUNT_ELF}, "is taken by"},
      {{"--hpu=fast"}, "--hpu must be model, rtl or lockstep"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--listen", sim_ip()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = naa::testbench::run_program(NAA_SIM_PATH, args, {}, 30s);
    INFO(c.why << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.why) != std::string::npos);
  }
}
