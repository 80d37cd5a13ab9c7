// naa-sim's waveform on long runs (issue 14 item 4; docs/sim/rtl.md "The waveform"), each file
// read back with GTKWave's fst2vcd:
// - --trace-window N: the file holds exactly the last N Verilated cycles and ends with the cycle
//   of a lockstep divergence (the deliberately broken MR table), or with the last cycle at exit;
// - --trace-start T: nothing before simulated time T is in the file;
// - SIGINT and SIGTERM: the file is complete (readable, ends with the last cycle clocked).
// Without fst2vcd (package gtkwave) a test exits 77 (CTest: skipped) with the reason, or fails
// when NAA_REQUIRE_TOOLS=1.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "peer.hpp"
#include "sim_tests.hpp"

using namespace naa::testbench;
namespace p = naa::protocol;

namespace {

constexpr std::uint64_t kHalfPeriodPs = 2000;  // 250 MHz: the rising edge of a cycle

struct Scratch {
  std::filesystem::path dir;
  explicit Scratch(const std::string& name)
      : dir(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// fst2vcd must be there: skipped (exit 77) otherwise, failed with NAA_REQUIRE_TOOLS=1.
void require_fst2vcd() {
  if (std::system("command -v fst2vcd >/dev/null 2>&1") == 0) return;
  const char* require = std::getenv("NAA_REQUIRE_TOOLS");
  if (require != nullptr && std::string(require) == "1") {
    FAIL("fst2vcd (package gtkwave) is missing and NAA_REQUIRE_TOOLS=1 requires it");
  }
  std::cout << "SKIPPED: fst2vcd missing (apt-get install gtkwave; scripts/setup.sh)" << std::endl;
  std::exit(77);
}

// The file as fst2vcd converts it: the timestamps (ps) in order and the $timescale line. A file
// fst2vcd cannot read fails the test.
struct Vcd {
  std::vector<std::uint64_t> times;
  std::string timescale;
  std::string text;
};
Vcd fst2vcd(const std::filesystem::path& fst) {
  const std::string cmd = "fst2vcd '" + fst.string() + "' 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  Vcd v;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr)
    v.text += buf;
  const int status = ::pclose(pipe);
  INFO(v.text.substr(0, 2000));
  REQUIRE(status == 0);
  std::istringstream in(v.text);
  bool in_timescale = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("$timescale", 0) == 0) in_timescale = true;
    if (in_timescale && line.find("$end") != std::string::npos) in_timescale = false;
    if (in_timescale && line.rfind("$timescale", 0) != 0) v.timescale += line;
    if (line.size() > 1 && line[0] == '#') v.times.push_back(std::stoull(line.substr(1)));
  }
  REQUIRE_FALSE(v.times.empty());
  return v;
}

// A connection with one 256-byte region: programs the MR table and makes two lookups (ACKed).
void some_traffic(TestPeer& peer, Connection& c) {
  REQUIRE(peer.connect(c) == 0);
  const p::MrspRequestEntry e{p::kMrspFlagInput, 0x1000, c.host_va, c.host_rkey, 256};
  const auto regs = peer.mrsp(c, {e});
  REQUIRE(regs);
  REQUIRE_FALSE(regs->error);
  const std::uint32_t rkey = regs->regions.at(0).rkey;
  for (int i = 0; i < 2; ++i) {
    (void)peer.post_write(c, 0x1000, rkey, std::vector<std::uint8_t>(256, 0x5A));
    const auto ack = peer.wait_ack(c);
    REQUIRE(ack);
    CHECK(ack->syndrome == p::kAethAck);
    c.acks.clear();
  }
}

}  // namespace

TEST_CASE("naa-sim --trace-window: the last N cycles, ending with the lockstep divergence",
          "[sim][rtl][trace]") {
  require_fst2vcd();
  Scratch scratch("naa-sim-trace-window");
  const auto trace = scratch.dir / "window.fst";
  const auto err = scratch.dir / "stderr.txt";
  constexpr std::uint64_t kWindow = 8;
  NaaSim naa(naa_address(),
             {"--mr-table=lockstep", "--mr-table-variant=broken", "--trace", trace.string(),
              "--trace-window", std::to_string(kWindow)},
             err.string());
  REQUIRE(naa.ready());
  naa.expect_exit(3);
  TestPeer peer(peer_address(), naa_address());
  Connection c;
  REQUIRE(peer.connect(c) == 0);
  const p::MrspRequestEntry e{p::kMrspFlagInput, 0x1000, c.host_va, c.host_rkey, 256};
  const auto regs = peer.mrsp(c, {e});
  REQUIRE(regs);
  // [0x1000 + 241, 0x1000 + 257): one byte past the region; the broken RTL says ok.
  (void)peer.post_write(c, 0x1000 + 241, regs->regions.at(0).rkey,
                        std::vector<std::uint8_t>(16, 0xA5));
  const auto status = naa.wait_exit(Ms(10000));
  REQUIRE(status);
  CHECK(*status == 3);

  const std::string report = read_file(err);
  INFO(report);
  const std::regex wave_re("waveform: +" + trace.string() + ", this cycle at ([0-9]+) ps");
  std::smatch m;
  REQUIRE(std::regex_search(report, m, wave_re));
  const std::uint64_t divergence_ps = std::stoull(m[1].str());
  CHECK(report.find("the last 8 cycles") != std::string::npos);

  const Vcd vcd = fst2vcd(trace);
  CHECK(vcd.timescale.find("1ps") != std::string::npos);
  // Two samples per cycle (its start, its rising edge): exactly the window, ending with the
  // divergent cycle's edge.
  CHECK(vcd.times.size() == 2 * kWindow);
  CHECK(vcd.times.back() == divergence_ps + kHalfPeriodPs);
  CHECK(vcd.times.front() < divergence_ps);
  // The MR table's ports are in it (the lookup of the divergent result is in the window).
  CHECK(vcd.text.find(" lk_va_i ") != std::string::npos);
  CHECK(vcd.text.find(" rsp_status_o ") != std::string::npos);
  CHECK(NaaSim::stat_in(naa.last_stats(), "rtl.trace.window") == kWindow);
}

TEST_CASE(
    "naa-sim --trace, --trace-window, --trace-start: the waveform is complete after SIGTERM and "
    "SIGINT",
    "[sim][rtl][trace]") {
  require_fst2vcd();
  Scratch scratch("naa-sim-trace-signal");
  struct Case {
    int signal;
    std::vector<std::string> args;
    std::uint64_t window;  // 0: the whole run
    std::uint64_t start_ps;
  };
  const Case cases[] = {
      {SIGTERM, {}, 0, 0},
      {SIGINT, {}, 0, 0},
      {SIGTERM, {"--trace-window", "6"}, 6, 0},
      // After the reset cycles (0 to 12 ns), before the MRSP request (the CM exchange alone
      // costs more than 100 ns of simulated time).
      {SIGINT, {"--trace-start", "100ns"}, 0, 100000},
      {SIGTERM, {"--trace-start", "0.1us"}, 0, 100000},  // not a count: refused below
  };
  for (const Case& k : cases) {
    const auto trace = scratch.dir / "run.fst";
    std::filesystem::remove(trace);
    std::vector<std::string> args = {"--kernels=model", "--trace", trace.string()};
    args.insert(args.end(), k.args.begin(), k.args.end());
    INFO("signal " << k.signal << ", extra " << (k.args.empty() ? "-" : k.args[0]));
    if (k.args.size() == 2 && k.args[1] == "0.1us") {
      NaaSim refused(naa_address(), args, "/dev/null");
      refused.expect_exit(2);
      CHECK_FALSE(refused.ready());
      continue;
    }
    NaaSim naa(naa_address(), args);
    REQUIRE(naa.ready());
    {
      TestPeer peer(peer_address(), naa_address());
      Connection c;
      some_traffic(peer, c);
    }
    REQUIRE(::kill(naa.pid(), k.signal) == 0);
    const auto status = naa.wait_exit(Ms(10000));
    REQUIRE(status);
    CHECK(*status == 0);
    const std::string s = naa.last_stats();
    const std::uint64_t last_cycle_ps = NaaSim::stat_in(s, "rtl.last_cycle_ps");
    CHECK(NaaSim::stat_in(s, "rtl.mr_table.lookups") == 2);

    const Vcd vcd = fst2vcd(trace);
    CHECK(vcd.times.back() == last_cycle_ps + kHalfPeriodPs);
    if (k.window != 0) CHECK(vcd.times.size() == 2 * k.window);
    CHECK(vcd.times.front() >= k.start_ps);
    if (k.start_ps != 0) {
      // The programming of the entry and both lookups are after T: in the file.
      CHECK(vcd.times.size() >= 2 * 3);
    } else if (k.window == 0) {
      CHECK(vcd.times.front() == 0);  // the reset cycles come first
    }
  }
}
