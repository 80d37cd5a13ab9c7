#include "naa/rtl/vadd_i32.hpp"

#include <stdexcept>
#include <string>

#include "compare.hpp"

namespace naa::rtl {

namespace {

std::uint32_t load_le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void store_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// The beat with bytes outside keep set to 0 (they count as 0 in the sum).
StreamBeat masked(const StreamBeat& b, std::uint32_t width) {
  StreamBeat m;
  for (std::uint32_t i = 0; i < width; ++i)
    m.data[i] = ((b.keep >> i) & 1U) ? b.data[i] : 0;
  return m;
}

}  // namespace

VaddI32Model::VaddI32Model(std::uint32_t width) : width_(width) {
  if (!is_supported_width(width) || width % 4 != 0) {
    throw std::invalid_argument("vadd_i32: width " + std::to_string(width) +
                                " is not a multiple of 4 in 4..64");
  }
}

VaddI32Outputs VaddI32Model::step(const VaddI32Inputs& in) {
  if (!in.rst_n) out_valid_ = false;
  const bool free = !out_valid_ || in.out_ready;
  const VaddI32Outputs o{in.b_valid && free, in.a_valid && free, out_valid_, out_};
  if (!in.rst_n) return o;
  if (in.a_valid && in.b_valid && free) {
    const std::uint64_t keep = in.a.keep & in.b.keep & keep_mask(width_);
    const StreamBeat a = masked(in.a, width_);
    const StreamBeat b = masked(in.b, width_);
    StreamBeat sum;
    for (std::uint32_t lane = 0; lane < width_ / 4; ++lane) {
      store_le32(&sum.data[4 * lane], load_le32(&a.data[4 * lane]) + load_le32(&b.data[4 * lane]));
    }
    out_ = StreamBeat{};
    out_.keep = keep;
    out_.last = in.a.last || in.b.last;
    for (std::uint32_t i = 0; i < width_; ++i)
      out_.data[i] = ((keep >> i) & 1U) ? sum.data[i] : 0;
    out_valid_ = true;
  } else if (in.out_ready) {
    out_valid_ = false;
  }
  return o;
}

std::optional<PortMismatch> first_mismatch(const VaddI32Port& shape, const VaddI32Outputs& expected,
                                           const VaddI32Outputs& actual) {
  if (auto m = detail::compare_bool("a_ready", expected.a_ready, actual.a_ready)) return m;
  if (auto m = detail::compare_bool("b_ready", expected.b_ready, actual.b_ready)) return m;
  return detail::compare_stream("out", shape.width(), expected.out_valid, expected.out,
                                actual.out_valid, actual.out);
}

VaddI32Lockstep::VaddI32Lockstep(std::unique_ptr<VaddI32Port> model,
                                 std::unique_ptr<VaddI32Port> rtl,
                                 LockstepChecker::Handler on_divergence)
    : pair_(std::move(model), std::move(rtl), std::move(on_divergence)),
      width_(pair_.model().width()) {
  if (pair_.rtl().width() != width_)
    throw std::invalid_argument("vadd_i32 lockstep: widths differ");
}

}  // namespace naa::rtl
