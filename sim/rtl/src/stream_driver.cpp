#include "stream_driver.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace naa::sim::rtl_driver {
namespace {

// The beats of a sequence of packets, in order.
class BeatSource {
 public:
  BeatSource(std::span<const std::span<std::uint8_t>> packets, std::uint32_t width)
      : packets_(packets), width_(width) {
    skip_empty();
  }
  [[nodiscard]] bool done() const { return packet_ == packets_.size(); }
  // The current beat (valid only while !done()).
  [[nodiscard]] rtl::StreamBeat beat() const {
    rtl::StreamBeat b;
    const std::span<std::uint8_t> p = packets_[packet_];
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(width_, p.size() - offset_));
    std::memcpy(b.data.data(), p.data() + offset_, n);
    b.keep = rtl::keep_mask(n);
    b.last = offset_ + n == p.size();
    return b;
  }
  void advance() {
    offset_ += width_;
    if (offset_ >= packets_[packet_].size()) {
      ++packet_;
      offset_ = 0;
      skip_empty();
    }
  }
  // Total beats of all packets.
  [[nodiscard]] std::uint64_t total_beats() const {
    std::uint64_t n = 0;
    for (const auto& p : packets_)
      n += (p.size() + width_ - 1) / width_;
    return n;
  }

 private:
  void skip_empty() {
    while (packet_ < packets_.size() && packets_[packet_].empty())
      ++packet_;
  }
  std::span<const std::span<std::uint8_t>> packets_;
  std::uint32_t width_;
  std::size_t packet_ = 0;
  std::size_t offset_ = 0;
};

// Where output beats go: the same packet structure, beat by beat.
class BeatSink {
 public:
  BeatSink(std::span<const std::span<std::uint8_t>> packets, std::uint32_t width)
      : packets_(packets), width_(width) {
    skip_empty();
  }
  void take(const rtl::StreamBeat& b) {
    if (packet_ == packets_.size()) return;  // more beats than sent: ignore the surplus
    const std::span<std::uint8_t> p = packets_[packet_];
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(width_, p.size() - offset_));
    std::memcpy(p.data() + offset_, b.data.data(), n);
    offset_ += width_;
    if (offset_ >= p.size()) {
      ++packet_;
      offset_ = 0;
      skip_empty();
    }
  }

 private:
  void skip_empty() {
    while (packet_ < packets_.size() && packets_[packet_].empty())
      ++packet_;
  }
  std::span<const std::span<std::uint8_t>> packets_;
  std::uint32_t width_;
  std::size_t packet_ = 0;
  std::size_t offset_ = 0;
};

// Counts cycles and consecutive cycles without progress.
struct Progress {
  StreamRun run;
  std::uint64_t idle = 0;
  // Ends a cycle; false when the run must be abandoned.
  bool cycle(bool moved) {
    ++run.cycles;
    idle = moved ? 0 : idle + 1;
    if (idle >= kStallCycles) run.stalled = true;
    return !run.stalled;
  }
};

}  // namespace

StreamRun run_add_const(rtl::AddConstPort& port, std::span<const std::span<std::uint8_t>> packets,
                        std::uint8_t addend) {
  const std::uint32_t w = port.width();
  BeatSource src(packets, w);
  BeatSink sink(packets, w);  // in place: output beat k lands where input beat k came from
  std::uint64_t pending = src.total_beats();
  Progress progress;
  rtl::AddConstInputs in;
  in.addend = addend;
  in.out_ready = true;
  while (pending > 0) {
    in.in_valid = !src.done();
    if (in.in_valid) in.in = src.beat();
    const rtl::AddConstOutputs out = port.step(in);
    const bool accepted = in.in_valid && out.in_ready;
    if (accepted) src.advance();
    if (out.out_valid) {
      sink.take(out.out);
      --pending;
    }
    if (!progress.cycle(accepted || out.out_valid)) break;
  }
  return progress.run;
}

StreamRun run_vadd_i32(rtl::VaddI32Port& port, std::span<const std::uint8_t> a,
                       std::span<const std::uint8_t> b, std::span<std::uint8_t> out) {
  const std::uint32_t w = port.width();
  const std::size_t n = a.size();
  // The driver reads a and b through the same beat structure (copies: the source is mutable).
  std::vector<std::uint8_t> a_copy(a.begin(), a.end());
  std::vector<std::uint8_t> b_copy(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
  const std::span<std::uint8_t> a_packet[] = {a_copy};
  const std::span<std::uint8_t> b_packet[] = {b_copy};
  const std::span<std::uint8_t> out_packet[] = {out.first(n)};
  BeatSource src_a(a_packet, w);
  BeatSource src_b(b_packet, w);
  BeatSink sink(out_packet, w);
  std::uint64_t pending = src_a.total_beats();
  Progress progress;
  rtl::VaddI32Inputs in;
  in.out_ready = true;
  while (pending > 0) {
    in.a_valid = !src_a.done();
    in.b_valid = !src_b.done();
    if (in.a_valid) in.a = src_a.beat();
    if (in.b_valid) in.b = src_b.beat();
    const rtl::VaddI32Outputs o = port.step(in);
    const bool a_moved = in.a_valid && o.a_ready;
    const bool b_moved = in.b_valid && o.b_ready;
    if (a_moved) src_a.advance();
    if (b_moved) src_b.advance();
    if (o.out_valid) {
      sink.take(o.out);
      --pending;
    }
    if (!progress.cycle(a_moved || b_moved || o.out_valid)) break;
  }
  return progress.run;
}

namespace {

// One packet in, one result beat out (crc32, sum_u64: the same port shape): the result beat.
template <class Port>
StreamRun run_reduction(Port& port, std::span<const std::uint8_t> in_bytes,
                        rtl::StreamBeat* result) {
  const std::uint32_t w = port.width();
  std::vector<std::uint8_t> copy(in_bytes.begin(), in_bytes.end());
  const std::span<std::uint8_t> packet[] = {copy};
  BeatSource src(packet, w);
  bool empty_beat = copy.empty();  // the empty packet: one beat, keep 0, last
  bool have_result = false;
  Progress progress;
  typename Port::Inputs in;
  in.out_ready = true;
  while (!have_result) {
    in.in_valid = empty_beat || !src.done();
    if (empty_beat) {
      in.in = rtl::StreamBeat{};
      in.in.last = true;
    } else if (in.in_valid) {
      in.in = src.beat();
    }
    const typename Port::Outputs o = port.step(in);
    const bool accepted = in.in_valid && o.in_ready;
    if (accepted) {
      if (empty_beat) {
        empty_beat = false;
      } else {
        src.advance();
      }
    }
    if (o.out_valid) {
      *result = o.out;
      have_result = true;
    }
    if (!progress.cycle(accepted || o.out_valid)) break;
  }
  return progress.run;
}

std::uint64_t le_bytes(const rtl::StreamBeat& b, std::uint32_t n) {
  std::uint64_t v = 0;
  for (std::uint32_t i = n; i-- > 0;)
    v = v << 8 | b.data[i];
  return v;
}

}  // namespace

StreamRun run_crc32(rtl::Crc32Port& port, std::span<const std::uint8_t> in_bytes,
                    std::uint32_t* crc) {
  rtl::StreamBeat result;
  const StreamRun run = run_reduction(port, in_bytes, &result);
  *crc = static_cast<std::uint32_t>(le_bytes(result, 4));
  return run;
}

StreamRun run_sum_u64(rtl::SumU64Port& port, std::span<const std::uint8_t> in_bytes,
                      std::uint64_t* sum) {
  rtl::StreamBeat result;
  const StreamRun run = run_reduction(port, in_bytes, &result);
  *sum = le_bytes(result, 8);
  return run;
}

}  // namespace naa::sim::rtl_driver
