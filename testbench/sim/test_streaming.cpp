// Streaming handlers (issue 17, docs/sim/handler_engine.md): naa-sim driven by TestPeer with the
// MRSP STREAM flag (docs/protocol.md "Streaming regions"). Every test asserts handler counters,
// result bytes and return codes; timing claims are checked in simulated time (naa-sim's pcap and
// its handler.* timestamps), never on the wall clock.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <numeric>

#include "naa/protocol/crc32.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/opcode.hpp"
#include "peer.hpp"
#include "sim_tests.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;

namespace {

constexpr std::uint8_t kStreamIn = p::kMrspFlagInput | p::kMrspFlagStream;
constexpr std::uint8_t kStreamInOut = kStreamIn | p::kMrspFlagOutput;

// The stream descriptor (docs/protocol.md): INTERNAL|STREAM, host rkey = function code, host VA =
// the handler's argument, size = HPU state bytes.
p::MrspRequestEntry descriptor(std::uint8_t fn, std::uint64_t naa_addr, std::uint32_t state,
                               std::uint64_t arg = 0) {
  return p::MrspRequestEntry{p::kMrspFlagInternal | p::kMrspFlagStream, naa_addr, arg, fn, state};
}

TestPeer::ConnectOptions mtu4k() {
  TestPeer::ConnectOptions o;
  o.mtu_enum = 5;  // 4096
  o.host_mem_size = 1 << 20;
  return o;
}

// These tests cover the HandlerEngine's mechanics and its cost model with the C++ built-ins, the
// oracles of the C images naa-sim runs by default (docs/spin.md; testbench/spin compares the two).
std::vector<std::string> with_cpp_builtins(std::vector<std::string> args) {
  args.push_back("--builtin-handlers=cpp");
  return args;
}
struct CppRig : SimAndPeer {
  explicit CppRig(const std::vector<std::string>& args = {})
      : SimAndPeer(with_cpp_builtins(args)) {}
};

std::uint64_t stat(NaaSim& naa, const std::string& key) {
  return NaaSim::stat_in(naa.stats_text(), key);
}

// A call as naa-sim's capture saw it, in simulated time: the first input packet's arrival, the
// reply (the NAA's WRITE_WITH_IMM) leaving, and each result WRITE ONLY leaving.
struct CallTimes {
  std::uint64_t first_input = UINT64_MAX, reply = 0;
  std::vector<std::uint64_t> results;
  [[nodiscard]] std::uint64_t span() const { return reply - first_input; }
};

CallTimes call_times(const std::string& pcap) {
  CallTimes t;
  for (const auto& f : sim_frames(pcap, naa_address())) {
    const bool data = f.opcode >= p::opcode::kWriteFirst && f.opcode <= p::opcode::kWriteOnly;
    if (!f.from_naa && data) t.first_input = std::min(t.first_input, f.t_ns);
    if (f.from_naa &&
        (f.opcode == p::opcode::kWriteOnlyImm || f.opcode == p::opcode::kWriteLastImm)) {
      t.reply = std::max(t.reply, f.t_ns);
    }
    if (f.from_naa && f.opcode == p::opcode::kWriteOnly) t.results.push_back(f.t_ns);
  }
  return t;
}

struct Add1Run {
  CallTimes times;
  // The NAA's own simulated time for the call (sim.work_cycles: without the time that only
  // followed the peer's wall clock, docs/sim/timing.md), in ns at 250 MHz.
  double work_ns = 0;
  std::uint64_t memory_bytes = 0;
  std::vector<std::uint8_t> result;
};

// add1 over one in/out region of `size` bytes at 4 KiB MTU, stored (stream = false) or streaming.
Add1Run add1_run(bool stream, const std::vector<std::string>& args = {},
                 std::uint32_t size = 1 << 20) {
  ScratchPcap pcap;
  // A long stream hold (net_port.md) so a loaded machine cannot open gaps in simulated time.
  std::vector<std::string> a = {"--pcap", pcap.path, "--idle-timeout-ms", "0"};
  a.insert(a.end(), {"--link-hold-us", "2000000"});
  a.insert(a.end(), args.begin(), args.end());
  CppRig rig(a);
  auto& [naa, peer] = rig;
  Connection c;
  auto o = mtu4k();
  o.host_mem_size = size;
  REQUIRE(peer.connect(c, o) == 0);
  std::vector<p::MrspRequestEntry> e = {
      entry(stream ? kStreamInOut : p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000000, size, c)};
  if (stream) e.push_back(descriptor(1, 0x100000, 64));
  const auto regs = peer.mrsp(c, e);
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const auto before = naa.stats_text();
  const auto imm = peer.call(c, *regs, {{0, pattern(size, 42)}}, 1);
  REQUIRE(imm);
  REQUIRE(*imm == 0);
  const auto after = naa.stats_text();
  auto d = [&](const char* k) { return NaaSim::stat_in(after, k) - NaaSim::stat_in(before, k); };
  Add1Run r;
  r.memory_bytes = d("memory.bytes_read") + d("memory.bytes_written");
  r.work_ns = static_cast<double>(d("sim.work_cycles")) * 1e3 /
              static_cast<double>(NaaSim::stat_in(after, "sim.clock_mhz"));
  r.result = c.host_mem;
  peer.disconnect(c);
  REQUIRE(naa.stop() == 0);
  r.times = call_times(pcap.path);
  return r;
}

}  // namespace

TEST_CASE("streaming add1: 256 KiB at 4 KiB MTU runs 1 header 64 payload 1 completion handler",
          "[sim][streaming]") {
  ScratchPcap pcap;
  CppRig rig({"--pcap", pcap.path});
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c, mtu4k()) == 0);
  REQUIRE(c.mtu == 4096);
  const auto regs =
      peer.mrsp(c, {entry(kStreamInOut, 0x100000, 256 * 1024, c), descriptor(1, 0x200000, 64)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  REQUIRE(regs->regions.size() == 1);  // the descriptor is internal: not advertised
  const auto in = pattern(256 * 1024, 11);
  const auto imm = peer.call(c, *regs, {{0, in}}, 1);
  REQUIRE(imm);
  CHECK(*imm == 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 1));
  // The NAA's region holds input + 1, as after the stored kernel (read back over RDMA READ).
  (void)peer.post_read(c, 0x100000 + 8192, regs->regions[0].rkey, 4096);
  REQUIRE(peer.wait_for([&] { return c.read_data.size() >= 4096; }));
  for (std::size_t i = 0; i < 4096; ++i)
    REQUIRE(c.read_data[i] == static_cast<std::uint8_t>(in[8192 + i] + 1));

  CHECK(stat(naa, "handler.headers") == 1);
  CHECK(stat(naa, "handler.payloads") == 64);
  CHECK(stat(naa, "handler.completions") == 1);
  CHECK(stat(naa, "handler.replies") == 64);
  CHECK(stat(naa, "handler.duplicates") == 0);
  CHECK(stat(naa, "kernel.dispatches") == 0);  // the stored path never ran
  if (const char* extra = std::getenv("NAA_SIM_EXTRA_ARGS");
      extra != nullptr && std::string(extra).find("--kernels=rtl") != std::string::npos) {
    // rtl mode: every payload handler computed through the Verilated add_const.
    CHECK(stat(naa, "rtl.kernels.cycles") > 0);
  }
  // The first payload handler starts within 2 cycles (8 ns at 250 MHz) of the Transport handing
  // its packet over when an HPU is free.
  const auto handover = stat(naa, "handler.first_payload_handover_ps");
  const auto start = stat(naa, "handler.first_payload_start_ps");
  CHECK(start >= handover);
  CHECK(start - handover <= 8000);
  CHECK(stat(naa, "handler.max_idle_start_delay_cycles") <= 2);
  peer.disconnect(c);
  REQUIRE(naa.stop() == 0);

  // naa-sim's capture (simulated time): the first result WRITE leaves before the last input
  // packet arrives.
  const auto frames = sim_frames(pcap.path, naa_address());
  std::uint64_t first_result = UINT64_MAX, last_input = 0;
  for (const auto& f : frames) {
    const bool write = f.opcode >= p::opcode::kWriteFirst && f.opcode <= p::opcode::kWriteOnly;
    if (f.from_naa && f.opcode == p::opcode::kWriteOnly) {
      first_result = std::min(first_result, f.t_ns);
    }
    if (!f.from_naa && write) last_input = std::max(last_input, f.t_ns);
  }
  INFO("first result at " << first_result << " ns, last input at " << last_input << " ns");
  CHECK(first_result < last_input);
}

TEST_CASE("streaming: duplicated packets never re-run a handler", "[sim][streaming]") {
  CppRig rig({"--fault-rx", "dup=0.3", "--seed", "17"});
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c, mtu4k()) == 0);
  const auto regs =
      peer.mrsp(c, {entry(kStreamInOut, 0x100000, 256 * 1024, c), descriptor(2, 0x200000, 64)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const auto in = pattern(256 * 1024, 5);
  const auto imm = peer.call(c, *regs, {{0, in}}, 2);
  REQUIRE(imm);
  CHECK(*imm == 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 2));
  CHECK(stat(naa, "net_port.fault_rx.dup") > 0);
  CHECK(stat(naa, "handler.headers") == 1);
  CHECK(stat(naa, "handler.payloads") == 64);
  CHECK(stat(naa, "handler.completions") == 1);
  peer.disconnect(c);
}

TEST_CASE("streaming: a call without STREAM regions runs store-and-forward as before",
          "[sim][streaming]") {
  CppRig rig;
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c, mtu4k()) == 0);
  // A descriptor alone does not stream: no region is marked.
  const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x100000, 65536, c),
                                  descriptor(1, 0x200000, 64)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const auto in = pattern(65536, 9);
  const auto imm = peer.call(c, *regs, {{0, in}}, 1);
  REQUIRE(imm);
  CHECK(*imm == 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 1));
  CHECK(stat(naa, "kernel.dispatches") == 1);
  CHECK(stat(naa, "handler.payloads") == 0);
  CHECK(stat(naa, "handler.headers") == 0);
  CHECK(stat(naa, "handler.completions") == 0);
  CHECK(stat(naa, "handler.held") == 0);
  // The stored path's memory traffic: the input written, loaded by the kernel, stored back (the
  // write-back is sent from the kernel's buffer).
  CHECK(stat(naa, "memory.bytes_written") == 2 * 65536);
  CHECK(stat(naa, "memory.bytes_read") == 65536);
  peer.disconnect(c);
}

TEST_CASE("streaming: new regions on the same connection turn streaming off and on again",
          "[sim][streaming]") {
  // The HandlerEngine keeps whether a connection streams until its regions change (issue 31):
  // each 0x01 request that replaces them must be seen by the next call.
  CppRig rig;
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c, mtu4k()) == 0);
  const auto call_add1 = [&](const TestPeer::MrspResult& regs, std::uint8_t seed) {
    const auto in = pattern(65536, seed);
    const auto imm = peer.call(c, regs, {{0, in}}, 1);
    REQUIRE(imm);
    CHECK(*imm == 0);
    for (std::size_t i = 0; i < in.size(); ++i)
      REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 1));
  };
  const auto streamed = [&] {
    return peer.mrsp(c, {entry(kStreamInOut, 0x100000, 65536, c), descriptor(1, 0x200000, 64)});
  };
  const auto stored = [&] {
    return peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x100000, 65536, c),
                         descriptor(1, 0x200000, 64)});
  };
  auto regs = streamed();
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  call_add1(*regs, 3);
  CHECK(stat(naa, "handler.completions") == 1);
  CHECK(stat(naa, "kernel.dispatches") == 0);
  regs = stored();  // the same connection, no STREAM region: store-and-forward
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  call_add1(*regs, 4);
  CHECK(stat(naa, "handler.completions") == 1);
  CHECK(stat(naa, "handler.payloads") == 16);
  CHECK(stat(naa, "kernel.dispatches") == 1);
  regs = streamed();  // streaming again
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  call_add1(*regs, 5);
  CHECK(stat(naa, "handler.completions") == 2);
  CHECK(stat(naa, "handler.payloads") == 32);
  CHECK(stat(naa, "kernel.dispatches") == 1);
  peer.disconnect(c);
}

TEST_CASE("streaming sum_u64 and crc32: partial results combined by the completion handler",
          "[sim][streaming]") {
  CppRig rig({"--hpus", "4"});
  auto& [naa, peer] = rig;
  const auto in = pattern(100 * 1024 + 12, 3);  // 26 packets, the last one short
  std::uint64_t want_sum = 0;
  for (std::size_t i = 0; i + 4 <= in.size(); i += 4)
    want_sum += p::load_le32(in.data() + i);
  const std::uint32_t want_crc = p::crc32(in);

  Connection s;
  REQUIRE(peer.connect(s, mtu4k()) == 0);
  auto regs = peer.mrsp(
      s, {entry(kStreamIn, 0x100000, 128 * 1024, s),
          entry(p::kMrspFlagOutput, 0x140000, 8, s, 0x80000), descriptor(5, 0x200000, 64)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  auto imm = peer.call(s, *regs, {{0, in}}, 5);
  REQUIRE(imm);
  CHECK(*imm == 0);
  CHECK((p::load_le32(s.host_mem.data() + 0x80000) |
         std::uint64_t{p::load_le32(s.host_mem.data() + 0x80004)} << 32) == want_sum);
  const char* extra = std::getenv("NAA_SIM_EXTRA_ARGS");
  const bool rtl =
      extra != nullptr && std::string(extra).find("--kernels=rtl") != std::string::npos;
  // rtl mode: every payload handler summed its packet through the Verilated sum_u64.
  if (rtl) CHECK(stat(naa, "rtl.kernels.runs") == 26);

  Connection k;
  REQUIRE(peer.connect(k, mtu4k()) == 0);
  regs = peer.mrsp(
      k, {entry(kStreamIn, 0x300000, 128 * 1024, k),
          entry(p::kMrspFlagOutput, 0x340000, 4, k, 0x80000), descriptor(6, 0x380000, 1024)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  imm = peer.call(k, *regs, {{0, in}}, 6);
  REQUIRE(imm);
  CHECK(*imm == 0);
  CHECK(p::load_le32(k.host_mem.data() + 0x80000) == want_crc);
  CHECK(stat(naa, "handler.payloads") == 2 * 26);
  CHECK(stat(naa, "handler.completions") == 2);
  if (rtl) CHECK(stat(naa, "rtl.kernels.runs") == 2 * 26);  // and crc32's through rtl/crc32
  peer.disconnect(s);
  peer.disconnect(k);
}

TEST_CASE("streaming unpack_strided deposits blocks at their stride - outside a region fails 0x7E",
          "[sim][streaming]") {
  CppRig rig;
  auto& [naa, peer] = rig;
  // Seed 5.2: stride 2.5 KiB, blocksize 1.5 KiB; 8 blocks = 12 KiB of message.
  constexpr std::uint64_t kStride = 2560, kBlock = 1536, kCount = 8;
  const auto in = pattern(kBlock * kCount, 21);
  Connection c;
  REQUIRE(peer.connect(c, mtu4k()) == 0);
  auto regs = peer.mrsp(c, {entry(kStreamIn, 0x100000, kBlock * kCount, c),
                            entry(p::kMrspFlagOutput, 0x140000, kStride * kCount, c, 0x80000),
                            descriptor(7, 0x200000, 64, kStride << 32 | kBlock)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  auto imm = peer.call(c, *regs, {{0, in}}, 7);
  REQUIRE(imm);
  CHECK(*imm == 0);
  for (std::uint64_t b = 0; b < kCount; ++b) {
    for (std::uint64_t i = 0; i < kStride; ++i) {
      const std::uint8_t got = c.host_mem[0x80000 + b * kStride + i];
      REQUIRE(got == (i < kBlock ? in[b * kBlock + i] : 0));  // the gaps stay zero
    }
  }

  // The same message into a result region one stride too short: the last block would land
  // outside it. The call fails with 0x7E and nothing is written: not the host's memory, not the
  // region next to it on the NAA.
  Connection bad;
  REQUIRE(peer.connect(bad, mtu4k()) == 0);
  std::fill(bad.host_mem.begin(), bad.host_mem.end(), std::uint8_t{0xEE});
  const std::uint32_t short_size = kStride * (kCount - 1);
  regs = peer.mrsp(bad, {entry(kStreamIn, 0x400000, kBlock * kCount, bad),
                         entry(p::kMrspFlagOutput, 0x440000, short_size, bad, 0x80000),
                         entry(p::kMrspFlagInput, 0x440000 + short_size, 4096, bad),
                         descriptor(7, 0x480000, 64, kStride << 32 | kBlock)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  imm = peer.call(bad, *regs, {{0, in}}, 7);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0x7E);
  CHECK(std::all_of(bad.host_mem.begin(), bad.host_mem.end(),
                    [](std::uint8_t b) { return b == 0xEE; }));
  (void)peer.post_read(bad, 0x440000 + short_size, regs->regions[2].rkey, 4096);
  REQUIRE(peer.wait_for([&] { return bad.read_data.size() >= 4096; }));
  CHECK(std::all_of(bad.read_data.begin(), bad.read_data.begin() + 4096,
                    [](std::uint8_t b) { return b == 0; }));
  CHECK(stat(naa, "handler.segv") >= 1);
  peer.disconnect(c);
  peer.disconnect(bad);
}

TEST_CASE("streaming: a call of another function than the descriptor's answers 0x04",
          "[sim][streaming]") {
  CppRig rig;
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c, mtu4k()) == 0);
  const auto regs =
      peer.mrsp(c, {entry(kStreamInOut, 0x100000, 8192, c), descriptor(1, 0x200000, 64)});
  REQUIRE(regs);
  const auto imm = peer.call(c, *regs, {{0, std::vector<std::uint8_t>(64, 1)}}, 2);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0x04);
  CHECK(stat(naa, "handler.mismatched_function") == 1);
  // The connection stays usable: the descriptor's function runs.
  const auto ok = peer.call(c, *regs, {{0, std::vector<std::uint8_t>(64, 1)}}, 1);
  REQUIRE(ok);
  CHECK(*ok == 0);
  CHECK(c.host_mem[63] == 2);
  peer.disconnect(c);
}

TEST_CASE("streaming limits: HPU memory 0x7D and the watchdog 0x02", "[sim][streaming]") {
  // Every invocation costs at least its 4 cycles of overhead (model and RTL alike): over 3.
  CppRig rig({"--hpu-mem", "16K", "--hpu-max-cycles", "3"});
  auto& [naa, peer] = rig;
  const auto in = pattern(8192, 1);
  Connection c;
  REQUIRE(peer.connect(c, mtu4k()) == 0);
  std::fill(c.host_mem.begin(), c.host_mem.end(), std::uint8_t{0xEE});
  auto regs = peer.mrsp(c, {entry(kStreamInOut, 0x100000, 8192, c), descriptor(1, 0x200000, 64)});
  REQUIRE(regs);
  auto imm = peer.call(c, *regs, {{0, in}}, 1);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0x02);
  CHECK(stat(naa, "handler.timeouts") >= 1);
  // A stopped handler's results are discarded: nothing reached the host.
  CHECK(std::all_of(c.host_mem.begin(), c.host_mem.begin() + 8192,
                    [](std::uint8_t b) { return b == 0xEE; }));

  Connection m;
  REQUIRE(peer.connect(m, mtu4k()) == 0);
  regs = peer.mrsp(
      m, {entry(kStreamIn, 0x300000, 8192, m), entry(p::kMrspFlagOutput, 0x340000, 8, m, 0x80000),
          descriptor(5, 0x380000, 64 * 1024)});  // state > --hpu-mem 16K
  REQUIRE(regs);
  imm = peer.call(m, *regs, {{0, in}}, 5);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0x7D);
  CHECK(stat(naa, "handler.memory_exceeded") == 1);
  peer.disconnect(c);
  peer.disconnect(m);
}

TEST_CASE(
    "streaming add1 on 1 MiB: at most 0.6x the stored time, same bytes, half the memory traffic",
    "[sim][streaming][figures]") {
  const Add1Run stored = add1_run(false);
  const Add1Run streamed = add1_run(true);
  REQUIRE(stored.result.size() == streamed.result.size());
  CHECK(stored.result == streamed.result);
  const auto in = pattern(1 << 20, 42);
  CHECK(streamed.result[12345] == static_cast<std::uint8_t>(in[12345] + 1));
  std::cout << "add1 1 MiB stored: " << stored.work_ns << " ns NAA time (capture: first input to "
            << "reply " << stored.times.span() << " ns), memory " << stored.memory_bytes
            << " B; streaming: " << streamed.work_ns << " ns (capture " << streamed.times.span()
            << " ns), memory " << streamed.memory_bytes << " B\n";
  CHECK(streamed.work_ns <= 0.6 * stored.work_ns);
  CHECK(streamed.memory_bytes * 2 <= stored.memory_bytes);
}

// sum_u64 streaming over `size` bytes with `hpus` HPUs: the NAA's simulated time for the call
// (the result is 8 bytes, so only the handlers and the input link set the pace).
double sum_work_ns(std::uint32_t hpus, std::uint32_t size, double* cycles_per_packet) {
  // A long stream hold (wall time naa-sim waits for a stream's next datagram, net_port.md) so
  // a loaded machine cannot open gaps in simulated time. The handlers' C++ cost model at
  // --hpu-width (--kernels=model): sum_u64 has RTL, and in rtl mode each packet runs through the
  // 64-byte block instead; sim_streaming_rtl's --kernels=rtl comes later and wins.
  CppRig rig({"--idle-timeout-ms", "0", "--hpus", std::to_string(hpus), "--hpu-mem", "8M",
              "--link-hold-us", "2000000", "--kernels=model"});
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c, mtu4k()) == 0);
  const auto regs =
      peer.mrsp(c, {entry(kStreamIn, 0x1000000, size, c), entry(p::kMrspFlagOutput, 0x100000, 8, c),
                    descriptor(5, 0x200000, 64)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const auto in = pattern(size, 7);
  std::uint64_t want = 0;
  for (std::size_t i = 0; i + 4 <= in.size(); i += 4)
    want += p::load_le32(in.data() + i);
  const auto before = naa.stats_text();
  const auto imm = peer.call(c, *regs, {{0, in}}, 5);
  REQUIRE(imm);
  REQUIRE(*imm == 0);
  const auto after = naa.stats_text();
  CHECK((p::load_le32(c.host_mem.data()) | std::uint64_t{p::load_le32(c.host_mem.data() + 4)}
                                               << 32) == want);
  CHECK(NaaSim::stat_in(after, "handler.payloads") == size / 4096);
  CHECK(NaaSim::stat_in(after, "handler.rnr_naks") == 0);
  // The handler's cost per packet as it ran (the model's, or the RTL kernel's count in rtl mode),
  // plus the dispatch cycle; the completion handler's few cycles are negligible.
  *cycles_per_packet = static_cast<double>(NaaSim::stat_in(after, "handler.compute_cycles")) /
                           static_cast<double>(size / 4096) +
                       1;
  peer.disconnect(c);
  return static_cast<double>(NaaSim::stat_in(after, "sim.work_cycles") -
                             NaaSim::stat_in(before, "sim.work_cycles")) *
         1e3 / static_cast<double>(NaaSim::stat_in(after, "sim.clock_mhz"));
}

TEST_CASE(
    "streaming throughput vs --hpus reaches line rate at ceil(handler cost / packet interval)",
    "[sim][streaming][figures]") {
  // The packet interval at 100 Gb/s: a 4 KiB WRITE MIDDLE is 4178 wire bytes (net_port.md).
  const double interval_ns = 4178 * 8 / 100.0;
  const double line_gbps = 4096 * 8 / interval_ns;
  std::vector<double> gbps(9, 0.0);
  double cost_cycles = 0;
  constexpr std::uint32_t kBytes = 4 << 20;  // 1024 packets: the pipeline fill is < 1 %
  for (std::uint32_t k = 1; k <= 8; ++k) {
    gbps[k] = kBytes * 8.0 / sum_work_ns(k, kBytes, &cost_cycles);
    std::cout << "hpus " << k << ": " << gbps[k] << " Gb/s of input (" << gbps[k] / line_gbps
              << " of line rate)\n";
  }
  // sum_u64 at --hpu-width 8 on 4 KiB in the model: 4 + (512 + 1) cycles + 1 dispatch = 518. In
  // rtl mode (sim_streaming_rtl) each packet runs through rtl/sum_u64 at W = 64: 4 + 65 + 1 = 70
  // cycles, below the packet interval, so one HPU keeps up.
  const char* extra = std::getenv("NAA_SIM_EXTRA_ARGS");
  const bool rtl =
      extra != nullptr && std::string(extra).find("--kernels=rtl") != std::string::npos;
  const auto need = static_cast<std::uint32_t>(std::ceil(cost_cycles * 4.0 / interval_ns));
  std::cout << "handler cost " << cost_cycles << " cycles, packet interval " << interval_ns / 4.0
            << " cycles: line rate needs " << need << " HPUs\n";
  REQUIRE(need >= (rtl ? 1U : 2U));
  REQUIRE(need <= 8);
  for (std::uint32_t k = 1; k <= 8; ++k) {
    INFO("hpus " << k);
    if (k >= need) {
      CHECK(gbps[k] >= 0.98 * line_gbps);
    } else {
      CHECK(gbps[k] < 0.98 * line_gbps);
      // Below the knee each HPU adds its share: k packets per handler cost.
      CHECK(gbps[k] == Approx(k * 4096 * 8 / (cost_cycles * 4.0)).epsilon(0.03));
    }
  }
}
