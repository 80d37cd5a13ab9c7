// Retransmit timeouts from the measured round trip (docs/reliability.md "Retransmit timers"), for
// both RC implementations on the wall clock: a software host is scheduled, so its round trip is
// neither a NIC's nor constant, and a fixed timeout either fires spuriously or waits far too long.
//
// The estimator of RFC 6298 section 2: the first sample R gives SRTT = R, RTTVAR = R/2; each
// later one RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R. The base timeout
// is SRTT + max(G, 4 RTTVAR) (G = 1 us, our clock's useful granularity) clamped to [floor,
// ceiling]: the floor covers the scheduling delays a sample rarely shows
// (UdpRoceOptions::timer_floor_us), the ceiling is max(1 s, what the connection configured: the
// local ACK timeout or IRN's negotiated RTO_high). Each expiry without a new sample doubles it
// (RFC 6298 5.5), up to the ceiling.
// So a measured timer may be shorter than the constant (a fast path) or longer (a path slower
// than the NIC values the constants were made for). Samples follow Karn's rule: only from
// packets sent once (callers drop a sample when they retransmit).
//
// Not thread-safe (the QP's, under the endpoint lock).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace naa::host::detail {

// The longest a measured timeout gets unless the configured one is longer (RFC 6298 2.5 allows
// an upper bound; a path slower than this is not one a retransmission timer should wait on).
inline constexpr std::chrono::nanoseconds kMeasuredTimeoutCeiling{1000000000};

class RttEstimator {
 public:
  using ns = std::chrono::nanoseconds;

  // A first estimate from outside the data path (the CM REQ -> REP): it may lengthen the
  // configured timeout but not shorten it, until sample() brings a data-path round trip (a
  // queue of data packets takes longer to answer than one CM message).
  void seed(ns r) {
    sample(r);
    provisional_ = true;
  }
  void sample(ns r) {
    if (r < ns::zero()) return;
    provisional_ = false;
    if (!valid_) {
      srtt_ = r;
      rttvar_ = r / 2;
      valid_ = true;
    } else {
      const ns err = srtt_ > r ? srtt_ - r : r - srtt_;
      rttvar_ = (3 * rttvar_ + err) / 4;
      srtt_ = (7 * srtt_ + r) / 8;
    }
    backoff_ = 0;
    ++samples_;
  }
  // The timer expired: the next timeout is twice as long (until a new sample).
  void back_off() noexcept {
    if (backoff_ < kMaxBackoff) ++backoff_;
  }
  [[nodiscard]] bool valid() const noexcept { return valid_; }
  [[nodiscard]] bool provisional() const noexcept { return provisional_; }
  [[nodiscard]] ns srtt() const noexcept { return srtt_; }
  [[nodiscard]] ns rttvar() const noexcept { return rttvar_; }
  [[nodiscard]] std::uint64_t samples() const noexcept { return samples_; }
  // base = SRTT + max(G, 4 RTTVAR) in [floor, ceiling], doubled per expiry up to the ceiling:
  // the retry count (IBTA: expiries without progress) then still spans a peer's stall of a few
  // hundred milliseconds, as the constants did (with the backoff bounded by the constant, IRN at
  // 10 % loss under load ran out of retries). While provisional (seeded only) at least
  // `configured`.
  [[nodiscard]] ns timeout(ns floor, ns ceiling, ns configured) const noexcept {
    const ns t = std::min(base(floor, ceiling) * (std::int64_t{1} << backoff_), ceiling);
    return provisional_ ? std::max(t, configured) : t;
  }
  // The timeout before any backoff: SRTT + max(G, 4 RTTVAR) in [floor, ceiling].
  [[nodiscard]] ns base(ns floor, ns ceiling) const noexcept {
    return std::min(std::max(srtt_ + std::max(kGranularity, 4 * rttvar_), floor), ceiling);
  }

 private:
  static constexpr ns kGranularity{1000};
  static constexpr unsigned kMaxBackoff = 6;
  bool valid_ = false;
  bool provisional_ = false;
  ns srtt_{0};
  ns rttvar_{0};
  unsigned backoff_ = 0;
  std::uint64_t samples_ = 0;
};

}  // namespace naa::host::detail
