// naa-cosim --loss-sweep DIR (issue 16 item 5; docs/performance.md "Loss sweep: go-back-N vs
// IRN"): go-back-N and IRN at each loss rate, co-simulated (docs/adr/0004) so that both sides'
// retransmit timers run in simulated time and can have realistic values (tens to hundreds of
// microseconds, as in the IRN paper) instead of the milliseconds a wall-clock host needs against a
// slower-than-real-time model. Each point: a fresh co-simulation (a forked child: SystemC
// elaborates once per process), a WRITE stream (one crc32 call on one input region, its CRC
// checked) and `calls` add1 calls on one inout region, every result byte verified. Losses on both
// directions' sends (the host's and the NAA's), keyed on (QPN, PSN, attempt) (docs/adr/0003) with
// one seed for both transports, so both lose the same first transmissions. Writes DIR/loss.csv
//   transport,loss_pct,bytes,sim_goodput_gbps,wall_goodput_gbps,retransmitted,injected_losses,
//   timeouts,p50_call_us,p99_call_us
// sim_goodput_gbps: bytes (stream + each call's region both ways) over the simulated time of the
// calls (connect, MRSP and disconnect excluded); wall_goodput_gbps: the same over their wall time
// (the host and the model in one process: not repeatable); retransmitted, injected_losses and
// timeouts: both sides' counters summed; p50/p99_call_us: the add1 calls, simulated time.
// And DIR/loss.svg (drawn here: no plotting tool needed) plus DIR/loss.gp (gnuplot, optional).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "naa/cosim/cosim.hpp"

namespace naa::cosim {

struct LossSweepOptions {
  std::string out_dir;  // loss.csv, loss.svg, loss.gp go here
  std::vector<double> loss_pct = {0, 1, 5, 10};
  std::uint64_t stream_bytes = 64ULL << 20;  // the WRITE stream's input region
  int calls = 50;                            // add1 calls ...
  std::uint64_t call_bytes = 1ULL << 20;     // ... on one inout region of this size
  std::uint32_t mtu = 4096;
  // Retransmit timeouts, exponents e of 4.096 us x 2^e (IBTA local ACK timeout). rto_high is the
  // connection's local ACK timeout: go-back-N's only timeout (both sides) and IRN's RTO_high;
  // rto_low is IRN's RTO_low, used while at most low_threshold (N) packets are in flight.
  std::uint8_t rto_high = 7;  // 524 us
  std::uint8_t rto_low = 5;   // 131 us
  std::uint8_t low_threshold = 3;
  std::uint64_t seed = 1;  // both sides' secrets and PSNs, and the fault decisions
  bool quiet = false;
  bool stats = false;  // each point's model and host statistics on stderr
};

// Runs the sweep on `cfg` (its fault specs are replaced per point). Returns 0, 1 if a call failed
// or a result was wrong, 3 on a session or file error.
int run_loss_sweep(const CosimConfig& cfg, const LossSweepOptions& o);

}  // namespace naa::cosim
