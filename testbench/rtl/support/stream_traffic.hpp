// Stream traffic for the kernel testbenches: a source that offers beats under random idle cycles
// (valid held with a stable payload until accepted, as the valid/ready rules require) and a sink
// that applies random back-pressure and collects packets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "naa/rtl/stream.hpp"
#include "rtl_seed.hpp"

namespace naa::testbench::rtl {

using namespace naa::rtl;  // the blocks under test and their port types

using Bytes = std::vector<std::uint8_t>;

// How a packet is cut into beats.
enum class BeatShape {
  full,    // full beats, a partial last beat (the common shape)
  ragged,  // random prefix lengths per beat, and empty (keep = 0) beats; crc32 accepts these
};

// Beats of one packet. Bytes outside keep are random garbage (the blocks must ignore them). An
// empty packet is one beat with keep = 0 and last = 1.
inline std::vector<StreamBeat> to_beats(const Bytes& packet, std::uint32_t width, BeatShape shape,
                                        Rng& rng) {
  std::vector<StreamBeat> beats;
  std::size_t pos = 0;
  do {
    StreamBeat b;
    for (std::uint32_t i = 0; i < width; ++i)
      b.data[i] = uniform<std::uint8_t>(rng, 0, 255);
    std::size_t n = std::min<std::size_t>(width, packet.size() - pos);
    if (shape == BeatShape::ragged && n > 0 && chance(rng, 0.5))
      n = uniform<std::size_t>(rng, 0, n);
    for (std::size_t i = 0; i < n; ++i)
      b.data[i] = packet[pos + i];
    b.keep = keep_mask(static_cast<std::uint32_t>(n));
    pos += n;
    b.last = pos == packet.size();
    beats.push_back(b);
  } while (pos < packet.size());
  return beats;
}

inline Bytes random_bytes(Rng& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b)
    x = uniform<std::uint8_t>(rng, 0, 255);
  return b;
}

class StreamSource {
 public:
  explicit StreamSource(Rng& rng) : rng_(rng) {}

  // Queue a packet's beats; `user` travels with each beat (e.g. add_const's addend).
  void push(const std::vector<StreamBeat>& beats, std::uint32_t user = 0) {
    for (const auto& b : beats)
      beats_.push_back({b, user});
  }
  void set_rate(double p_valid) { p_valid_ = p_valid; }

  // Decide this cycle's valid: once valid, it stays until the beat is accepted.
  void begin_cycle() {
    if (!valid_ && !beats_.empty()) valid_ = chance(rng_, p_valid_);
  }
  [[nodiscard]] bool valid() const { return valid_; }
  // The offered beat; while !valid() a random payload (don't-care).
  [[nodiscard]] StreamBeat beat() {
    if (valid_) return beats_.front().beat;
    StreamBeat junk;
    for (auto& x : junk.data)
      x = uniform<std::uint8_t>(rng_, 0, 255);
    junk.keep = rng_();
    junk.last = chance(rng_, 0.5);
    return junk;
  }
  // End of cycle: was the beat taken (valid && ready)?
  void end_cycle(bool ready) {
    if (valid_ && ready) {
      beats_.pop_front();
      valid_ = false;
    }
  }
  [[nodiscard]] std::uint32_t user() const { return beats_.empty() ? 0 : beats_.front().user; }
  [[nodiscard]] bool idle() const { return beats_.empty(); }

 private:
  Rng& rng_;
  struct Queued {
    StreamBeat beat;
    std::uint32_t user;
  };
  std::deque<Queued> beats_;
  double p_valid_ = 1.0;
  bool valid_ = false;
};

class StreamSink {
 public:
  StreamSink(Rng& rng, std::uint32_t width) : rng_(rng), width_(width) {}
  void set_rate(double p_ready) { p_ready_ = p_ready; }
  bool begin_cycle() {
    ready_ = chance(rng_, p_ready_);
    return ready_;
  }
  [[nodiscard]] bool ready() const { return ready_; }

  // Called with the cycle's output; collects the beat if it moved. Returns false if the source
  // side broke the valid/ready rules (valid dropped, or payload changed, before acceptance).
  bool end_cycle(bool valid, const StreamBeat& beat) {
    bool ok = true;
    if (pending_ && (!valid || !(beat == held_))) ok = false;
    if (valid && ready_) {
      for (std::uint32_t i = 0; i < width_; ++i) {
        if ((beat.keep >> i) & 1U) current_.push_back(beat.data[i]);
      }
      ++beats_;
      if (beat.last) {
        packets_.push_back(std::move(current_));
        current_.clear();
      }
      pending_ = false;
    } else if (valid) {
      pending_ = true;
      held_ = beat;
    } else {
      pending_ = false;
    }
    return ok;
  }
  [[nodiscard]] const std::vector<Bytes>& packets() const { return packets_; }
  [[nodiscard]] std::uint64_t beats() const { return beats_; }

 private:
  Rng& rng_;
  std::uint32_t width_;
  double p_ready_ = 1.0;
  bool ready_ = false;
  bool pending_ = false;
  StreamBeat held_;
  Bytes current_;
  std::vector<Bytes> packets_;
  std::uint64_t beats_ = 0;
};

// Throughput/back-pressure phases every kernel testbench walks through: (p_valid, p_ready).
struct Phase {
  double p_valid;
  double p_ready;
};
inline constexpr Phase kPhases[] = {{1.0, 1.0}, {0.5, 1.0}, {1.0, 0.3}, {0.3, 0.5}, {0.9, 0.9}};

}  // namespace naa::testbench::rtl
