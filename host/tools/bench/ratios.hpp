// naa-bench --ratios N (issue 19 item 3): each wall-clock target as a ratio to the raw UDP
// baseline of the same datagrams, from one run, in N pairs: each pair measures the call and then
// its UDP baseline right after it, so a noisy moment (the machine is shared) moves both halves of
// a pair and the ratio of the pair stays meaningful. The summary gives the median ratio over the
// pairs and the spread (min, max); ratios.csv holds every pair, ratio_summary.csv the summary.
//
//   nop64     64 B nop call latency (median of --target-reps/N calls) / UDP ping-pong of the same
//             datagrams (median of as many round trips); goal <= 1.5
//   big       --max call (in + out Gb/s) / UDP out-and-back of the same datagrams; goal >= 0.5
//   stream4k  one-way 4 KiB RDMA WRITE streaming of --stream bytes / one-way UDP; goal >= 0.5
//   sessionsK K concurrent --call-size calls (in + out Gb/s) / UDP out-and-back of one call's
//             datagrams; goal (K = 8) >= 0.8
//
// Floor ratios (issue 31): a median against a median measures the scheduler's luck as much as
// the model (loopback UDP's median round trip is bimodal on small VMs, its minimum is stable), so
// the same calls are also set against the loopback's floor: the UDP minimum round trip over the
// run for nop64 (goal <= 2.0), the best UDP pair of the run for the throughputs (big, stream4k:
// >= 0.5; sessions8: >= 0.8). The call side stays the median over the pairs. floor_summary.csv
// and the printed table carry both absolute figures beside each ratio.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "config.hpp"
#include "measure.hpp"
#include "output.hpp"
#include "sim_probe.hpp"
#include "udp_baseline.hpp"

namespace naa::bench {

struct RatioTarget {
  std::string name;
  std::string goal;  // ">= x" or "<= x"
  double limit = 0;
  bool at_most = false;  // true: the goal is ratio <= limit
  std::vector<double> ratios;
  // Absolute figures per pair (us for latency, Gb/s for throughput) and the UDP floor of each
  // pair: its minimum round trip (latency) or its one measurement (throughput).
  std::string key;   // the name in ratios.csv
  std::string unit;  // "us" or "Gb/s"
  std::vector<double> call_values, udp_values, udp_floors;
  std::string floor_goal;  // "" if the target has no floor goal
  double floor_limit = 0;
  void add(double call, double udp, double udp_floor) {
    ratios.push_back(call / udp);
    call_values.push_back(call);
    udp_values.push_back(udp);
    udp_floors.push_back(udp_floor);
  }
  // The floor of the run: the smallest round trip (at_most) or the best throughput.
  [[nodiscard]] double udp_floor() const {
    if (udp_floors.empty()) return 0;
    return at_most ? *std::min_element(udp_floors.begin(), udp_floors.end())
                   : *std::max_element(udp_floors.begin(), udp_floors.end());
  }
  [[nodiscard]] double floor_ratio() const {
    const double f = udp_floor();
    return f > 0 ? summarize(call_values).median / f : 0;
  }
};

template <class Say>
std::vector<RatioTarget> run_ratios(const Config& c, const std::shared_ptr<naa::host::Transport>& t,
                                    SimProcess& sim, UdpPair& udp, int pairs, Say say) {
  Csv csv(c.out_dir, "ratios.csv", "target,pair,call_value,udp_value,unit,ratio,udp_floor");
  std::vector<RatioTarget> out;
  out.reserve(8 + static_cast<std::size_t>(std::max(0, c.sessions)));  // references stay valid
  auto target = [&](const std::string& name, const std::string& goal, double limit, bool at_most,
                    const std::string& key, const std::string& floor_goal,
                    double floor_limit) -> RatioTarget& {
    RatioTarget r;
    r.name = name;
    r.goal = goal;
    r.limit = limit;
    r.at_most = at_most;
    r.key = key;
    r.unit = at_most ? "us" : "Gb/s";
    r.floor_goal = floor_goal;
    r.floor_limit = floor_limit;
    out.push_back(std::move(r));
    return out.back();
  };
  const int per_pair = std::max(1, c.target_reps / std::max(1, pairs));
  say("\nratios to raw UDP of the same datagrams, %d pairs (call, then UDP)\n", pairs);

  {  // 64 B nop call vs UDP ping-pong
    RatioTarget& r = target("nop64 latency / UDP ping-pong (median)", "<= 1.5", 1.5, true, "nop64",
                            "<= 2.0", 2.0);
    std::vector<std::uint8_t> b(64);
    naa::host::Session s(t, session_options(c), {naa::host::Region::inout(b)});
    const auto dg = roce_datagrams(64, c.mtu, true);
    for (int p = 0; p < pairs; ++p) {
      std::vector<double> w, u;
      for (int i = 0; i < per_pair; ++i)
        w.push_back(seconds(s.call(3).wall));
      for (int i = 0; i < per_pair; ++i) {
        const double x = udp.round_trip(dg);
        if (x > 0) u.push_back(x);
      }
      const Summary us = summarize(u);
      const double cm = summarize(w).median, um = us.median;
      if (um <= 0) continue;
      r.add(cm * 1e6, um * 1e6, us.min * 1e6);
      csv.row("nop64", p, cm * 1e6, um * 1e6, "us", cm / um, us.min * 1e6);
    }
    s.disconnect();
  }
  {  // the largest call vs UDP out and back
    RatioTarget& r = target(human_size(c.max_size) + " call / UDP out-and-back (Gb/s)", ">= 0.5",
                            0.5, false, "big", ">= 0.5", 0.5);
    std::vector<std::uint8_t> buf(c.max_size, 7);
    naa::host::Session s(t, session_options(c), {naa::host::Region::inout(buf.data(), buf.size())});
    const auto dg = roce_datagrams(c.max_size, c.mtu, true);
    for (int p = 0; p < pairs; ++p) {
      const auto res = s.call(static_cast<std::uint8_t>(c.fn));
      const double cg =
          gbps(static_cast<double>(res.bytes_sent + res.bytes_received), seconds(res.wall));
      const double ut = udp.round_trip(dg);
      if (ut <= 0) continue;
      const double ug = gbps(2.0 * static_cast<double>(c.max_size), ut);
      r.add(cg, ug, ug);
      csv.row("big", p, cg, ug, "Gb/s", cg / ug, ug);
    }
    s.disconnect();
  }
  {  // 4 KiB WRITE streaming vs one-way UDP
    RatioTarget& r = target("4 KiB WRITE stream / one-way UDP (Gb/s)", ">= 0.5", 0.5, false,
                            "stream4k", ">= 0.5", 0.5);
    const std::uint64_t bytes = std::min<std::uint64_t>(c.stream_bytes, 16ULL << 20);
    WriteStream ws(t, c, bytes);
    std::vector<std::uint32_t> dg;
    for (std::uint64_t off = 0; off < bytes; off += 4096) {
      const auto part = roce_datagrams(std::min<std::uint64_t>(4096, bytes - off), c.mtu, false);
      dg.insert(dg.end(), part.begin(), part.end());
    }
    for (int p = 0; p < pairs; ++p) {
      const double cg = gbps(static_cast<double>(bytes), ws.run(4096));
      const double ut = udp.one_way(dg);
      if (ut <= 0) continue;
      const double ug = gbps(static_cast<double>(bytes), ut);
      r.add(cg, ug, ug);
      csv.row("stream4k", p, cg, ug, "Gb/s", cg / ug, ug);
    }
  }
  {  // 1..--sessions concurrent sessions vs UDP out and back of one call's datagrams
    const auto dg = roce_datagrams(c.call_size, c.mtu, true);
    for (int k = 1; k <= c.sessions; ++k) {
      RatioTarget& r =
          target(std::to_string(k) + " sessions / UDP out-and-back (Gb/s)", k == 8 ? ">= 0.8" : "",
                 k == 8 ? 0.8 : 0, false, "sessions" + std::to_string(k), k == 8 ? ">= 0.8" : "",
                 k == 8 ? 0.8 : 0);
      for (int p = 0; p < pairs; ++p) {
        const SessionsPoint sp = sessions_point(c, t, sim, k);
        const double cg = gbps(static_cast<double>(sp.bytes), sp.wall_s);
        const double ut = udp.round_trip(dg);
        if (ut <= 0) continue;
        const double ug = gbps(2.0 * static_cast<double>(c.call_size), ut);
        r.add(cg, ug, ug);
        csv.row("sessions" + std::to_string(k), p, cg, ug, "Gb/s", cg / ug, ug);
      }
    }
  }

  Csv sum(c.out_dir, "ratio_summary.csv",
          "target,goal,pairs,ratio_min,ratio_median,ratio_max,met,call_median,udp_median,unit");
  say("  %-44s %-8s %8s %8s %8s  %-4s %10s %10s\n", "target", "goal", "min", "median", "max", "met",
      "call", "UDP");
  for (const RatioTarget& r : out) {
    const Summary s = summarize(r.ratios);
    const bool known = !r.ratios.empty() && !r.goal.empty();
    const bool met = r.at_most ? s.median <= r.limit : s.median >= r.limit;
    const std::string verdict = known ? (met ? "yes" : "no") : "n/a";
    const double call_median = summarize(r.call_values).median;
    const double udp_median = summarize(r.udp_values).median;
    say("  %-44s %-8s %8.3f %8.3f %8.3f  %-4s %10.3f %10.3f %s (medians)\n", r.name.c_str(),
        r.goal.c_str(), s.min, s.median, s.max, verdict.c_str(), call_median, udp_median,
        r.unit.c_str());
    sum.row(r.name, r.goal, r.ratios.size(), s.min, s.median, s.max, verdict, call_median,
            udp_median, r.unit);
  }
  // Against the loopback's floor (issue 31): the call's median over the pairs / the smallest UDP
  // round trip (nop64) or the best UDP pair (throughputs) of the run.
  Csv floor(c.out_dir, "floor_summary.csv",
            "target,floor_goal,pairs,call_median,udp_floor,unit,floor_ratio,met");
  say("\nagainst the loopback's floor: call median / UDP minimum round trip (latency) or best "
      "UDP pair (throughput)\n");
  say("  %-10s %-8s %10s %10s %-5s %8s  %s\n", "target", "goal", "call", "UDP floor", "unit",
      "ratio", "met");
  for (const RatioTarget& r : out) {
    if (r.call_values.empty()) continue;
    const double call_median = summarize(r.call_values).median;
    const double fr = r.floor_ratio();
    const bool met = r.at_most ? fr <= r.floor_limit : fr >= r.floor_limit;
    const std::string verdict = r.floor_goal.empty() ? "n/a" : (met ? "yes" : "no");
    say("  %-10s %-8s %10.3f %10.3f %-5s %8.3f  %s\n", r.key.c_str(), r.floor_goal.c_str(),
        call_median, r.udp_floor(), r.unit.c_str(), fr, verdict.c_str());
    floor.row(r.key, r.floor_goal, r.call_values.size(), call_median, r.udp_floor(), r.unit, fr,
              verdict);
  }
  return out;
}

}  // namespace naa::bench
