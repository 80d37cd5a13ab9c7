// What a UdpRoce endpoint derives from the path: which retransmit timers its queue pairs run
// (UdpRoceOptions::timers; docs/reliability.md "Retransmit timers": measured from the round trip
// on the wall clock, the configured constants in simulated time, an EndpointClock) and the IRN
// BDP cap it offers (UdpRoceOptions::irn_bdp_cap = 0; docs/protocol.md 8.1), and how often its
// go-back-N requester asks for an ACK (UdpRoceOptions::ack_request_interval).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "naa/host/udp_roce.hpp"
#include "rc_qp.hpp"

namespace naa::host::detail {

// The IRN BDP cap (packets) for a path: rate x round trip / MTU, rounded up, in 1..4096.
inline std::uint16_t bdp_cap_packets(double link_gbps, std::chrono::nanoseconds rtt,
                                     std::uint32_t mtu) {
  const double bytes = link_gbps / 8.0 * static_cast<double>(rtt.count());  // Gb/s x ns / 8
  const double packets = std::ceil(bytes / static_cast<double>(std::max<std::uint32_t>(mtu, 1)));
  return static_cast<std::uint16_t>(std::clamp(packets, 1.0, 4096.0));
}

inline void apply_timer_rule(const UdpRoceOptions& o, RcConfig& cfg) {
  cfg.measured_timers = o.timers == RetransmitTimers::measured ||
                        (o.timers == RetransmitTimers::automatic && !o.clock);
  cfg.timer_floor = std::chrono::microseconds(o.timer_floor_us);
  // Half the 128-PSN window at most, so an ACK is always asked for before the window fills.
  cfg.ack_req_interval = std::clamp<std::uint32_t>(o.ack_request_interval, 1, kMaxUnackedPsns / 2);
  // The fabric's options (UdpRoceOptions): a window of at least 128 PSNs (so the ACK request
  // interval above still fits twice), exact IRN timeouts only with constant timers.
  if (o.gbn_max_unacked_psns != 0)
    cfg.max_unacked_psns =
        std::clamp<std::uint32_t>(o.gbn_max_unacked_psns, kMaxUnackedPsns, kHalfPsnSpace / 2);
  if (!cfg.measured_timers) {
    cfg.irn_rto_low = std::chrono::nanoseconds(o.irn_rto_low_ns);
    cfg.irn_rto_high = std::chrono::nanoseconds(o.irn_rto_high_ns);
  }
  cfg.wire_timers = o.wire_timers;
}

}  // namespace naa::host::detail
