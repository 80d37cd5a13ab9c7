// naa-sim integration tests (issue 3): calls, regions, connections, the capture, figures and the
// watchdog (the error paths are in test_naa_sim_errors.cpp). Each TEST_CASE starts naa-sim on its
// own loopback address and drives it with TestPeer. Every test asserts outcomes: bytes, decoded
// fields, codes, counters.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>

#include "naa/protocol/crc32.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/pcap.hpp"
#include "peer.hpp"
#include "seed.hpp"
#include "sim_tests.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;

TEST_CASE("connect - MRSP - add1 call - disconnect", "[sim]") {
  NaaSim naa(naa_address());
  REQUIRE(naa.ready());
  CHECK(naa.ready_line() == "naa-sim: listening on " + naa_address() + ":4791 (cm port 12345)");
  TestPeer peer(peer_address(), naa_address());
  Connection c;
  REQUIRE(peer.connect(c) == 0);
  CHECK(c.naa_qpn > 1);

  // One INPUT|OUTPUT region of 256 bytes at NAA address 0x1000, written back to host offset 0.
  const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000, 256, c)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  REQUIRE(regs->regions.size() == 1);
  CHECK(regs->regions[0].naa_address == 0x1000);
  CHECK(regs->regions[0].size == 256);
  CHECK((regs->regions[0].rkey & 0xFF) < 32);

  const auto in = pattern(256, 3);
  const auto imm = peer.call(c, *regs, {{0, in}}, 1, 0xABCDEF);
  REQUIRE(imm);
  // PROTOCOL.md 5.2: success is the immediate 0, not an echo of the function code.
  CHECK(*imm == 0);
  for (std::size_t i = 0; i < 256; ++i)
    REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 1));

  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
  const auto s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "kernel.dispatches") == 1);
  // The kernel computed on the region in the memory itself (issue 31), with no copy of it.
  CHECK(NaaSim::stat_in(s, "activity.kernel.private_copy_bytes") == 0);
  // The idle lane did not wake for the call's check: post_call made it (issue 31).
  CHECK(NaaSim::stat_in(s, "activity.kernel.accepted_at_post") == 1);
  // Without a capture the frames went to the socket without the wire's process (issue 31).
  CHECK(NaaSim::stat_in(s, "net_port.tx_wire_direct") > 0);
  CHECK(NaaSim::stat_in(s, "cm.connections") == 0);
  CHECK(NaaSim::stat_in(s, "rx_pipe.drops") == 0);
  CHECK(naa.stop() == 0);
}

TEST_CASE("MRSP with 1 3 and 32 regions then add1 over all of them", "[sim]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{32}}) {
    INFO("regions: " << n);
    Connection c;
    REQUIRE(peer.connect(c) == 0);
    std::vector<p::MrspRequestEntry> req;
    for (std::size_t i = 0; i < n; ++i) {
      req.push_back(
          entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x100000 + i * 0x1000, 128, c, i * 128));
    }
    const auto regs = peer.mrsp(c, req);
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    REQUIRE(regs->regions.size() == n);
    std::set<std::uint32_t> rkeys;
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(regs->regions[i].naa_address == 0x100000 + i * 0x1000);  // honoured verbatim
      CHECK(regs->regions[i].size == 128);
      rkeys.insert(regs->regions[i].rkey);
    }
    CHECK(rkeys.size() == n);
    std::vector<std::pair<std::size_t, std::vector<std::uint8_t>>> inputs;
    for (std::size_t i = 0; i < n; ++i)
      inputs.emplace_back(i, pattern(128, static_cast<std::uint8_t>(i)));
    const auto imm = peer.call(c, *regs, inputs, 1);
    REQUIRE(imm);
    CHECK(rc_of(*imm) == 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t b = 0; b < 128; ++b) {
        REQUIRE(c.host_mem[i * 128 + b] == static_cast<std::uint8_t>(inputs[i].second[b] + 1));
      }
    }
    peer.disconnect(c);
  }
  CHECK(peer.icrc_failures() == 0);
  CHECK(naa.stat("mr_table.entries_used") == 0);  // released with the connections
}

TEST_CASE("every built-in kernel: result bytes and return code", "[sim]") {
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  REQUIRE(peer.connect(c) == 0);
  // in0 @0x10000, in1 @0x20000 (inputs), out0 @0x30000 (output, host offset 0x2000), plus an
  // internal scratch region that must not disturb anything.
  const std::uint32_t n = 256;
  const std::vector<p::MrspRequestEntry> req = {
      entry(p::kMrspFlagInput, 0x10000, n, c, 0x0000),
      entry(p::kMrspFlagInput, 0x20000, n, c, 0x1000),
      entry(p::kMrspFlagOutput, 0x30000, n, c, 0x2000),
      entry(p::kMrspFlagInternal, 0x40000, 4096, c),
  };
  std::mt19937 rng(12345);
  std::vector<std::uint8_t> a(n), b(n);
  for (auto& x : a)
    x = static_cast<std::uint8_t>(rng());
  for (auto& x : b)
    x = static_cast<std::uint8_t>(rng());

  auto fresh = [&] {
    const auto regs = peer.mrsp(c, req);  // a new 0x01 replaces (and clears) the regions
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    REQUIRE(regs->regions.size() == 3);  // internal regions are not advertised
    std::fill(c.host_mem.begin(), c.host_mem.end(), 0xEE);
    return *regs;
  };
  auto out = [&](std::size_t i) { return c.host_mem[0x2000 + i]; };

  SECTION("add1 and add2") {
    for (const std::uint8_t fn : {std::uint8_t{1}, std::uint8_t{2}}) {
      const auto regs = fresh();
      const auto imm = peer.call(c, regs, {{0, a}, {1, b}}, fn);
      REQUIRE(imm);
      CHECK(*imm == p::encode_result_immediate(fn, 0));
      for (std::size_t i = 0; i < n; ++i)
        REQUIRE(out(i) == fn);  // zeros + fn
    }
  }
  SECTION("nop") {
    const auto regs = fresh();
    const auto imm = peer.call(c, regs, {{0, a}}, 3);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(3, 0));
    for (std::size_t i = 0; i < n; ++i)
      REQUIRE(out(i) == 0);  // the full region, as placed
  }
  SECTION("vadd_i32") {
    const auto regs = fresh();
    const auto imm = peer.call(c, regs, {{0, a}, {1, b}}, 4);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(4, 0));
    for (std::size_t i = 0; i < n; i += 4) {
      const std::uint32_t s = p::load_le32(&a[i]) + p::load_le32(&b[i]);
      REQUIRE(p::load_le32(&c.host_mem[0x2000 + i]) == s);
    }
  }
  SECTION("sum_u64") {
    const auto regs = fresh();
    const auto imm = peer.call(c, regs, {{0, a}}, 5, 7);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(5, 0));
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; i += 4)
      sum += p::load_le32(&a[i]);
    const std::uint64_t got = p::load_le32(&c.host_mem[0x2000]) |
                              (std::uint64_t{p::load_le32(&c.host_mem[0x2004])} << 32);
    CHECK(got == sum);
    CHECK(out(8) == 0xEE);  // result length 8: nothing beyond it was written
  }
  SECTION("crc32") {
    const auto regs = fresh();
    const auto imm = peer.call(c, regs, {{0, a}}, 6);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(6, 0));
    CHECK(p::load_le32(&c.host_mem[0x2000]) == p::crc32(a));
    CHECK(out(4) == 0xEE);  // result length 4
  }
  SECTION("invalid arguments: vadd_i32 without a second input") {
    const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput, 0x10000, n, c),
                                    entry(p::kMrspFlagOutput, 0x30000, n, c, 0x2000)});
    REQUIRE(regs);
    const auto imm = peer.call(c, *regs, {{0, a}}, 4);
    REQUIRE(imm);
    CHECK(rc_of(*imm) == 0x04);
    CHECK(fn_of(*imm) == 4);
  }
  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
}

TEST_CASE("4 connections from 2 hosts with interleaved calls", "[sim]") {
  NaaSim naa(naa_address());
  REQUIRE(naa.ready());
  TestPeer h1(peer_address(2), naa_address());
  TestPeer h2(peer_address(3), naa_address());
  std::array<Connection, 4> c;
  std::array<TestPeer*, 4> host = {&h1, &h2, &h1, &h2};
  // Interleave the CM exchanges too: all REQs out before any RTU matters.
  for (std::size_t i = 0; i < 4; ++i)
    REQUIRE(host[i]->connect(c[i]) == 0);
  std::array<TestPeer::MrspResult, 4> regs;
  for (std::size_t i = 0; i < 4; ++i) {
    auto r = host[i]->mrsp(
        c[i], {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x200000U * (i + 1), 2048, c[i])});
    REQUIRE(r);
    REQUIRE_FALSE(r->error);
    regs[i] = *r;
  }
  const std::array<std::uint8_t, 4> fns = {1, 2, 1, 2};
  for (int round = 0; round < 3; ++round) {
    std::array<std::vector<std::uint8_t>, 4> in;
    // Post every call's input and immediate first, then collect the results.
    for (std::size_t i = 0; i < 4; ++i) {
      in[i] = pattern(2048, static_cast<std::uint8_t>(static_cast<std::size_t>(round) * 16 + i));
      (void)host[i]->post_write(c[i], regs[i].regions[0].naa_address, regs[i].regions[0].rkey,
                                in[i]);
      (void)host[i]->post_write(c[i], regs[i].regions[0].naa_address, regs[i].regions[0].rkey, {},
                                p::encode_call_immediate(fns[i], static_cast<std::uint32_t>(i)),
                                true);
    }
    for (std::size_t i = 0; i < 4; ++i) {
      INFO("round " << round << " connection " << i);
      const auto done = host[i]->wait_completion(c[i]);
      REQUIRE(done);
      REQUIRE(done->imm);
      CHECK(*done->imm == p::encode_result_immediate(fns[i], 0));
      CHECK(done->solicited);
      for (std::size_t b = 0; b < 2048; ++b) {
        REQUIRE(c[i].host_mem[b] == static_cast<std::uint8_t>(in[i][b] + fns[i]));
      }
    }
  }
  for (std::size_t i = 0; i < 4; ++i)
    host[i]->disconnect(c[i]);
  CHECK(h1.icrc_failures() + h2.icrc_failures() == 0);
  CHECK(naa.stat("kernel.dispatches") == 12);
}

namespace {

std::string run_command(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    out.append(buf, n);
  const int st = ::pclose(f);
  if (status != nullptr) *status = st;
  return out;
}

bool have_tshark() {
  return std::system("command -v tshark >/dev/null 2>&1") == 0;
}

// STYLE.md: tshark needs rpcordma off and the InfiniBand payload heuristics off, or a legal
// 1-byte RDMA WRITE payload plus pad is read as another protocol and flagged malformed.
const char* kTsharkOptions =
    " --disable-protocol rpcordma --disable-heuristic eth_over_ib --disable-heuristic mellanox_eoib"
    " --disable-heuristic smcr_infiniband --disable-heuristic smb_direct_infiniband"
    " --disable-heuristic iser_infiniband --disable-heuristic sdp_infiniband"
    " --disable-heuristic fc_infiniband --disable-heuristic lnet_ib"
    " --disable-heuristic rpcrdma_infiniband --disable-heuristic nvme_rdma"
    " --disable-heuristic drbd_rdma";

// One full session: connect, MRSP (3 regions), a call per built-in kernel, a READ, disconnect.
void full_session(TestPeer& peer, std::uint32_t mtu_enum) {
  Connection c;
  TestPeer::ConnectOptions o;
  o.mtu_enum = static_cast<std::uint8_t>(mtu_enum);
  REQUIRE(peer.connect(c, o) == 0);
  const auto regs = peer.mrsp(c, {entry(p::kMrspFlagInput, 0x10000, 3000, c),
                                  entry(p::kMrspFlagInput, 0x20000, 3000, c, 0x1000),
                                  entry(p::kMrspFlagOutput, 0x30000, 3000, c, 0x2000)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  for (std::uint8_t fn = 1; fn <= 6; ++fn) {
    const auto imm = peer.call(c, *regs, {{0, pattern(3000, fn)}, {1, pattern(1, fn)}}, fn);
    REQUIRE(imm);
    CHECK(rc_of(*imm) == 0);
  }
  (void)peer.post_read(c, 0x10000, regs->regions[0].rkey, 3000);
  REQUIRE(peer.wait_for([&] { return c.read_data.size() >= 3000; }));
  peer.disconnect(c);
}

}  // namespace

TEST_CASE("the pcap of a full session verifies and decodes in tshark without errors", "[sim]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("naa-sim-pcap-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string pcap = (dir / "session.pcap").string();
  {
    SimAndPeer rig({"--pcap", pcap});
    auto& [naa, peer] = rig;
    full_session(peer, 3);  // MTU 1024: multi-packet messages both ways
    CHECK(peer.icrc_failures() == 0);
    // A capture records each frame at its end: the wire's process hands every frame on.
    CHECK(NaaSim::stat_in(naa.stats_text(), "net_port.tx_wire_direct") == 0);
    CHECK(naa.stop() == 0);  // flushes the pcap
  }
  // Our own check first: every frame's ICRC verifies with the IPv4 headers in the capture.
  p::PcapReader r;
  REQUIRE_FALSE(r.open(pcap));
  p::PcapRecord rec;
  std::size_t frames = 0;
  while (r.next(rec)) {
    const auto f = p::decode_roce_frame(rec.data);
    REQUIRE(f);
    CHECK(p::verify_icrc(f->headers, f->roce));
    ++frames;
  }
  CHECK(frames > 30);
  if (!have_tshark()) {
    const char* require = std::getenv("NAA_REQUIRE_TOOLS");
    if (require != nullptr && std::string(require) == "1")
      FAIL("tshark not found, and NAA_REQUIRE_TOOLS=1 (.ci/run) requires it");
    // CTest reports the test "Skipped" on this line if all else passed (naa_add_test).
    WARN("NAA_SKIP: tshark not found: the tshark decode check did not run");
    std::filesystem::remove_all(dir);
    return;
  }
  int st = 0;
  const std::string errors =
      run_command(std::string("tshark -r ") + pcap + kTsharkOptions +
                      " -Y '_ws.malformed || _ws.expert.severity == error' 2>/dev/null",
                  &st);
  CHECK(st == 0);
  CHECK(errors.empty());
  const std::string opcodes = run_command(std::string("tshark -r ") + pcap + kTsharkOptions +
                                          " -T fields -e infiniband.bth.opcode 2>/dev/null");
  CHECK(static_cast<std::size_t>(std::count(opcodes.begin(), opcodes.end(), '\n')) == frames);
  // CM, MRSP SENDs, data, ACKs and result traffic are all there.
  for (const char* op : {"100", "4", "10", "11", "17", "12", "13",
                         "15"}) {  // UD SEND, SEND, WRITE ONLY(_IMM), ACK, READ req/resp
    INFO("opcode " << op);
    CHECK(opcodes.find(std::string(op) + "\n") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("figures: cycles of a 64 B and a 1 MiB add1 call and cycles per wall second streaming",
          "[sim][figures]") {
  // Prints figures (STYLE.md: performance is reported, never asserted); asserts the results.
  SimAndPeer rig;
  auto& [naa, peer] = rig;
  Connection c;
  TestPeer::ConnectOptions o;
  o.mtu_enum = 5;  // 4096
  o.host_mem_size = 1 << 20;
  REQUIRE(peer.connect(c, o) == 0);
  auto measure = [&](std::uint32_t size) {
    const auto regs =
        peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x100000, size, c)});
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    const auto in = pattern(size, 77);
    const std::uint64_t before = naa.stat("sim.work_cycles");
    const auto imm = peer.call(c, *regs, {{0, in}}, 1, 0, Ms(30000));
    REQUIRE(imm);
    CHECK(rc_of(*imm) == 0);
    for (std::size_t i = 0; i < size; i += 997)
      REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 1));
    REQUIRE(peer.wait_for(
        [&] { return naa.stat("transport.messages_completed") > 0 && c.in_write == false; }));
    return naa.stat("sim.work_cycles") - before;
  };
  const std::uint64_t small = measure(64);
  const std::uint64_t big = measure(1 << 20);
  WARN("add1 64 B call: " << small
                          << " simulated cycles (input write to result write-back, incl. ACKs)");
  WARN("add1 1 MiB call: " << big << " simulated cycles");
  // Streaming: back-to-back 256 KiB add1 calls.
  const auto regs =
      peer.mrsp(c, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x100000, 256 << 10, c)});
  REQUIRE(regs);
  const auto in = pattern(256 << 10, 1);
  const std::uint64_t c0 = naa.stat("sim.work_cycles");
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    const auto imm = peer.call(c, *regs, {{0, in}}, 1, 0, Ms(30000));
    REQUIRE(imm);
    ++calls;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::uint64_t c1 = naa.stat("sim.work_cycles");
  WARN("streaming 256 KiB add1 calls: "
       << calls << " calls, " << (c1 - c0) << " simulated cycles in " << wall
       << " s wall = " << static_cast<std::uint64_t>(static_cast<double>(c1 - c0) / wall)
       << " simulated cycles per wall second");
  peer.disconnect(c);
  CHECK(peer.icrc_failures() == 0);
}

TEST_CASE("kernel watchdog: over --kernel-timeout-cycles the call answers 0x02 and stores nothing",
          "[sim]") {
  // add1 over 64 KiB costs about 1,024 cycles at W = 64 (model and RTL alike), 64 B a few.
  SimAndPeer rig({"--kernel-timeout-cycles", "100"});
  auto& [naa, peer] = rig;
  Connection big;
  REQUIRE(peer.connect(big) == 0);
  const auto regs =
      peer.mrsp(big, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x10000, 65536, big)});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  std::fill(big.host_mem.begin(), big.host_mem.end(), std::uint8_t{0xEE});
  const auto in = pattern(65536, 5);
  auto imm = peer.call(big, *regs, {{0, in}}, 1);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0x02);
  CHECK(fn_of(*imm) == 1);
  // Nothing was written back to the host, and the NAA's region still holds the input rather
  // than input + 1: the watchdog discarded the kernel's results.
  CHECK(std::all_of(big.host_mem.begin(), big.host_mem.end(),
                    [](std::uint8_t b) { return b == 0xEE; }));
  (void)peer.post_read(big, 0x10000, regs->regions[0].rkey, 256);
  REQUIRE(peer.wait_for([&] { return big.read_data.size() >= 256; }));
  CHECK(std::equal(big.read_data.begin(), big.read_data.begin() + 256, in.begin()));

  // A kernel within the limit runs normally.
  Connection small;
  REQUIRE(peer.connect(small) == 0);
  const auto r2 =
      peer.mrsp(small, {entry(p::kMrspFlagInput | p::kMrspFlagOutput, 0x40000, 64, small)});
  REQUIRE(r2);
  REQUIRE_FALSE(r2->error);
  const auto in2 = pattern(64, 9);
  imm = peer.call(small, *r2, {{0, in2}}, 1);
  REQUIRE(imm);
  CHECK(rc_of(*imm) == 0);
  CHECK(small.host_mem[7] == static_cast<std::uint8_t>(in2[7] + 1));
  const auto s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "kernel.timeouts") == 1);
  CHECK(NaaSim::stat_in(s, "kernel.dispatches") == 2);
  // The C++ model's cycles are known before it runs: over the limit it does not run, and within
  // it it runs in place. An RTL kernel's cycles are known only once it ran, so with the watchdog
  // on it runs on private copies of its regions (both calls).
  const char* extra = std::getenv("NAA_SIM_EXTRA_ARGS");
  const bool model_kernels =
      extra != nullptr && std::string(extra).find("--kernels=model") != std::string::npos;
  CHECK(NaaSim::stat_in(s, "activity.kernel.private_copy_bytes") ==
        (model_kernels ? 0U : 65536U + 64U));
  peer.disconnect(big);
  peer.disconnect(small);
}
