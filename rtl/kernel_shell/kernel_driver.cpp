// One kernel invocation through the kernel shell's ports (naa/rtl/kernel_driver.hpp,
// docs/rtl/kernel-shell.md "One call").
#include "naa/rtl/kernel_driver.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace naa::rtl {

namespace {

// SplitMix64: a small, seedable generator for the idle/back-pressure pattern (replayable from
// the seed, the same on every platform, unlike std::uniform_int_distribution).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // True with probability percent / 100 (never draws at 0 %).
  bool percent(std::uint32_t p) { return p != 0 && next() % 100 < p; }

 private:
  std::uint64_t s_;
};

// The src packets as beats: TKEEP full except on a packet's last beat (a prefix there); an empty
// packet is one beat with TKEEP = 0 and TLAST = 1.
class SrcBeats {
 public:
  SrcBeats(std::span<const std::span<const std::uint8_t>> packets, std::uint32_t width)
      : packets_(packets), width_(width) {}
  [[nodiscard]] bool done() const { return packet_ == packets_.size(); }
  [[nodiscard]] StreamBeat beat() const {
    StreamBeat b;
    const std::span<const std::uint8_t> p = packets_[packet_];
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(width_, p.size() - offset_));
    if (n != 0) std::memcpy(b.data.data(), p.data() + offset_, n);
    b.keep = keep_mask(n);
    b.last = offset_ + n == p.size();
    return b;
  }
  void advance() {
    offset_ += width_;
    if (offset_ >= packets_[packet_].size()) {
      ++packet_;
      offset_ = 0;
    }
  }
  [[nodiscard]] std::uint64_t beats_left() const {
    if (done()) return 0;
    std::uint64_t n = 0;
    for (std::size_t i = packet_; i < packets_.size(); ++i)
      n += std::max<std::uint64_t>((packets_[i].size() + width_ - 1) / width_, 1);
    return n - offset_ / width_;
  }

 private:
  std::span<const std::span<const std::uint8_t>> packets_;
  std::uint32_t width_;
  std::size_t packet_ = 0;
  std::size_t offset_ = 0;
};

}  // namespace

KernelInvocation run_kernel(KernelPort& port, std::uint32_t user,
                            std::span<const std::span<const std::uint8_t>> src,
                            std::span<const std::span<std::uint8_t>> dst,
                            const KernelDriveOptions& options) {
  const std::uint32_t w = port.width();
  const std::string who(port.block());
  KernelInvocation r;
  r.lengths.assign(dst.size(), 0);
  SplitMix64 rng(options.seed);
  SrcBeats beats(src, w);
  std::size_t packet = 0;  // the dst packet being received
  bool started = false;    // ap_ready seen with ap_start
  bool offering = false;   // src_TVALID is up: it stays, with the beat, until src_TREADY
  std::uint64_t idle = 0;
  KernelInputs in;
  in.user = user & 0xFFFFFFU;
  const auto fail = [&](std::string what) { r.error = who + ": " + std::move(what); };

  while (true) {
    in.ap_start = !started;
    if (!offering && !beats.done() && !rng.percent(options.src_idle_percent)) {
      offering = true;
      in.src = beats.beat();
    }
    in.src_valid = offering;
    in.dst_ready = !rng.percent(options.dst_stall_percent);
    const KernelOutputs out = port.step(in);
    ++r.cycles;
    bool progress = false;
    if (in.ap_start && out.ap_ready) {
      started = true;
      progress = true;
    }
    if (offering && out.src_ready) {
      beats.advance();
      offering = false;
      progress = true;
    }
    if (out.dst_valid && in.dst_ready) {
      progress = true;
      if (packet >= dst.size()) {
        fail("gave a dst packet more than the call's " + std::to_string(dst.size()) + " output(s)");
        return r;
      }
      const std::uint64_t keep = out.dst.keep & keep_mask(w);
      const auto n = static_cast<std::uint32_t>(std::popcount(keep));
      if (keep != keep_mask(n)) {
        fail("dst_TKEEP " + std::to_string(keep) + " is not a prefix (packet " +
             std::to_string(packet) + ")");
        return r;
      }
      if (!out.dst.last && n != w) {
        fail("a partial dst beat (" + std::to_string(n) + " of " + std::to_string(w) +
             " bytes) before TLAST (packet " + std::to_string(packet) + ")");
        return r;
      }
      const std::span<std::uint8_t> buf = dst[packet];
      const std::uint32_t at = r.lengths[packet];
      const std::size_t fit = at >= buf.size() ? 0 : std::min<std::size_t>(n, buf.size() - at);
      if (fit != 0) std::memcpy(buf.data() + at, out.dst.data.data(), fit);
      if (fit < n) r.overflow = true;
      r.lengths[packet] = at + n;
      if (out.dst.last) ++packet;
    }
    if (out.ap_done) {
      if (!started) {
        fail("ap_done before the call was accepted (ap_ready)");
      } else if (!beats.done() || offering) {
        fail("ap_done with " + std::to_string(beats.beats_left()) + " src beat(s) not taken");
      } else if (packet < dst.size()) {
        fail("ap_done after " + std::to_string(packet) + " of " + std::to_string(dst.size()) +
             " dst packet(s)");
      }
      r.rc = out.ap_return;
      return r;
    }
    idle = progress ? 0 : idle + 1;
    if (idle >= options.stall_cycles) {
      fail("stalled: nothing moved for " + std::to_string(idle) + " cycles (" +
           std::to_string(beats.beats_left()) + " src beat(s) left, " + std::to_string(packet) +
           " of " + std::to_string(dst.size()) + " dst packet(s) received, ap_ready " +
           (started ? "seen" : "not seen") + ")");
      return r;
    }
  }
}

void reset_kernel(KernelPort& port, std::uint32_t cycles) {
  KernelInputs in;
  in.rst_n = false;
  for (std::uint32_t i = 0; i < cycles; ++i)
    (void)port.step(in);
}

}  // namespace naa::rtl
