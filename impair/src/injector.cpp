#include "naa/impair/injector.hpp"

#include <ostream>

namespace naa::impair {
namespace {

// A uniform draw in [0, 1) from 53 bits.
double unit(std::uint64_t r) {
  return static_cast<double>(r >> 11) * 0x1.0p-53;
}

}  // namespace

std::uint64_t mix_seed(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t direction_seed(std::uint64_t seed, Direction d) noexcept {
  return mix_seed(seed ^ (d == Direction::rx ? 0x5258ULL : 0x5458ULL));  // "RX", "TX"
}

Injector::Decision Injector::decide() {
  const std::uint64_t r[5] = {rng_(), rng_(), rng_(), rng_(), rng_()};
  return apply(r);
}

Injector::Decision Injector::decide(std::span<const std::uint8_t> datagram) {
  // BTH (PROTOCOL.md 1, IBTA 9.2): opcode byte 0, destination QP bytes 5..7, PSN bytes 9..11.
  if (spec_.key != FaultKey::packet || datagram.size() < 12) return decide();
  const std::uint8_t opcode = datagram[0];
  const std::uint32_t qpn =
      (std::uint32_t{datagram[5]} << 16) | (std::uint32_t{datagram[6]} << 8) | datagram[7];
  const std::uint32_t psn =
      (std::uint32_t{datagram[9]} << 16) | (std::uint32_t{datagram[10]} << 8) | datagram[11];
  // ACKs (0x11 Acknowledge, 0x12 Atomic Acknowledge) number the other side's PSNs: keyed apart
  // from requests with the same PSN.
  const bool ack = opcode == 0x11 || opcode == 0x12;
  const std::uint64_t key =
      (std::uint64_t{qpn} << 25) | (std::uint64_t{psn} << 1) | (ack ? 1U : 0U);
  if (attempts_.size() >= kMaxTrackedPackets) attempts_.clear();
  const std::uint32_t attempt = attempts_[key]++;
  return decide_packet(qpn, psn, ack, attempt);
}

Injector::Decision Injector::decide_packet(std::uint32_t qpn, std::uint32_t psn, bool ack,
                                           std::uint32_t attempt) {
  ++counters_.keyed;
  // A counter-based generator: splitmix64 over the seed and the key, so the numbers of one
  // transmission do not depend on any other.
  std::uint64_t x = mix_seed(seed_ ^ mix_seed((std::uint64_t{qpn} << 32) | psn) ^
                             mix_seed((std::uint64_t{attempt} << 1) | (ack ? 1U : 0U)));
  std::uint64_t r[5];
  for (auto& v : r) {
    x = mix_seed(x);
    v = x;
  }
  return apply(r);
}

Injector::Decision Injector::apply(const std::uint64_t (&r)[5]) {
  ++counters_.seen;
  const std::uint64_t r_loss = r[0], r_dup = r[1], r_reorder = r[2], r_corrupt = r[3], r_bit = r[4];
  Decision d;
  d.drop = unit(r_loss) < spec_.loss;
  if (d.drop) {
    ++counters_.dropped;
    return d;
  }
  d.duplicate = unit(r_dup) < spec_.dup;
  d.reorder = unit(r_reorder) < spec_.reorder;
  d.corrupt = unit(r_corrupt) < spec_.corrupt;
  d.bit = r_bit;
  counters_.duplicated += d.duplicate ? 1U : 0U;
  counters_.reordered += d.reorder ? 1U : 0U;
  counters_.corrupted += d.corrupt ? 1U : 0U;
  return d;
}

void Injector::report(std::ostream& os, std::string_view prefix) const {
  os << prefix << "datagrams=" << counters_.seen << '\n'
     << prefix << "loss=" << counters_.dropped << '\n'
     << prefix << "dup=" << counters_.duplicated << '\n'
     << prefix << "reorder=" << counters_.reordered << '\n'
     << prefix << "corrupt=" << counters_.corrupted << '\n'
     << prefix << "corrupt_redrawn=" << counters_.redrawn << '\n'
     << prefix << "corrupt_already_bad=" << counters_.already_bad << '\n';
  if (spec_.key == FaultKey::packet) os << prefix << "keyed=" << counters_.keyed << '\n';
}

}  // namespace naa::impair
