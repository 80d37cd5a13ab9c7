// naa-sim with its Verilated blocks (issue 5; docs/sim/rtl.md), on real RoCEv2 traffic:
// - lockstep catches the deliberately broken MR table (its bounds check lets an access end one
//   byte past its region) on an RDMA WRITE that is out of bounds by one byte: naa-sim stops at the
//   first divergence, at block mr_table, port rsp_status, with the model's and the RTL's answers,
//   the simulated time and the command to reproduce, exit status 3, and a waveform that ends at
//   the divergence;
// - the same traffic with the reference RTL in lockstep: no divergence, the NAK of the model;
// - a kernel through the RTL (add1, sum_u64): simulated time takes the RTL's cycle count;
// - RTL modes that cannot work are refused with a message.
// Addresses: the test's block (test_addresses.hpp).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtkwave/fstapi.h>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/immediate.hpp"
#include "own_case.hpp"
#include "peer.hpp"
#include "sim_tests.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A scratch directory for one test case, removed at the end.
struct Scratch {
  std::filesystem::path dir;
  explicit Scratch(const std::string& name)
      : dir(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
};

// One connection with one 256-byte INPUT region at 0x1000; an in-bounds WRITE of the whole
// region (ACKed: model and RTL agree), then a 16-byte WRITE that ends one byte past the region.
// Returns the ACK/NAK of the second write, if any arrived.
std::optional<AckRecord> write_one_byte_past(TestPeer& peer, Connection& c) {
  REQUIRE(peer.connect(c) == 0);
  const p::MrspRequestEntry e{p::kMrspFlagInput, 0x1000, c.host_va, c.host_rkey, 256};
  const auto regs = peer.mrsp(c, {e});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const std::uint32_t rkey = regs->regions.at(0).rkey;
  (void)peer.post_write(c, 0x1000, rkey, std::vector<std::uint8_t>(256, 0x5A));
  const auto ack = peer.wait_ack(c);
  REQUIRE(ack);
  REQUIRE(ack->syndrome == p::kAethAck);
  c.acks.clear();
  // [0x1000 + 241, 0x1000 + 257): one byte past the end of the region.
  (void)peer.post_write(c, 0x1000 + 241, rkey, std::vector<std::uint8_t>(16, 0xA5));
  return peer.wait_ack(c, Ms(2000));
}

// The value after "<label>:" on its own line of the report, trimmed.
std::string report_field(const std::string& report, const std::string& label) {
  const std::regex re("\\n  " + label + ": *([^\\n]*)");
  std::smatch m;
  return std::regex_search(report, m, re) ? m[1].str() : std::string();
}

}  // namespace

TEST_CASE("lockstep in naa-sim: an RDMA WRITE one byte out of bounds exposes the broken MR table",
          "[sim][rtl][lockstep]") {
  Scratch scratch("naa-sim-lockstep-broken");
  const auto trace = scratch.dir / "run.fst";
  const auto err = scratch.dir / "stderr.txt";
  NaaSim naa(naa_address(),
             {"--mr-table=lockstep", "--mr-table-variant=broken", "--trace", trace.string()},
             err.string());
  REQUIRE(naa.ready());
  naa.expect_exit(3);  // the end-of-test check requires the divergence's exit status
  TestPeer peer(peer_address(), naa_address());
  Connection c;
  (void)write_one_byte_past(peer, c);  // whether the NAK leaves before the stop is not defined

  // naa-sim stops by itself, with the distinct exit status of a divergence.
  const auto status = naa.wait_exit(Ms(10000));
  REQUIRE(status);
  CHECK(*status == 3);

  const std::string report = read_file(err);
  WARN("naa-sim stderr (the divergence report):\n" << report);
  // The summary line, as rtl::Divergence::to_string() words it (docs/rtl/README.md).
  const std::regex summary(
      "naa-sim: lockstep divergence at cycle ([0-9]+) in mr_table, port rsp_status: expected "
      "\\(model\\) bounds, actual \\(RTL\\) ok\\n");
  std::smatch m;
  REQUIRE(std::regex_search(report, m, summary));
  const std::uint64_t block_cycle = std::stoull(m[1].str());
  CHECK(block_cycle > 2);  // reset, programming and the first write's lookup came before
  CHECK(report_field(report, "block") == "mr_table (variant broken)");
  CHECK(report_field(report, "port") == "rsp_status");
  CHECK(report_field(report, "expected \\(model\\)") == "bounds");
  CHECK(report_field(report, "actual \\(RTL\\)") == "ok");
  CHECK(report_field(report, "block cycle").rfind(std::to_string(block_cycle) + " ", 0) == 0);
  // Simulated time and the NAA cycle at 250 MHz (4 ns).
  const std::regex time_re("([0-9]+) ns, NAA cycle ([0-9]+) \\(250 MHz\\)");
  const std::string time_field = report_field(report, "simulated time");
  std::smatch tm;
  REQUIRE(std::regex_match(time_field, tm, time_re));
  const std::uint64_t sim_ns = std::stoull(tm[1].str());
  CHECK(sim_ns > 0);
  const std::uint64_t naa_cycle = std::stoull(tm[2].str());
  CHECK(naa_cycle + 1 >= sim_ns / 4);  // rounding: simulated time need not be whole cycles
  CHECK(naa_cycle <= sim_ns / 4 + 1);
  // The command to reproduce: this very naa-sim command line.
  const std::string repro = report_field(report, "reproduce");
  CHECK(repro.find(NAA_SIM_BINARY) == 0);
  CHECK(repro.find("--listen " + naa_address()) != std::string::npos);
  CHECK(repro.find("--mr-table=lockstep") != std::string::npos);
  CHECK(repro.find("--mr-table-variant=broken") != std::string::npos);
  CHECK(repro.find("--trace " + trace.string()) != std::string::npos);

  // The waveform: readable by GTKWave's FST reader, with the MR table's ports, ending with the
  // divergent cycle (the rising edge half a period after the cycle's start), on the simulated
  // time axis (the result cycle follows the lookup issued at the reported simulated time).
  const std::regex wave_re(".* at ([0-9]+) ps \\(the file ends with it\\)");
  const std::string wave_field = report_field(report, "waveform");
  std::smatch wm;
  REQUIRE(std::regex_match(wave_field, wm, wave_re));
  const std::uint64_t divergence_ps = std::stoull(wm[1].str());
  CHECK(wave_field.rfind(trace.string(), 0) == 0);
  void* reader = fstReaderOpen(trace.string().c_str());
  REQUIRE(reader != nullptr);
  std::vector<std::string> vars;
  while (const fstHier* h = fstReaderIterateHier(reader)) {
    if (h->htyp == FST_HT_VAR) vars.emplace_back(h->u.var.name, h->u.var.name_length);
  }
  const std::uint64_t end_time = fstReaderGetEndTime(reader);
  fstReaderClose(reader);
  const auto has = [&vars](const std::string& name) {
    return std::any_of(vars.begin(), vars.end(), [&name](const std::string& v) {
      return v == name || v.rfind(name + " [", 0) == 0;
    });
  };
  CHECK(has("rsp_status_o"));
  CHECK(has("lk_va_i"));
  CHECK(end_time == divergence_ps + 2000);
  CHECK(divergence_ps / 1000 >= sim_ns);
  // Cycles clocked back to back (entry reads) run ahead of simulated time, never more than the
  // cycles clocked so far.
  CHECK(divergence_ps / 1000 <= sim_ns + 4 * block_cycle);

  // The runner's exit statistics were written as on any stop.
  const std::string s = naa.last_stats();
  CHECK(NaaSim::stat_in(s, "rtl.lockstep.divergences") == 1);
  CHECK(NaaSim::stat_in(s, "rtl.mr_table.lockstep") == 1);
}

// Issue 12 finding 2: a divergence on a test's last operation used to pass, because naa-sim's
// exit status was never looked at. The hidden case checks nothing itself; it fails only through
// the fixture's end-of-test check of the exit status (3 here, 0 expected). The visible one runs
// it in a child process and requires that it failed for that reason (issue 26 item 8:
// [!shouldfail] accepted any failure, naa-sim not starting included).
TEST_CASE("lockstep child: a divergence on the last operation", "[.][fixture-child]") {
  NaaSim naa(naa_address(), {"--mr-table=lockstep", "--mr-table-variant=broken"}, "/dev/null");
  REQUIRE(naa.ready());
  TestPeer peer(peer_address(), naa_address());
  Connection c;
  (void)write_one_byte_past(peer, c);
  // Let naa-sim reach the divergence (it exits by itself) before the fixture stops it; without
  // this the SIGTERM could win the race and the run would be a clean exit 0.
  (void)naa.wait_exit(Ms(20000));
}

TEST_CASE("lockstep in naa-sim: a divergence on the last operation of a test fails that test",
          "[sim][rtl][lockstep]") {
  const auto run = run_own_case("lockstep child: a divergence on the last operation");
  INFO(run.output);
  CHECK(run.exit_code == 1);  // one failed test case
  CHECK_THAT(run.output, Catch::Contains("naa-sim exited with status 3, expected exit status 0"));
  CHECK_THAT(run.output, !Catch::Contains("REQUIRE( naa.ready() )"));
}

TEST_CASE("lockstep in naa-sim: the reference MR table agrees with the model on the same traffic",
          "[sim][rtl][lockstep]") {
  NaaSim naa(naa_address(), {"--mr-table=lockstep", "--kernels=lockstep"});
  REQUIRE(naa.ready());
  TestPeer peer(peer_address(), naa_address());
  Connection c;
  const auto nak = write_one_byte_past(peer, c);
  REQUIRE(nak);
  CHECK(nak->syndrome == p::kNakRemoteAccessError);
  const std::string s = naa.stats_text();
  CHECK(NaaSim::stat_in(s, "rtl.lockstep.divergences") == 0);
  CHECK(NaaSim::stat_in(s, "rtl.mr_table.lookups") == 2);
  CHECK(NaaSim::stat_in(s, "mr_table.result.out_of_bounds") == 1);
  CHECK(NaaSim::stat_in(s, "mr_table.cycles") == 2);  // 1 cycle of latency per lookup
  CHECK(naa.stop() == 0);
}

TEST_CASE("RTL kernels in naa-sim: simulated time takes the cycles of the RTL run", "[sim][rtl]") {
  for (const char* mode : {"--kernels=rtl", "--kernels=lockstep"}) {
    INFO(mode);
    NaaSim naa(naa_address(), {mode});
    REQUIRE(naa.ready());
    TestPeer peer(peer_address(), naa_address());
    Connection c;
    REQUIRE(peer.connect(c) == 0);
    // add1 over 1000 bytes at W = 64: 16 beats (the last one 40 bytes) through add_const.
    const p::MrspRequestEntry e{p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000, c.host_va,
                                c.host_rkey, 1000};
    const auto regs = peer.mrsp(c, {e});
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    std::vector<std::uint8_t> in(1000);
    for (std::size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<std::uint8_t>(i * 13);
    const auto imm = peer.call(c, *regs, {{0, in}}, 1);
    REQUIRE(imm);
    CHECK((*imm >> 8) == 0);
    for (std::size_t i = 0; i < in.size(); ++i)
      REQUIRE(c.host_mem[i] == static_cast<std::uint8_t>(in[i] + 1));
    const std::string s = naa.stats_text();
    // The kernel shell (docs/rtl/kernel-shell.md): the ap_start cycle, 16 beats back to back
    // through a 1-cycle block, the ap_done cycle: 19 cycles, as the C++ cost model says.
    CHECK(NaaSim::stat_in(s, "rtl.kernels.cycles") == 19);
    CHECK(NaaSim::stat_in(s, "kernel.compute_cycles") == 19);
    CHECK(NaaSim::stat_in(s, "rtl.kernels.runs") == 1);
    CHECK(NaaSim::stat_in(s, "rtl.lockstep.divergences") == 0);
    peer.disconnect(c);
    CHECK(naa.stop() == 0);
  }
}

TEST_CASE("RTL kernels in naa-sim: sum_u64 runs through rtl/sum_u64 and takes its cycles",
          "[sim][rtl]") {
  for (const char* mode : {"--kernels=rtl", "--kernels=lockstep"}) {
    INFO(mode);
    NaaSim naa(naa_address(), {mode});
    REQUIRE(naa.ready());
    TestPeer peer(peer_address(), naa_address());
    Connection c;
    REQUIRE(peer.connect(c) == 0);
    // 1003 bytes (250 elements and 3 trailing bytes) at W = 64: 16 beats, the last one 43 bytes.
    constexpr std::uint32_t kLen = 1003;
    const p::MrspRequestEntry in_region{p::kMrspFlagInput, 0x1000, c.host_va, c.host_rkey, kLen};
    const p::MrspRequestEntry out_region{p::kMrspFlagOutput, 0x2000, c.host_va + 0x2000,
                                         c.host_rkey, 8};
    const auto regs = peer.mrsp(c, {in_region, out_region});
    REQUIRE(regs);
    REQUIRE_FALSE(regs->error);
    std::vector<std::uint8_t> in(kLen);
    for (std::size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<std::uint8_t>(0xF0 + i * 29);  // large elements: the sum carries
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i + 4 <= in.size(); i += 4)
      sum += p::load_le32(&in[i]);
    REQUIRE(sum > 0xFFFFFFFFULL);
    const auto imm = peer.call(c, *regs, {{0, in}}, 5);
    REQUIRE(imm);
    CHECK(*imm == p::encode_result_immediate(5, 0));
    const std::uint64_t got = p::load_le32(&c.host_mem[0x2000]) |
                              (std::uint64_t{p::load_le32(&c.host_mem[0x2004])} << 32);
    CHECK(got == sum);
    const std::string s = naa.stats_text();
    // The ap_start cycle, 16 beats back to back, 3 cycles of adder pipeline, the result beat on
    // dst, the ap_done cycle: 22 cycles, as the C++ cost model says.
    CHECK(NaaSim::stat_in(s, "rtl.kernels.cycles") == 22);
    CHECK(NaaSim::stat_in(s, "kernel.compute_cycles") == 22);
    CHECK(NaaSim::stat_in(s, "rtl.kernels.runs") == 1);
    CHECK(NaaSim::stat_in(s, "rtl.lockstep.divergences") == 0);
    peer.disconnect(c);
    CHECK(naa.stop() == 0);
  }
}

TEST_CASE("naa-sim refuses RTL modes that cannot work, with a message", "[sim][rtl]") {
  Scratch scratch("naa-sim-rtl-refusals");
  const auto err = scratch.dir / "stderr.txt";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"--kernels=rtl", "--width", "32"},
       "--kernels=rtl: add_const is Verilated at --width 1, 16, 64 only, not 32"},
      {{"--kernels=lockstep", "--width", "128"}, "at most 64 bytes per beat"},
      {{"--mr-table=model", "--kernels=model", "--rx-pipe=model", "--trace",
        (scratch.dir / "x.fst").string()},
       "--trace records the RTL blocks"},
      {{"--rx-pipe=rtl", "--width", "32"},
       "--rx-pipe=rtl: rx_parser and icrc_check are Verilated at --width 8, 16, 64"},
      {{"--rx-pipe=fast"}, "--rx-pipe must be model, rtl or lockstep"},
      {{"--mr-table=fast"}, "--mr-table must be model, rtl or lockstep"},
      {{"--mr-table=model", "--mr-table-variant=broken"},
       "--mr-table-variant needs --mr-table=rtl or lockstep"},
      {{"--trace-window", "8"}, "--trace-window and --trace-start need --trace FILE.fst"},
      {{"--trace", (scratch.dir / "x.fst").string(), "--trace-window", "0"},
       "--trace-window must be > 0"},
      {{"--trace", (scratch.dir / "x.fst").string(), "--trace-start", "3parsecs"},
       "bad value for --trace-start"},
  };
  for (const Case& k : cases) {
    INFO(k.message);
    NaaSim naa(naa_address(), k.args, err.string());
    naa.expect_exit(2);
    CHECK_FALSE(naa.ready());
    const auto status = naa.wait_exit(Ms(5000));
    REQUIRE(status);
    CHECK(*status == 2);
    CHECK(read_file(err).find(k.message) != std::string::npos);
  }
}

// --rx-pipe (issue 14 item 2): the receive path's checks run as rtl/icrc_check and rtl/rx_parser,
// and naa-sim counts its drops under the blocks' reasons.
TEST_CASE("RTL receive path in naa-sim: drops are counted under the RTL's reasons", "[sim][rtl]") {
  for (const char* mode : {"--rx-pipe=rtl", "--rx-pipe=lockstep"}) {
    INFO(mode);
    NaaSim naa(naa_address(), {mode});
    REQUIRE(naa.ready());
    TestPeer peer(peer_address(), naa_address());
    Connection c;
    REQUIRE(peer.connect(c) == 0);
    // A well-formed RDMA WRITE Only with immediate, then: TVer 1 with a valid ICRC (rx_parser
    // drops it: bad_tver), the same with a corrupted ICRC (icrc_check drops it first: bad_icrc).
    p::PacketHeaders h;
    h.bth.opcode = p::opcode::kWriteOnlyImm;
    h.bth.dest_qpn = c.naa_qpn;
    h.bth.psn = c.send_psn;
    h.reth = p::Reth{0x1000, 0x100, 0};
    h.immediate = p::encode_call_immediate(1, 0);
    std::vector<std::uint8_t> bad_tver(p::packet_size(h, 0));
    REQUIRE(p::encode_packet(h, {}, bad_tver));
    bad_tver[1] = static_cast<std::uint8_t>(bad_tver[1] | 0x01);  // BTH TVer (byte 1, bits 3:0)
    p::write_icrc(p::make_roce_headers(parse_ipv4(peer_address()), p::kRoceUdpPort,
                                       parse_ipv4(naa_address()), bad_tver.size()),
                  bad_tver);
    std::vector<std::uint8_t> bad_icrc = bad_tver;
    bad_icrc.back() ^= 0x5A;
    const std::uint64_t before = naa.stat("rtl.rx_pipe.packets");
    peer.send_raw(bad_tver);
    peer.send_raw(bad_icrc);
    const std::string s = naa.wait_stat("rx_pipe.drops", 2);
    CHECK(NaaSim::stat_in(s, "rx_pipe.drops") == 2);
    CHECK(NaaSim::stat_in(s, "rx_pipe.drop.bad_tver") == 1);
    CHECK(NaaSim::stat_in(s, "rx_pipe.drop.bad_icrc") == 1);
    CHECK(NaaSim::stat_in(s, "rtl.rx_pipe.drops") == 2);
    // (+ any CM datagram of the connection still on its way when `before` was read)
    CHECK(NaaSim::stat_in(s, "rtl.rx_pipe.packets") >= before + 2);
    CHECK(NaaSim::stat_in(s, "rtl.rx_pipe.packets") == NaaSim::stat_in(s, "rx_pipe.accepted") + 2);
    CHECK(NaaSim::stat_in(s, "rtl.rx_pipe.verilated") == 1);
    CHECK(NaaSim::stat_in(s, "rx_pipe.check_disagreements") == 0);
    // Two blocks, W = 64: each datagram is ceil(length / 64) beats + 1 cycles in each.
    CHECK(NaaSim::stat_in(s, "rtl.rx_parser.cycles") > 2 * 2);
    CHECK(NaaSim::stat_in(s, "rtl.icrc_check.cycles") > 2 * 2);
    CHECK(NaaSim::stat_in(s, "rtl.lockstep.divergences") == 0);
    peer.disconnect(c);
    CHECK(naa.stop() == 0);
  }
}
