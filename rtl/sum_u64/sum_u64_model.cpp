// The golden model of rtl/sum_u64/sum_u64.sv: a byte-at-a-time loop that assembles each whole
// lane and adds it to a 64-bit sum (the RTL adds a beat's lanes in a two-stage adder pipeline).
#include "naa/rtl/sum_u64.hpp"

#include <stdexcept>
#include <string>

namespace naa::rtl {

namespace {

constexpr std::uint32_t kLatency = 3;  // group sums, beat sum, accumulator

std::uint32_t checked_width(std::uint32_t width) {
  if (!is_supported_width(width) || width < 8 || width % 4 != 0) {
    throw std::invalid_argument("sum_u64: width " + std::to_string(width) +
                                " is not a multiple of 4 in 8..64");
  }
  return width;
}

}  // namespace

SumU64Model::SumU64Model(std::uint32_t width)
    : ReduceKernelModel("sum_u64", checked_width(width), 8, kLatency) {}

std::uint64_t SumU64Model::lanes(const StreamBeat& beat) const {
  std::uint64_t s = 0;
  for (std::uint32_t lane = 0; lane < width() / 4; ++lane) {
    const std::uint64_t lane_keep = 0xFULL << (4 * lane);
    if ((beat.keep & lane_keep) != lane_keep) continue;  // a partial lane adds nothing
    std::uint32_t v = 0;
    for (std::uint32_t b = 0; b < 4; ++b)
      v |= static_cast<std::uint32_t>(beat.data[4 * lane + b]) << (8 * b);
    s += v;
  }
  return s;
}

std::uint64_t SumU64Model::finish(const StreamBeat& beat) {
  const std::uint64_t result = sum_ + lanes(beat);
  sum_ = 0;
  return result;
}

std::uint64_t sum_u64_call_cycles(std::uint64_t bytes, std::uint32_t width) {
  // ap_start (1), the beats (an empty packet is one), the pipeline, the result beat, ap_done (1).
  const std::uint64_t beats = bytes == 0 ? 1 : (bytes + width - 1) / width;
  return 1 + beats + kLatency + 1 + 1;
}

}  // namespace naa::rtl
