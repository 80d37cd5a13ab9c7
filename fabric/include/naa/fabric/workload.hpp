// Workloads on the fabric and their statistics (docs/fabric.md "Workloads"): Poisson flow
// arrivals at a target load with the IRN paper's flow-size distributions, or an M:1 incast; each
// flow an RDMA WRITE between two host library endpoints on its own RC QP (go-back-N or IRN), its
// completion time measured at the sender (the last ACK). Outputs one folder: fct.csv,
// summary.csv, queues.csv.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "naa/fabric/network.hpp"

namespace naa::fabric {

enum class WorkloadKind : std::uint8_t { websearch, datamining, incast };

// A flow-size distribution: (bytes, cumulative probability) points, linearly interpolated.
using Cdf = std::vector<std::pair<double, double>>;
// Web search (DCTCP paper, Alizadeh et al. SIGCOMM 2010, Fig. 5) and data mining (VL2, Greenberg
// et al. SIGCOMM 2009, Fig. 2), the two distributions of the IRN paper's section 4, as tabulated
// in docs/fabric.md "Flow sizes" with their provenance.
[[nodiscard]] const Cdf& websearch_cdf();
[[nodiscard]] const Cdf& datamining_cdf();
[[nodiscard]] double cdf_mean(const Cdf& cdf);
// Inverse-transform sample for u in [0, 1).
[[nodiscard]] double cdf_sample(const Cdf& cdf, double u);

struct WorkloadConfig {
  WorkloadKind kind = WorkloadKind::websearch;
  double load = 0.7;  // of every host's link rate (Poisson)
  int flows = 200;    // flows to generate (Poisson)
  // Incast: `incast_rounds` rounds of M senders to one receiver (the first host when there is
  // no background, else a random one per round), each sending incast_bytes at once; with
  // background_load > 0 also Poisson web-search flows (`flows` of them) at that load, the rounds
  // spread evenly over their arrivals (the victims of PFC's congestion spreading).
  int incast_senders = 8;
  std::uint64_t incast_bytes = 256 * 1024;
  int incast_rounds = 1;
  double background_load = 0;
  double max_flow_bytes = 0;  // > 0: larger samples are clipped (documented per scale)
  bool irn = false;
  std::uint32_t mtu = 1024;  // the IRN paper's MTU
  // Retransmit timeouts, exponents e of 4.096 us x 2^e. IRN: RTO_high 2^6 = 262 us and RTO_low
  // 2^5 = 131 us (the IRN paper's 320 and 100 us, to the nearest the CM can carry). Go-back-N
  // (RoCE): 2^10 = 4.2 ms (RoCE NICs default far higher, 2^14 and more; a short one fires
  // spuriously while a PFC pause or a rate limiter holds the window in the NIC).
  std::uint8_t rto_exponent = 6;
  std::uint8_t gbn_rto_exponent = 10;
  std::uint8_t irn_rto_low_exponent = 5;  // 131 us (IRN RTO_low)
  std::uint16_t irn_bdp_cap = 110;        // packets (IRN paper section 4.1)
  // Go-back-N (RoCE) requesters ask for an ACK every this many packets and on a message's last
  // (host::UdpRoceOptions::ack_request_interval): the host library's 64 by default; 1 is the
  // IRN paper's RoCE, which ACKs per packet as IRN does (its section 5).
  std::uint32_t gbn_ack_request_interval = 64;
  // IRN's RTO_low / RTO_high as exact durations (ns; 0: the exponents above); the IRN paper's
  // 100 and 320 us (host::UdpRoceOptions::irn_rto_low_ns / irn_rto_high_ns).
  std::uint32_t irn_rto_low_ns = 0, irn_rto_high_ns = 0;
  // Go-back-N's window, most unacknowledged PSNs (0: PROTOCOL.md 3's 128). The IRN paper's RoCE
  // has no BDP cap (host::UdpRoceOptions::gbn_max_unacked_psns).
  std::uint32_t gbn_window = 0;
  // IRN's retransmit timer runs from when the NIC puts a packet on the wire, not from when the
  // endpoint hands it over (host::UdpRoceOptions::wire_timers).
  bool wire_timers = false;
  // Retries per QP before a flow fails with "transport retry counter exceeded" (the CM's
  // retry_cnt, 0..7; RoCE NICs default to 7).
  std::uint8_t retry_count = 7;
  std::uint64_t seed = 1;
  double start_us = 0;  // arrivals start this long after setup
  // NAA calls mixed in: this many vadd_i32 calls (kernel 4) of naa_call_bytes per input, spread
  // evenly over the flows' arrivals, host i % hosts calling NAA i % NAAs through a host::Session
  // (one per pair, its connect and MRSP before its first call); every result checked.
  int naa_calls = 0;
  std::uint32_t naa_call_bytes = 16 * 1024;
};

struct FlowRecord {
  int id = 0;
  int src = 0, dst = 0;  // node indices
  std::uint64_t bytes = 0;
  Ps start = 0;
  Ps end = -1;  // -1: not finished
  double ideal_ns = 0;
  bool failed = false;
  std::string error;  // failed: the first error completion's (or post_send's) message
  Ps failed_at = -1;  // ... and when it came
  bool irn = false;   // both ends IRN (the connection negotiated it)
};

struct NaaCallRecord {
  int id = 0;
  int client = 0, naa = 0;  // node indices
  std::uint32_t bytes = 0;  // per input
  Ps start = 0, end = 0;    // the call alone (the session was set up before)
  std::uint32_t return_code = 0;
  bool verified = false;  // every output element equals the sum of its inputs
};

struct WorkloadResult {
  std::vector<FlowRecord> flows;
  std::vector<NaaCallRecord> naa_calls;
  std::uint64_t retransmitted = 0;  // host library counters, summed over hosts
  std::uint64_t timeouts = 0;
  std::uint64_t setup_ps = 0;  // simulated time of connection setup
  Ps end = 0;                  // simulated time the last flow finished
  bool all_finished = false;
};

// Runs the workload on `net` (every host opens an endpoint). Throws on setup failures.
WorkloadResult run_workload(Network& net, const WorkloadConfig& cfg);

struct RunLabels {
  std::string workload, transport;
  bool pfc = false, dcqcn = false;
};
// Writes dir/fct.csv, dir/summary.csv, dir/queues.csv.
void write_results(const std::string& dir, const Network& net, const WorkloadResult& r,
                   const RunLabels& labels);
// The summary line's figures (summary.csv, also printed).
struct Summary {
  std::size_t flows = 0, finished = 0;
  double avg_fct_ns = 0, p99_fct_ns = 0, avg_slowdown = 0, p99_slowdown = 0;
};
[[nodiscard]] Summary summarize(const WorkloadResult& r);

}  // namespace naa::fabric
