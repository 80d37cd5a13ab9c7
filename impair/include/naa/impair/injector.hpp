// One direction's fault injector (docs/adr/0003): seeded decisions per datagram and the bit flip of
// a corrupted one. Per datagram it draws five numbers (loss, dup, reorder, corrupt, bit) whatever
// the outcome, so the decisions depend only on the seed and the datagram sequence: naa-sim and the
// host endpoint, given the same seed and traffic, decide identically. With FaultKey::packet the
// five numbers come from the packet's key instead (decide(datagram), fault_spec.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <random>
#include <span>
#include <string_view>
#include <unordered_map>

#include "naa/impair/fault_spec.hpp"

namespace naa::impair {

enum class Direction : std::uint8_t { rx, tx };

// splitmix64: decorrelates generators derived from one seed.
[[nodiscard]] std::uint64_t mix_seed(std::uint64_t x) noexcept;
// The seed of one direction's injector from a port's fault seed ("RX" / "TX" tags), as both sides
// have always derived it.
[[nodiscard]] std::uint64_t direction_seed(std::uint64_t seed, Direction d) noexcept;

class Injector {
 public:
  struct Decision {
    bool drop = false;
    bool duplicate = false;
    bool reorder = false;
    bool corrupt = false;
    std::uint64_t bit = 0;  // the bit to flip (mod datagram bits) when corrupt
  };
  struct Counters {
    std::uint64_t seen = 0, dropped = 0, duplicated = 0, reordered = 0, corrupted = 0;
    std::uint64_t redrawn = 0;      // undetectable flips undone and drawn again
    std::uint64_t already_bad = 0;  // corrupted datagrams that the receiver rejected already
    std::uint64_t keyed = 0;        // decided by the packet's key (FaultKey::packet)
  };

  Injector(const FaultSpec& spec, std::uint64_t seed) : spec_(spec), seed_(seed), rng_(seed) {}

  [[nodiscard]] bool active() const noexcept { return spec_.active(); }
  [[nodiscard]] const FaultSpec& spec() const noexcept { return spec_; }
  // Changes the probabilities (a link that goes dead mid-run); the generator carries on.
  void set_spec(const FaultSpec& spec) noexcept { spec_ = spec; }
  [[nodiscard]] Decision decide();
  // The decision for this datagram (BTH first) as the spec's keying says: by the sequence
  // (decide()) or by the packet's key and attempt (decide_packet()).
  [[nodiscard]] Decision decide(std::span<const std::uint8_t> datagram);
  // The decision for the `attempt`-th (0 = first) transmission of packet (qpn, psn, ack):
  // a function of the seed and these alone.
  [[nodiscard]] Decision decide_packet(std::uint32_t qpn, std::uint32_t psn, bool ack,
                                       std::uint32_t attempt);

  // Flips one bit of data[0, size) such that `rejects(bytes)` (the receiver's check, e.g. the ICRC
  // with the real 4-tuple) holds. The ICRC with an unknown IPv4 ID is only 16-bit strong
  // (PROTOCOL.md 2), so about one flip in 65536 would pass: such a flip is undone and another bit
  // taken (counted in redrawn), up to 16 tries. The model is a detectable line error.
  template <class Rejects>
  void corrupt(std::uint8_t* data, std::size_t size, std::uint64_t bit, Rejects&& rejects) {
    if (size == 0) return;
    // Corrupted upstream (by the peer's injector): the receiver drops it once, however many flips
    // it carries; counted for exact accounting.
    if (rejects(std::span<const std::uint8_t>(data, size))) ++counters_.already_bad;
    const std::uint64_t bits = std::uint64_t{size} * 8;
    for (std::uint64_t attempt = 0; attempt < 16; ++attempt) {
      const std::uint64_t b = (bit + attempt * 0x9E3779B1U) % bits;
      data[b / 8] ^= static_cast<std::uint8_t>(1U << (b % 8));
      if (rejects(std::span<const std::uint8_t>(data, size))) return;
      data[b / 8] ^= static_cast<std::uint8_t>(1U << (b % 8));  // undetectable: take another bit
      ++counters_.redrawn;
    }
  }

  [[nodiscard]] const Counters& counters() const noexcept { return counters_; }
  // The statistics lines <prefix>datagrams=, loss=, dup=, reorder=, corrupt=, corrupt_redrawn=,
  // corrupt_already_bad= (naa-sim's net_port.fault_rx./fault_tx. keys).
  void report(std::ostream& os, std::string_view prefix) const;

 private:
  [[nodiscard]] Decision apply(const std::uint64_t (&r)[5]);

  FaultSpec spec_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  Counters counters_;
  // FaultKey::packet: transmissions seen per packet key (the attempt of the next one). Cleared
  // when it reaches kMaxTrackedPackets (a packet seen again after that counts as a first try).
  std::unordered_map<std::uint64_t, std::uint32_t> attempts_;
  static constexpr std::size_t kMaxTrackedPackets = std::size_t{1} << 20;
};

}  // namespace naa::impair
