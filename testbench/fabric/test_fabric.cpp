// The fabric (fabric/, docs/adr/0005-fabric.md, docs/fabric.md): topology parsing and
// generators, the flow-size distributions, and small runs whose outcome is known: two flows
// sharing a link, PFC making an incast lossless, drop-tail losing and go-back-N and IRN
// recovering, DCQCN marking and answering with CNPs, and determinism per seed.
#include <catch2/catch.hpp>
#include <systemc>

#include "naa/fabric/network.hpp"
#include "naa/fabric/topology.hpp"
#include "naa/fabric/workload.hpp"
#include "seed.hpp"

using namespace naa::fabric;

namespace {

struct Run {
  WorkloadResult result;
  NetworkStats stats;
};

Run run_incast(int senders, std::uint64_t bytes, bool pfc, bool dcqcn, bool irn,
               std::uint64_t port_buffer = 240'000, std::uint64_t seed = 1,
               bool lossy_ingress = false) {
  Topology t = star(senders + 1, 40, 1000);
  t.switches.port_buffer_bytes = port_buffer;
  t.switches.lossy_ingress = lossy_ingress;
  t.switches.pfc.xoff_bytes = 30'000;
  t.switches.pfc.xon_bytes = 27'800;
  NetworkConfig nc;
  nc.seed = seed;
  nc.pfc = pfc;
  nc.dcqcn = dcqcn;
  Network net(t, nc);
  WorkloadConfig wc;
  wc.kind = WorkloadKind::incast;
  wc.incast_senders = senders;
  wc.incast_bytes = bytes;
  wc.irn = irn;
  wc.seed = seed;
  Run r{run_workload(net, wc), {}};
  r.stats = net.stats();
  return r;
}

}  // namespace

TEST_CASE("fabric topology: a JSON file parses and bad files are refused with the reason",
          "[fabric]") {
  const Topology t = parse_topology(R"({
    "link": {"gbps": 100, "latency_ns": 500},
    "switch": {"buffer_bytes": 1000000, "ecn": {"kmin_bytes": 1000}, "pfc": {"xoff_bytes": 5000}},
    "nodes": [{"name": "s", "kind": "switch"}, {"name": "a"}, {"name": "b", "ip": "10.1.0.9"},
              {"name": "n", "kind": "naa"}],
    "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s", "gbps": 25}, {"a": "n", "b": "s"}]})");
  REQUIRE(t.nodes.size() == 4);
  CHECK(t.nodes[1].ip == 0x0A000001);
  CHECK(t.nodes[2].ip == 0x0A010009);
  CHECK(t.nodes[3].kind == NodeKind::naa);
  CHECK(t.links[0].gbps == 100);
  CHECK(t.links[1].gbps == 25);
  CHECK(t.links[1].latency_ns == 500);
  CHECK(t.switches.buffer_bytes == 1000000);
  CHECK(t.switches.ecn.kmin_bytes == 1000);
  CHECK(t.switches.pfc.xoff_bytes == 5000);
  // Round trip through the writer.
  const Topology back = parse_topology(topology_to_json(t));
  CHECK(back.nodes.size() == 4);
  CHECK(back.nodes[2].ip == 0x0A010009);
  CHECK(back.links[1].gbps == 25);

  auto error_of = [](const char* text) {
    try {
      (void)parse_topology(text);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_THAT(error_of("{"), Catch::Contains("not JSON"));
  CHECK_THAT(error_of(R"({"nodes": [], "links": [], "colour": 1})"),
             Catch::Contains("unknown key 'colour'"));
  CHECK_THAT(error_of(R"({"nodes": [{"name": "a"}], "links": [{"a": "a", "b": "x"}]})"),
             Catch::Contains("unknown node"));
  CHECK_THAT(error_of(R"({"nodes": [{"name": "a"}, {"name": "s", "kind": "switch"}],
                          "links": []})"),
             Catch::Contains("exactly one link"));
  CHECK_THAT(error_of(R"({"nodes": [{"name": "a", "kind": "router"}], "links": []})"),
             Catch::Contains("kind must be"));
  CHECK_THAT(error_of(R"({"nodes": [{"name": "a", "ip": "10.0.0.300"}], "links": []})"),
             Catch::Contains("bad IPv4"));
  CHECK_THAT(error_of(R"({"nodes": [{"name": "a"}, {"name": "a"}], "links": []})"),
             Catch::Contains("appears twice"));
}

TEST_CASE("fabric topology: generators (fat tree k=6 is the IRN paper's 54 hosts)", "[fabric]") {
  const Topology ft = fat_tree(6, 40, 1000);
  int hosts = 0, switches = 0;
  for (const NodeSpec& n : ft.nodes)
    (n.kind == NodeKind::host ? hosts : switches) += 1;
  CHECK(hosts == 54);
  CHECK(switches == 45);  // 9 core + 6 pods x (3 aggregation + 3 edge)
  CHECK(ft.links.size() == 54 + 6 * 9 + 6 * 9);
  const Topology ls = leaf_spine(4, 2, 4, 40, 1000);
  CHECK(ls.nodes.size() == 4 + 2 + 16);
  CHECK(ls.links.size() == 16 + 8);
  CHECK_THROWS(fat_tree(5, 40, 1000));
  // Paths: hosts under one edge switch are 2 hops apart, in another pod 6.
  Network net(ft, NetworkConfig{});
  const std::vector<int> h = net.nodes_of(NodeKind::host);
  CHECK(net.hops(h[0], h[1]) == 2);
  CHECK(net.hops(h[0], h[3]) == 4);
  CHECK(net.hops(h[0], h[53]) == 6);
  CHECK(net.path_latency_ns(h[0], h[53]) == Approx(6000));
}

TEST_CASE("fabric workloads: the flow-size distributions", "[fabric]") {
  // Web search: mean about 1.6 MB (the IRN and HPCC papers quote ~1.6 MB), median about 73 KB.
  CHECK(cdf_mean(websearch_cdf()) == Approx(1.6e6).epsilon(0.1));
  // u = 0.5 lies between (50 KB, 0.40) and (80 KB, 0.53): 50 KB + 10/13 of 30 KB.
  CHECK(cdf_sample(websearch_cdf(), 0.5) == Approx(73'077).epsilon(0.001));
  CHECK(cdf_sample(websearch_cdf(), 0.0) == 0);
  CHECK(cdf_sample(websearch_cdf(), 0.999) <= 30e6);
  // Data mining: half the flows are one packet, the largest about 1 GB.
  CHECK(cdf_sample(datamining_cdf(), 0.3) == 1460);
  CHECK(cdf_sample(datamining_cdf(), 0.9999) > 5e8);
}

TEST_CASE("fabric: two flows into one 40 Gb/s link share it (FCT twice the ideal)", "[fabric]") {
  const Run r = run_incast(2, 200'000, false, false, false);
  REQUIRE(r.result.all_finished);
  for (const FlowRecord& f : r.result.flows) {
    const double slowdown = static_cast<double>(f.end - f.start) / kPsPerNs / f.ideal_ns;
    CHECK(slowdown > 1.8);
    CHECK(slowdown < 2.2);
  }
  CHECK(r.stats.drops == 0);
  // One flow alone: its ideal.
  const Run one = run_incast(1, 200'000, false, false, false);
  const FlowRecord& f = one.result.flows.at(0);
  CHECK(static_cast<double>(f.end - f.start) / kPsPerNs / f.ideal_ns == Approx(1).epsilon(0.05));
}

TEST_CASE(
    "fabric: PFC makes an 8:1 incast lossless and without it drop-tail loses and both "
    "go-back-N and IRN recover",
    "[fabric]") {
  const Run pfc = run_incast(8, 300'000, true, false, false, 60'000);
  REQUIRE(pfc.result.all_finished);
  CHECK(pfc.stats.drops == 0);
  CHECK(pfc.stats.pause_frames > 0);
  CHECK(pfc.stats.resume_frames > 0);
  CHECK(pfc.result.retransmitted == 0);
  // The senders are hosts: the edge switch paused them, and for a measurable time.
  CHECK(pfc.stats.pauses_to_hosts > 0);
  CHECK(pfc.stats.pauses_to_hosts <= pfc.stats.pause_frames);
  CHECK(pfc.stats.xoff_ns > 1000);

  const Run gbn = run_incast(8, 300'000, false, false, false, 60'000);
  REQUIRE(gbn.result.all_finished);
  CHECK(gbn.stats.drops > 0);
  CHECK(gbn.stats.pause_frames == 0);
  CHECK(gbn.stats.xoff_ns == 0);
  CHECK(gbn.result.retransmitted > 0);

  const Run irn = run_incast(8, 300'000, false, false, true, 60'000);
  REQUIRE(irn.result.all_finished);
  CHECK(irn.stats.drops > 0);
  // Selective repeat resends (about) what was lost; go-back-N resends whole windows.
  CHECK(irn.result.retransmitted < gbn.result.retransmitted);
}

TEST_CASE(
    "fabric: lossy traffic dropped by its ingress port's budget (--lossy-ingress) instead of its "
    "egress queue",
    "[fabric]") {
  // An 8:1 incast of 300 KB into 60 KB port buffers without PFC. By egress queue the hot port
  // holds 60 KB and drops the rest of the burst; by ingress port each sender's port may hold
  // 60 KB (what PFC's XOFF counts against), so the same burst loses far less.
  const Run egress = run_incast(8, 300'000, false, false, true, 60'000);
  const Run ingress = run_incast(8, 300'000, false, false, true, 60'000, 1, true);
  REQUIRE(egress.result.all_finished);
  REQUIRE(ingress.result.all_finished);
  CHECK(egress.stats.drops > 0);
  CHECK(ingress.stats.drops * 2 < egress.stats.drops);
  // The topology file carries it.
  Topology t = star(2, 40, 1000);
  t.switches.lossy_ingress = true;
  CHECK(parse_topology(topology_to_json(t)).switches.lossy_ingress);
  CHECK_FALSE(parse_topology(topology_to_json(star(2, 40, 1000))).switches.lossy_ingress);
}

TEST_CASE("fabric: DCQCN marks and answers with CNPs that cut rates", "[fabric]") {
  const Run r = run_incast(8, 300'000, true, true, false, 60'000);
  REQUIRE(r.result.all_finished);
  CHECK(r.stats.ecn_marks > 0);
  CHECK(r.stats.cnps_sent > 0);
  CHECK(r.stats.cnps_received == r.stats.cnps_sent);
  CHECK(r.stats.rate_cuts == r.stats.cnps_received);
  // Without DCQCN nothing is ECN-capable: no marks, no CNPs.
  const Run off = run_incast(8, 300'000, true, false, false, 60'000);
  CHECK(off.stats.ecn_marks == 0);
  CHECK(off.stats.cnps_sent == 0);
}

namespace {

// Two IRN senders of 300 KB into h0 of a 3-host star with a 20 KB drop-tail port buffer, no
// PFC, DCQCN with a CNP at most every 10 us; every flow must finish (no "retry counter
// exceeded"), after losses, deep rate cuts and retransmissions.
void throttled_incast_finishes(Topology t) {
  t.switches.port_buffer_bytes = 20'000;
  NetworkConfig nc;
  nc.dcqcn = true;
  nc.dcqcn_params.cnp_interval_us = 10;
  Network net(t, nc);
  WorkloadConfig wc;
  wc.kind = WorkloadKind::incast;
  wc.incast_senders = 2;
  wc.incast_bytes = 300'000;
  wc.irn = true;
  const WorkloadResult r = run_workload(net, wc);
  for (const FlowRecord& f : r.flows) {
    INFO("flow " << f.id << ": " << f.error);
    CHECK_FALSE(f.failed);
    CHECK(f.end >= 0);
  }
  CHECK(r.all_finished);
  // The conditions the test is about did arise.
  CHECK(net.stats().drops > 0);
  CHECK(net.stats().rate_cuts >= 10);
  CHECK(r.retransmitted > 0);
  // The throttle held: 300 KB took longer than at 1 Gb/s.
  for (const FlowRecord& f : r.flows)
    CHECK(static_cast<double>(f.end - f.start) / kPsPerNs > 2.4e6);
}

}  // namespace

TEST_CASE(
    "fabric: retransmissions leave ahead of the window DCQCN holds in the NIC, oldest first, so "
    "throttled IRN QPs finish",
    "[fabric]") {
  // The endpoint's retransmit timer starts when it hands a packet to the NIC, not when the
  // packet leaves (ADR 0005 "Consequences"). At DCQCN's minimum rate (0.1 Gb/s) a packet queued
  // behind a 110-packet window waits up to 110 x 88 us = 9.7 ms, longer than the transport's
  // 8 RTOs (8 x 262 us); the paper-scale web-search flow of docs/fabric.md "Nothing is lost"
  // ran out of retries that way. nic.cpp nic_send puts retransmissions ahead of the QP's first
  // transmissions, oldest PSN first.
  SECTION("a few losses, the window still in the NIC") {
    // The switch marks every ECN-capable packet (Kmin = Kmax = 0): CNPs cut both QPs to the
    // minimum rate while most of their windows still wait in the NICs; the first microseconds
    // of the incast lose a few packets. Queued behind the window (the NIC before this), every
    // timeout re-queued their retransmissions at the back: a QP ran out of retries.
    Topology t = star(3, 40, 1000);
    t.switches.ecn.kmin_bytes = 0;
    t.switches.ecn.kmax_bytes = 0;
    throttled_incast_finishes(t);
  }
  SECTION("the whole window resent, a retransmission lost again") {
    // A 0.4 Gb/s link to the receiver keeps the marks coming (Kmin 1 KB, Kmax 10 KB, Pmax 1):
    // the windows leave at line rate, most are lost, IRN's timeout resends whole windows at the
    // minimum rate, and a retransmission is lost again. Its next copy must leave before the
    // window resent after it (put at the end of the waiting retransmissions, it waited behind
    // them and a QP ran out of retries).
    Topology t = star(3, 40, 1000);
    t.links.at(0).gbps = 0.4;  // h0, the receiver
    t.switches.ecn.kmin_bytes = 1'000;
    t.switches.ecn.kmax_bytes = 10'000;
    t.switches.ecn.pmax = 1;
    throttled_incast_finishes(t);
  }
}

TEST_CASE(
    "fabric: a host whose retransmit timer fired and re-armed wakes at the new deadline (no "
    "10 s sleep after a lost retransmission)",
    "[fabric]") {
  // An 8:1 incast of 300 KB into a 20 KB drop-tail buffer without PFC: timeouts resend windows
  // that are lost again, and then nothing arrives for the sender until its timer fires again.
  // progress() asks for its wake-up before it runs the due timers, so the NIC must ask again
  // after a timer fired (nic.cpp learn_next_deadline); it did not, and three of these flows
  // slept until the 10 s fallback wake-up (FCTs of 10.0 s, go-back-N and IRN alike).
  for (const bool irn : {false, true}) {
    const Run r = run_incast(8, 300'000, false, false, irn, 20'000);
    INFO((irn ? "IRN" : "go-back-N"));
    REQUIRE(r.result.all_finished);
    CHECK(r.stats.drops > 0);
    CHECK(r.result.timeouts > 0);
    for (const FlowRecord& f : r.result.flows)
      CHECK(static_cast<double>(f.end - f.start) / kPsPerNs < 100e6);  // simulated ns
  }
}

TEST_CASE("fabric: a Poisson web-search run is deterministic per seed", "[fabric]") {
  const std::uint64_t seed = naa::testbench::seed_for("fabric determinism") % 1000 + 1;
  auto once = [&](std::uint64_t s) {
    NetworkConfig nc;
    nc.seed = s;
    nc.dcqcn = true;
    Topology t = leaf_spine(2, 2, 3, 40, 1000);
    Network net(t, nc);
    WorkloadConfig wc;
    wc.flows = 20;
    wc.max_flow_bytes = 300'000;
    wc.seed = s;
    wc.irn = true;
    WorkloadResult r = run_workload(net, wc);
    REQUIRE(r.all_finished);
    std::vector<std::pair<std::uint64_t, Ps>> out;
    for (const FlowRecord& f : r.flows)
      out.emplace_back(f.bytes, f.end - f.start);
    return out;
  };
  const auto a = once(seed);
  CHECK(a == once(seed));
  CHECK(a != once(seed + 1));
}

TEST_CASE(
    "fabric: with wire timers IRN's timer starts when the NIC sends the packet: fewer spurious "
    "timeouts under PFC",
    "[fabric]") {
  // Web search at 90 % load on 8 hosts, PFC on: nothing is dropped, so every timeout is
  // spurious. Most fire for packets a paused NIC still holds (the timer started when the
  // endpoint handed them over, 26 with seed 1); with the timer started on the wire
  // (host::UdpRoceOptions::wire_timers, nic.cpp nic_next) only the packets that waited in a
  // switch longer than the timeout remain (4).
  auto timeouts = [](bool wire) {
    NetworkConfig nc;
    nc.pfc = true;
    Network net(leaf_spine(2, 1, 4, 40, 2000), nc);
    WorkloadConfig wc;
    wc.flows = 80;
    wc.load = 0.9;
    wc.max_flow_bytes = 300'000;
    wc.irn = true;
    wc.wire_timers = wire;
    const WorkloadResult r = run_workload(net, wc);
    REQUIRE(r.all_finished);
    CHECK(net.stats().drops == 0);
    CHECK(net.stats().pauses_to_hosts > 20);
    return r.timeouts;
  };
  const std::uint64_t handed_over = timeouts(false), on_wire = timeouts(true);
  CHECK(handed_over >= 10);
  CHECK(on_wire * 3 <= handed_over);

  // Lost tails are still recovered by the timer armed on the wire: an 8:1 incast into a 20 KB
  // drop-tail buffer (a NIC that never reported departures would leave them unrecovered).
  Topology t = star(9, 40, 1000);
  t.switches.port_buffer_bytes = 20'000;
  Network net(t, NetworkConfig{});
  WorkloadConfig wc;
  wc.kind = WorkloadKind::incast;
  wc.incast_senders = 8;
  wc.incast_bytes = 300'000;
  wc.irn = true;
  wc.wire_timers = true;
  wc.irn_rto_low_ns = 100'000;
  wc.irn_rto_high_ns = 320'000;
  const WorkloadResult r = run_workload(net, wc);
  CHECK(r.all_finished);
  CHECK(net.stats().drops > 0);
  CHECK(r.timeouts > 0);
  for (const FlowRecord& f : r.flows)
    CHECK(f.end - f.start < 100 * kPsPerUs * 1000);  // 100 ms
}

TEST_CASE("fabric: go-back-N or IRN per node from the topology file", "[fabric]") {
  // One 300 KB flow h1 -> h0. IRN acknowledges every packet, go-back-N every 64: the IRN
  // connection puts about twice the frames on the wires, so the negotiation really happened.
  auto frames_with = [](const char* h0_irn, const char* h1_irn, bool& flow_irn) {
    const std::string json = std::string(R"({"nodes": [{"name": "s", "kind": "switch"},
        {"name": "h0", "irn": )") +
                             h0_irn + R"(}, {"name": "h1", "irn": )" + h1_irn + R"(}],
        "links": [{"a": "h0", "b": "s"}, {"a": "h1", "b": "s"}]})";
    Network net(parse_topology(json), NetworkConfig{});
    WorkloadConfig wc;
    wc.kind = WorkloadKind::incast;
    wc.incast_senders = 1;
    wc.incast_bytes = 300'000;
    wc.irn = false;  // the run's default; the nodes decide
    const WorkloadResult r = run_workload(net, wc);
    REQUIRE(r.all_finished);
    flow_irn = r.flows.at(0).irn;
    return net.stats().frames_sent;
  };
  bool irn = false;
  const std::uint64_t both = frames_with("true", "true", irn);
  CHECK(irn);
  const std::uint64_t one = frames_with("true", "false", irn);
  CHECK_FALSE(irn);
  CHECK(static_cast<double>(both) > 1.8 * static_cast<double>(one));
  CHECK_THAT(
      [] {
        try {
          (void)parse_topology(
              R"({"nodes": [{"name": "s", "kind": "switch", "irn": true}], "links": []})");
        } catch (const std::runtime_error& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      Catch::Contains("'irn' is true or false, on a host or an NAA"));
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
