// The Ethernet link in front of NetPort (docs/sim/net_port.md "Link model"): one direction of a
// full-duplex link of `gbps` with a one-way propagation `latency`. A datagram occupies the wire
// for its Ethernet wire bytes (below) at the link rate, one after the other; it arrives (its last
// bit at the far end) `latency` after it left. Simulated time thereby follows the wire, not the
// moment a datagram happened to be read from the socket in wall time.
//
// Wire bytes of a RoCEv2 datagram of N bytes (BTH .. ICRC): Ethernet header 14 + IPv4 20 + UDP 8
// + N + FCS 4, padded to the 64-byte minimum frame, + preamble/SFD 8 + inter-frame gap 12
// (IEEE 802.3 clause 4.4.2). 4096 B of payload in a WRITE MIDDLE: 4112 + 66 = 4178 wire bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <systemc>

#include "naa/sim/sim_time.hpp"

namespace naa::sim {

// Bytes on the wire besides the datagram (headers 42 + FCS 4 + preamble/SFD 8 + IFG 12).
inline constexpr std::size_t kEthernetOverheadBytes = 66;
// The smallest Ethernet frame (with FCS), without preamble and gap.
inline constexpr std::size_t kEthernetMinFrameBytes = 64;

// Wire bytes a datagram of `datagram_bytes` (BTH .. ICRC) occupies.
[[nodiscard]] inline std::size_t ethernet_wire_bytes(std::size_t datagram_bytes) {
  const std::size_t frame = std::max<std::size_t>(datagram_bytes + 46, kEthernetMinFrameBytes);
  return frame + 20;
}

class LinkModel {
 public:
  // gbps 0 = no link model: a datagram arrives the moment it is handed over (the old behaviour).
  LinkModel(double gbps, sc_core::sc_time latency) : gbps_(gbps), latency_(latency) {}

  [[nodiscard]] bool enabled() const { return gbps_ > 0; }
  [[nodiscard]] sc_core::sc_time latency() const { return latency_; }
  // Time the wire is busy with a datagram of `bytes` (whole picoseconds, so every run rounds
  // the same way).
  // The last two sizes' times are kept (a call alternates data and ACK sizes; issue 31).
  [[nodiscard]] sc_core::sc_time serialisation(std::size_t datagram_bytes) const {
    if (!enabled()) return sc_core::SC_ZERO_TIME;
    if (datagram_bytes == kept_bytes_[0]) return kept_time_[0];
    if (datagram_bytes == kept_bytes_[1]) return kept_time_[1];
    return compute_serialisation(datagram_bytes);
  }
  // serialisation() of a size not kept: computed and kept. Out of line, so that send()'s usual
  // path (a kept size) needs no stack frame of its own (issue 31).
  [[gnu::noinline]] sc_core::sc_time compute_serialisation(std::size_t datagram_bytes) const {
    const double ps = static_cast<double>(ethernet_wire_bytes(datagram_bytes)) * 8000.0 / gbps_;
    const sc_core::sc_time t = ps_time(static_cast<std::uint64_t>(ps + 0.5));
    kept_bytes_[kept_next_] = datagram_bytes;
    kept_time_[kept_next_] = t;
    kept_next_ ^= 1U;
    return t;
  }

  struct Slot {
    sc_core::sc_time start;    // first bit onto the wire
    sc_core::sc_time end;      // last bit onto the wire (the sender's MAC is free again)
    sc_core::sc_time arrival;  // last bit at the far end: end + latency
  };
  // A datagram handed to the link at `now` starts when the wire is free (and not before `now`,
  // unless `back_to_back`: then it follows the previous one directly, as the next frame of a
  // stream whose sender keeps the wire busy).
  Slot send(sc_core::sc_time now, std::size_t datagram_bytes, bool back_to_back = false) {
    Slot s;
    s.start = (back_to_back || free_at_ > now) ? free_at_ : now;
    s.end = s.start + serialisation(datagram_bytes);
    s.arrival = s.end + latency_;
    free_at_ = s.end;
    busy_ += s.end - s.start;
    ++frames_;
    wire_bytes_ += ethernet_wire_bytes(datagram_bytes);
    return s;
  }
  // When the wire is free for the next datagram.
  [[nodiscard]] sc_core::sc_time free_at() const { return free_at_; }
  // The earliest time the next datagram can arrive: after the wire frees, one minimum frame and
  // the latency. Until then nothing unseen can reach the far end (the lookahead NetPort's stream
  // hold lets the model run to).
  [[nodiscard]] sc_core::sc_time next_arrival_bound() const {
    return free_at_ + serialisation(0) + latency_;
  }
  [[nodiscard]] std::uint64_t frames() const { return frames_; }
  [[nodiscard]] std::uint64_t wire_bytes() const { return wire_bytes_; }
  [[nodiscard]] sc_core::sc_time busy() const { return busy_; }

 private:
  double gbps_;
  sc_core::sc_time latency_;
  sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time busy_ = sc_core::SC_ZERO_TIME;
  std::uint64_t frames_ = 0;
  std::uint64_t wire_bytes_ = 0;
  mutable std::size_t kept_bytes_[2] = {~std::size_t{0}, ~std::size_t{0}};
  mutable sc_core::sc_time kept_time_[2];
  mutable unsigned kept_next_ = 0;
};

}  // namespace naa::sim
