// The golden model of rtl/sum_u64/sum_u64.sv: a byte-at-a-time loop that assembles each whole
// lane and adds it to a 64-bit sum (the RTL adds the lanes of a beat in one adder tree).
#include "naa/rtl/sum_u64.hpp"

#include <stdexcept>
#include <string>

#include "compare.hpp"

namespace naa::rtl {

SumU64Model::SumU64Model(std::uint32_t width) : width_(width) {
  if (!is_supported_width(width) || width < 8 || width % 4 != 0) {
    throw std::invalid_argument("sum_u64: width " + std::to_string(width) +
                                " is not a multiple of 4 in 8..64");
  }
}

SumU64Outputs SumU64Model::step(const SumU64Inputs& in) {
  if (!in.rst_n) {
    result_valid_ = false;
    sum_ = 0;
  }
  SumU64Outputs o{!result_valid_ || in.out_ready, result_valid_, StreamBeat{}};
  for (int i = 0; i < 8; ++i)
    o.out.data[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(result_ >> (8 * i));
  o.out.keep = 0xFF;
  o.out.last = true;
  if (!in.rst_n) return o;

  if (result_valid_ && in.out_ready) result_valid_ = false;
  if (in.in_valid && o.in_ready) {
    std::uint64_t s = sum_;
    for (std::uint32_t lane = 0; lane < width_ / 4; ++lane) {
      const std::uint64_t lane_keep = 0xFULL << (4 * lane);
      if ((in.in.keep & lane_keep) != lane_keep) continue;  // a partial lane adds nothing
      std::uint32_t v = 0;
      for (std::uint32_t b = 0; b < 4; ++b)
        v |= static_cast<std::uint32_t>(in.in.data[4 * lane + b]) << (8 * b);
      s += v;
    }
    if (in.in.last) {
      result_ = s;
      sum_ = 0;
      result_valid_ = true;
    } else {
      sum_ = s;
    }
  }
  return o;
}

std::optional<PortMismatch> first_mismatch(const SumU64Port& shape, const SumU64Outputs& expected,
                                           const SumU64Outputs& actual) {
  if (auto m = detail::compare_bool("in_ready", expected.in_ready, actual.in_ready)) return m;
  return detail::compare_stream("out", shape.width(), expected.out_valid, expected.out,
                                actual.out_valid, actual.out);
}

SumU64Lockstep::SumU64Lockstep(std::unique_ptr<SumU64Port> model, std::unique_ptr<SumU64Port> rtl,
                               LockstepChecker::Handler on_divergence)
    : pair_(std::move(model), std::move(rtl), std::move(on_divergence)),
      width_(pair_.model().width()) {
  if (pair_.rtl().width() != width_) throw std::invalid_argument("sum_u64 lockstep: widths differ");
}

}  // namespace naa::rtl
