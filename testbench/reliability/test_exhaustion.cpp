// Exhaustion (issue 6, deliverable 5): more connections than QPs, a flood of CM REQs that never
// send an RTU, and a soak of concurrent sessions at 1% loss, with naa-sim's memory measured
// (VmRSS / VmHWM from /proc). Sizes: the flood sends NAA_RELIABILITY_FLOOD_REQS (default 10,000)
// REQs; the soak runs 8 sessions x NAA_RELIABILITY_SOAK_CALLS (default the 1,000, about
// 30 s; set it lower for a quicker run).
#include <catch2/catch.hpp>

#include <atomic>
#include <deque>
#include <thread>

#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/mrsp.hpp"
#include "peer.hpp"
#include "sim_tests.hpp"
#include "support.hpp"

using namespace std::chrono_literals;
using namespace naa::testbench;
namespace p = naa::protocol;
namespace host = naa::host;

TEST_CASE("more connections than QPs: REJ 28, the earlier ones keep working", "[exhaustion]") {
  NaaSim sim(naa_address(), {"--qps", "4"});
  REQUIRE(sim.ready());
  TestPeer peer(peer_address(2), naa_address());
  std::deque<Connection> conns(5);
  std::vector<TestPeer::MrspResult> regions;
  for (std::size_t i = 0; i < 4; ++i) {
    TestPeer::ConnectOptions o;
    o.host_mem_size = 4096;
    REQUIRE(peer.connect(conns[i], o) == 0);
    const auto r = peer.mrsp(
        conns[i], {p::MrspRequestEntry{p::kMrspFlagInput | p::kMrspFlagOutput, 0x10000 * (i + 1),
                                       conns[i].host_va, conns[i].host_rkey, 256}});
    REQUIRE(r);
    REQUIRE_FALSE(r->error);
    regions.push_back(*r);
  }
  TestPeer::ConnectOptions o;
  o.host_mem_size = 4096;
  CHECK(peer.connect(conns[4], o) == p::kCmRejConsumerDefined);  // REJ 28 "out of QPs"
  CHECK(sim.stat("cm.rej_sent.reason_28") == 1);
  for (std::size_t i = 0; i < 4; ++i) {
    const std::vector<std::uint8_t> in(256, static_cast<std::uint8_t>(i));
    const auto imm = peer.call(conns[i], regions[i], {{0, in}}, 1);
    REQUIRE(imm);
    CHECK((*imm >> 8) == 0);
    CHECK(conns[i].host_mem[0] == static_cast<std::uint8_t>(i + 1));
  }
  CHECK(sim.stat("cm.connections") == 4);
}

namespace {

// 127.50.<n>.<m>: the addresses of the flood-policy cases (issue 12).
std::string ip50(int n, int m) {
  return "127.50." + std::to_string(n) + "." + std::to_string(m);
}

[[maybe_unused]] bool has_key(const std::string& stats, const std::string& key) {
  return stats.find("\n" + key + "=") != std::string::npos;
}

// A REQ from `peer` for `c`; its first or second try must be answered with a REP (the second
// goes out at once after a REJ: a client that waited out the half-open expiry would not count).
// Returns the number of tries that got a REJ.
int connect_within_two_tries(TestPeer& peer, std::deque<Connection>& conns) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Connection& c = conns.emplace_back();
    peer.send_req(c, TestPeer::ConnectOptions{});
    std::uint16_t rej = 0xFFFF;
    if (peer.wait_rep(c, &rej)) {
      peer.send_rtu(c);
      return attempt;
    }
    INFO("try " << attempt + 1 << " rejected with reason " << rej);
  }
  return 2;
}

}  // namespace

TEST_CASE(
    "a flood of CM REQs without RTU: bounded memory per half-open connection, a real client "
    "connects during it",
    "[exhaustion]") {
  // Half-open admission (docs/sim/cm_agent.md): one address holds at most half of the QPs
  // half-open, so a client on another address is answered with a REP while the flood goes on.
  NaaSim sim(naa_address());
  REQUIRE(sim.ready());
  const int pid = sim.pid();
  REQUIRE(pid > 0);
  TestPeer peer(peer_address(2), naa_address());
  TestPeer client(peer_address(3), naa_address());
  const std::uint64_t reqs = naa::testbench::env_u64("NAA_RELIABILITY_FLOOD_REQS", 10000);
  const std::string st0 = sim.stats_text();
  REQUIRE_FALSE(st0.empty());
  const std::uint64_t rss_before = naa::testbench::proc_kib(pid, "VmRSS");
  std::deque<Connection> conns(reqs);
  std::deque<Connection> client_conns;
  TestPeer::ConnectOptions o;
  o.host_mem_size = 0;
  o.remote_cm_response_timeout = 8;  // the NAA keeps a half-open connection 0.1 s (its minimum)
  o.max_cm_retries = 1;
  o.send_rtu = false;
  int client_rejects = -1;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < reqs; ++i) {
    peer.send_req(conns[i], o);
    if (i % 64 == 63) peer.drain(Ms(1));  // read the REPs/REJs so our socket never overflows
    // Halfway through, with the flood's half-open connections holding what they may, a real
    // client connects (REQ -> REP -> RTU), and the flood goes on.
    if (i == reqs / 2) client_rejects = connect_within_two_tries(client, client_conns);
  }
  CHECK(client_rejects == 0);  // a REP at the first try
  // Every REQ is answered (REP while the address may hold more half-open connections, REJ 28
  // after), and the flood's half-open ones expire; the client's connection stays.
  std::string st;
  std::uint64_t heap_peak = 0;
  for (int i = 0; i < 100; ++i) {
    peer.drain(Ms(50));
    st = sim.stats_text();
    heap_peak = std::max(heap_peak, NaaSim::stat_in(st, "naa-sim.heap_peak_bytes"));
    if (NaaSim::stat_in(st, "cm.connections") == 1 &&
        NaaSim::stat_in(st, "cm.req") == reqs + client_conns.size()) {
      break;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::uint64_t rss_after = naa::testbench::proc_kib(pid, "VmRSS");
  const std::uint64_t peak = naa::testbench::proc_kib(pid, "VmHWM");
  auto stat = [&](const char* k) { return NaaSim::stat_in(st, k); };
  CHECK(stat("cm.req") == reqs + client_conns.size());
  CHECK(stat("cm.connections") == 1);
  CHECK(stat("cm.rep") + stat("cm.rej_sent") == stat("cm.req"));
  CHECK(stat("cm.half_open_expired") == stat("cm.rep") - 1);  // all but the client's
  CHECK(stat("cm.half_open_refused") == stat("cm.rej_sent.reason_28"));
  CHECK(stat("cm.half_open_refused") > 0);
  // The per-address bound, not the QP count (16 by default, which no peak can exceed anyway): the
  // flood's address holds at most half of the QPs half-open (8), and it reached that bound (REJs
  // for it above); the client's own REQ adds at most one more.
  CHECK(stat("cm.half_open_peak") >= 8);
  CHECK(stat("cm.half_open_peak") <= 9);
  // Memory per half-open connection, exactly: naa-sim's live heap bytes before the flood against
  // the peak of every snapshot since (each covers the time since the previous one).
  const std::uint64_t half_open_peak = std::max<std::uint64_t>(1, stat("cm.half_open_peak"));
#if defined(__SANITIZE_ADDRESS__)
  // The sanitizer owns operator new (no naa-sim.heap_* statistics) and its quarantine keeps
  // freed memory resident: neither figure means anything there, so this part did not run, and
  // CTest says so (issue 26 item 9: it used to report "Passed").
  (void)heap_peak;
  (void)half_open_peak;
  (void)peak;
  WARN(
      "NAA_SKIP: under AddressSanitizer the heap and RSS bounds per half-open connection cannot "
      "be measured");
#else
  REQUIRE(has_key(st0, "naa-sim.heap_bytes"));
  const std::uint64_t heap_before = NaaSim::stat_in(st0, "naa-sim.heap_bytes");
  const std::uint64_t heap_growth = heap_peak > heap_before ? heap_peak - heap_before : 0;
  INFO("heap before " << heap_before << " B, peak during the flood " << heap_peak << " B, "
                      << half_open_peak << " half-open connections at most");
  CHECK(heap_growth <= 1024 * half_open_peak);
  // Cross-check with the process: peak RSS growth under 1 KiB per flood REQ.
  CHECK(peak <= rss_before + reqs);
#endif
  naa::testbench::report_line(
      "flood: reqs=" + std::to_string(reqs) + " reps=" + std::to_string(stat("cm.rep")) +
      " rej28=" + std::to_string(stat("cm.rej_sent.reason_28")) +
      " expired=" + std::to_string(stat("cm.half_open_expired")) + " half_open_peak=" +
      std::to_string(stat("cm.half_open_peak")) + " heap_peak_bytes=" + std::to_string(heap_peak) +
      " rss_before_kib=" + std::to_string(rss_before) +
      " rss_after_kib=" + std::to_string(rss_after) + " peak_rss_kib=" + std::to_string(peak) +
      " seconds=" + std::to_string(secs));
  // The client's connection was never displaced: it places a region and calls.
  Connection& c = client_conns.back();
  const auto r = client.mrsp(c, {p::MrspRequestEntry{p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000,
                                                     c.host_va, c.host_rkey, 64}});
  REQUIRE(r);
  REQUIRE_FALSE(r->error);
  const auto imm = client.call(c, *r, {{0, std::vector<std::uint8_t>(64, 6)}}, 1);
  REQUIRE(imm);
  CHECK((*imm >> 8) == 0);
  CHECK(c.host_mem[0] == 7);
  client.disconnect(c);
  CHECK(sim.stop() == 0);
}

TEST_CASE(
    "a REQ flood from many addresses: the oldest half-open connection makes room for a real "
    "client",
    "[exhaustion]") {
  // --qps 4: each flooding address may hold 2 half-open QPs, two addresses take all four; a new
  // REQ then displaces the oldest half-open connection of another address.
  NaaSim sim(ip50(40, 1), {"--qps", "4"});
  REQUIRE(sim.ready());
  std::deque<TestPeer> flooders;
  for (int k = 0; k < 4; ++k)
    flooders.emplace_back(ip50(40, 10 + k), ip50(40, 1));
  TestPeer client(ip50(40, 2), ip50(40, 1));
  TestPeer::ConnectOptions o;
  o.host_mem_size = 0;
  o.send_rtu = false;  // half-open for the default expiry (seconds): only displacement frees them
  std::deque<Connection> flood(400);
  for (std::size_t i = 0; i < flood.size(); ++i) {
    flooders[i % flooders.size()].send_req(flood[i], o);
    if (i % 16 == 15) {
      for (auto& f : flooders)
        f.drain(Ms(1));
    }
  }
  // Every REQ handled (an event, not a sleep: issue 26 item 11).
  auto st = sim.wait_stat("cm.req", flood.size());
  REQUIRE(NaaSim::stat_in(st, "cm.req") == flood.size());
  CHECK(NaaSim::stat_in(st, "cm.half_open") == 4);  // every QP held by the flood
  CHECK(NaaSim::stat_in(st, "cm.half_open_evicted") > 0);
  std::deque<Connection> client_conns;
  CHECK(connect_within_two_tries(client, client_conns) == 0);
  REQUIRE_FALSE(client_conns.empty());
  Connection& c = client_conns.back();
  const auto r = client.mrsp(c, {p::MrspRequestEntry{p::kMrspFlagInput | p::kMrspFlagOutput, 0x1000,
                                                     c.host_va, c.host_rkey, 64}});
  REQUIRE(r);
  REQUIRE_FALSE(r->error);
  st = sim.stats_text();
  CHECK(NaaSim::stat_in(st, "cm.connections") == 4);
  CHECK(NaaSim::stat_in(st, "cm.half_open") == 3);
  // Established, it is never displaced: more flood, then it still calls.
  std::deque<Connection> more(100);
  for (std::size_t i = 0; i < more.size(); ++i)
    flooders[i % flooders.size()].send_req(more[i], o);
  const std::uint64_t reqs = flood.size() + client_conns.size() + more.size();
  st = sim.wait_stat("cm.req", reqs);
  REQUIRE(NaaSim::stat_in(st, "cm.req") == reqs);
  CHECK(NaaSim::stat_in(st, "cm.half_open") == 3);
  const auto imm = client.call(c, *r, {{0, std::vector<std::uint8_t>(64, 1)}}, 2);
  REQUIRE(imm);
  CHECK((*imm >> 8) == 0);
  CHECK(c.host_mem[0] == 3);
  client.disconnect(c);
  CHECK(sim.stop() == 0);
}

TEST_CASE("soak: 8 sessions at 1% loss, naa-sim's memory flat after warm-up", "[exhaustion]") {
  NaaSim sim(naa_address(), {"--fault-tx", "loss=0.01", "--fault-rx", "loss=0.01"});
  REQUIRE(sim.ready());
  const int pid = sim.pid();
  REQUIRE(pid > 0);
  const std::uint64_t calls = naa::testbench::env_u64("NAA_RELIABILITY_SOAK_CALLS", 1000);
  constexpr int kSessions = 8;
  std::atomic<std::uint64_t> done{0}, bad{0};
  std::atomic<int> failures{0};
  std::uint64_t rss_warm = 0;
  auto worker = [&](int k) {
    try {
      host::SessionOptions o;
      o.naa_address = naa_address();
      o.local_address = peer_address(10 + k);
      o.local_ack_timeout = 13;
      o.call_timeout = 120000ms;
      o.naa_base_address = static_cast<std::uint64_t>(k) << 24;  // each session its own memory
      std::vector<std::uint8_t> a(64 << 10), out(64 << 10);
      host::Session s(o, {host::Region::input(a), host::Region::output(out)});
      for (std::uint64_t i = 0; i < calls; ++i) {
        for (std::size_t j = 0; j < a.size(); ++j)
          a[j] = static_cast<std::uint8_t>(i + j + static_cast<std::size_t>(k));
        const auto r = s.call(1);  // add1: out = in + 1 (inputs are not written back)
        bool ok = r.return_code == 0;
        // add1 adds 1 to every non-internal region, the output region on the NAA included (it
        // started as zeros and keeps its contents between calls): after call i it reads i + 1.
        for (std::size_t j = 0; ok && j < out.size(); ++j)
          ok = out[j] == static_cast<std::uint8_t>(i + 1);
        if (!ok) ++bad;
        ++done;
      }
      s.disconnect();
    } catch (const std::exception& e) {
      std::cerr << "soak session " << k << ": " << e.what() << "\n";
      ++failures;
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < kSessions; ++k)
    threads.emplace_back(worker, k);
  // Warm-up: the first tenth of the calls.
  while (done < kSessions * calls / 10 && failures == 0)
    std::this_thread::sleep_for(10ms);
  rss_warm = naa::testbench::proc_kib(pid, "VmRSS");
  for (auto& t : threads)
    t.join();
  const std::uint64_t rss_end = naa::testbench::proc_kib(pid, "VmRSS");
  const std::uint64_t peak = naa::testbench::proc_kib(pid, "VmHWM");
  const std::string st = sim.stats_text();
  CHECK(failures == 0);
  CHECK(bad == 0);
  CHECK(done == kSessions * calls);
  CHECK(NaaSim::stat_in(st, "kernel.dispatches") == kSessions * calls);
  CHECK(NaaSim::stat_in(st, "mr_table.entries_used") == 0);
#if defined(__SANITIZE_ADDRESS__)
  // ASan's quarantine keeps freed memory resident in naa-sim: RSS says nothing there, so the
  // bound did not run (reported skipped, issue 26 item 9).
  (void)rss_end;
  WARN("NAA_SKIP: under AddressSanitizer the soak's RSS bound cannot be measured");
#else
  CHECK(rss_end <= rss_warm + 8 * 1024);  // no growth beyond noise after warm-up
#endif
  naa::testbench::report_line(
      "soak: sessions=8 calls_each=" + std::to_string(calls) +
      " calls_verified=" + std::to_string(done.load()) +
      " dispatches=" + std::to_string(NaaSim::stat_in(st, "kernel.dispatches")) + " faults=" +
      std::to_string(NaaSim::stat_in(st, "net_port.fault_rx.loss") +
                     NaaSim::stat_in(st, "net_port.fault_tx.loss")) +
      " rss_warm_kib=" + std::to_string(rss_warm) + " rss_end_kib=" + std::to_string(rss_end) +
      " peak_rss_kib=" + std::to_string(peak));
}
