// naa-bench --loss-sweep (issue 16 item 5; docs/performance.md "Loss sweep: go-back-N vs IRN"):
// for go-back-N and IRN at 0, 1, 5 and 10 % loss, a fresh naa-sim and host endpoint run a 64 MiB
// RDMA WRITE stream (one nop call with a 64 MiB input) and 50 add1 calls of 1 MiB (inout). The
// losses are injected on the host's sends, keyed on (QPN, PSN, attempt) (FaultKey::packet, docs/
// adr/0003), with the same seed for both transports, so both meet the same losses: the same
// packets are lost on their first transmission whichever transport sends them. Writes loss.csv:
//   transport,loss_pct,bytes,sim_goodput_gbps,wall_goodput_gbps,retransmitted,injected_losses,
//   timeouts,p50_call_us,p99_call_us
// retransmitted, injected_losses and timeouts are the host endpoint's counters (the direction
// with the losses); sim_goodput uses the NAA's simulated time (work plus peer-wait time) between
// two statistics snapshots around the run, wall_goodput the host's wall clock.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/tools/sim_process.hpp"
#include "sim_probe.hpp"

namespace naa::bench {

struct LossPoint {
  std::string transport;
  double loss_pct = 0;
  std::uint64_t bytes = 0;
  double sim_gbps = 0, wall_gbps = 0;
  std::uint64_t retransmitted = 0, injected = 0, timeouts = 0;
  double p50_us = 0, p99_us = 0;
};

inline double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// The host's retransmit timers in the wall-clock sweep (docs/reliability.md "Retransmit timers"):
// measured from the round trip (the library's default on the wall clock) or the constants.
struct LossTimers {
  bool constants = false;
  std::uint32_t floor_us = 0;  // 0: UdpRoceOptions' default
};

// One point; throws naa::host::Error or naa::tools::SimProcessError on failure.
inline LossPoint loss_point(const Config& c, const std::string& sim_path,
                            const std::string& stats_file, bool irn, double loss,
                            std::uint64_t stream_bytes, int calls, std::uint64_t call_bytes,
                            const LossTimers& timers = {}) {
  naa::tools::SimLaunch launch;
  launch.binary = sim_path;
  launch.listen = local_ip(c, 1);
  launch.stats_file = stats_file;
  launch.args = {"--seed", "1", "--irn", irn ? "on" : "off"};
  naa::tools::SimProcess sim(launch);
  if (!sim.ready()) throw naa::tools::SimProcessError("naa-sim did not start");

  host::UdpRoceOptions uo;
  uo.local_ip = host::parse_ipv4(local_ip(c, 2));
  uo.seed = 11;  // same QPNs and PSNs for both transports
  uo.fault_seed = 7;
  uo.fault_tx.loss = loss;
  uo.fault_tx.key = impair::FaultKey::packet;
  uo.irn = irn;
  uo.timers =
      timers.constants ? host::RetransmitTimers::constants : host::RetransmitTimers::measured;
  if (timers.floor_us != 0) uo.timer_floor_us = timers.floor_us;
  std::error_code ec;
  std::string detail;
  auto transport = host::open_udp_roce(uo, ec, &detail);
  if (!transport) throw host::Error(ec, detail);

  host::SessionOptions so;
  so.naa_address = launch.listen;
  so.local_ack_timeout = 14;  // 67 ms (IRN: RTO_high; RTO_low 16.8 ms)
  so.call_timeout = std::chrono::milliseconds(600000);
  so.path_mtu = c.mtu;

  const auto before = naa::tools::parse_sim_stats(sim.snapshot());
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> call_us;
  {
    std::vector<std::uint8_t> in(stream_bytes, 0x5A), out(4);
    host::Session s(transport, so, {host::Region::input(in), host::Region::output(out)});
    if (s.call(3).return_code != 0) throw host::Error(host::Errc::timeout, "stream call failed");
  }
  {
    std::vector<std::uint8_t> buf(call_bytes, 1);
    host::Session s(transport, so, {host::Region::inout(buf)});
    for (int i = 0; i < calls; ++i) {
      const auto a = std::chrono::steady_clock::now();
      if (s.call(1).return_code != 0) throw host::Error(host::Errc::timeout, "add1 call failed");
      call_us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
    }
    if (buf[0] != static_cast<std::uint8_t>(1 + calls)) {
      throw host::Error(host::Errc::mrsp_bad_reply, "add1 results wrong");
    }
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto after = naa::tools::parse_sim_stats(sim.snapshot());
  const SimDelta d = delta(before, after, 0);
  const host::TransportStats hs = transport->stats();

  LossPoint p;
  p.transport = irn ? "irn" : "go-back-n";
  p.loss_pct = loss * 100;
  // Bytes the host delivered to the NAA and got back: the stream and the calls' 1 MiB each way.
  p.bytes = stream_bytes + 2 * call_bytes * static_cast<std::uint64_t>(calls);
  const double sim_ns = d.time_ns + d.peer_wait_ns;
  p.sim_gbps = sim_ns > 0 ? static_cast<double>(p.bytes) * 8 / sim_ns : 0;
  p.wall_gbps = wall_s > 0 ? static_cast<double>(p.bytes) * 8 / wall_s / 1e9 : 0;
  p.retransmitted = hs.retransmitted_packets;
  p.injected = hs.fault_tx_loss;
  p.timeouts = hs.timeouts;
  p.p50_us = percentile(call_us, 0.5);
  p.p99_us = percentile(call_us, 0.99);
  return p;
}

// Runs the sweep into <out_dir>/loss.csv (and loss.gp, a gnuplot script for loss.png). 0 done,
// 3 on a failed point.
inline int run_loss_sweep(const Config& c, const std::string& sim_path, const std::string& tmp_dir,
                          std::uint64_t stream_bytes, const LossTimers& timers = {}) {
  const std::string dir = c.out_dir.empty() ? "." : c.out_dir;
  const std::string csv = dir + "/loss.csv";
  std::ofstream f(csv);
  f << "transport,loss_pct,bytes,sim_goodput_gbps,wall_goodput_gbps,retransmitted,"
       "injected_losses,timeouts,p50_call_us,p99_call_us\n";
  for (const double loss : {0.0, 0.01, 0.05, 0.10}) {
    for (const bool irn : {false, true}) {
      LossPoint p;
      try {
        p = loss_point(c, sim_path, tmp_dir + "/loss.stats", irn, loss, stream_bytes, 50, 1U << 20,
                       timers);
      } catch (const std::exception& e) {
        std::cerr << "naa-bench: loss sweep " << (irn ? "irn" : "go-back-n") << " at " << loss * 100
                  << "%: " << e.what() << "\n";
        return 3;
      }
      char line[256];
      std::snprintf(line, sizeof line, "%s,%g,%llu,%.3f,%.3f,%llu,%llu,%llu,%.0f,%.0f",
                    p.transport.c_str(), p.loss_pct, static_cast<unsigned long long>(p.bytes),
                    p.sim_gbps, p.wall_gbps, static_cast<unsigned long long>(p.retransmitted),
                    static_cast<unsigned long long>(p.injected),
                    static_cast<unsigned long long>(p.timeouts), p.p50_us, p.p99_us);
      f << line << "\n" << std::flush;
      // Wall figures depend on what else the machine runs: the load average beside each point.
      double load[3] = {0, 0, 0};
      (void)::getloadavg(load, 3);
      std::cout << line << "  # load average " << load[0] << " " << load[1] << " " << load[2]
                << (timers.constants ? ", constant timers" : ", measured timers") << "\n"
                << std::flush;
    }
  }
  std::ofstream gp(dir + "/loss.gp");
  gp << "# gnuplot " << dir << "/loss.gp -> loss.png (docs/performance.md)\n"
     << "set terminal pngcairo size 900,500\nset output '" << dir << "/loss.png'\n"
     << "set datafile separator ','\nset key autotitle columnhead\n"
     << "set xlabel 'loss (%)'\nset ylabel 'simulated goodput (Gb/s)'\nset grid\n"
     << "plot '" << csv << "' using (strcol(1) eq 'go-back-n' ? $2 : 1/0):4 with linespoints "
     << "title 'go-back-N', '' using (strcol(1) eq 'irn' ? $2 : 1/0):4 with linespoints "
     << "title 'IRN'\n";
  std::cout << "loss sweep: " << csv << " (plot: gnuplot " << dir << "/loss.gp)\n";
  return 0;
}

}  // namespace naa::bench
