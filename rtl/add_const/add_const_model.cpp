#include "naa/rtl/add_const.hpp"

#include <stdexcept>
#include <string>

#include "compare.hpp"

namespace naa::rtl {

AddConstModel::AddConstModel(std::uint32_t width) : width_(width) {
  if (!is_supported_width(width)) {
    throw std::invalid_argument("add_const: width " + std::to_string(width) + " not in 1..64");
  }
}

AddConstOutputs AddConstModel::step(const AddConstInputs& in) {
  if (!in.rst_n) out_valid_ = false;  // asynchronous reset: holds for the whole cycle
  const AddConstOutputs o{!out_valid_ || in.out_ready, out_valid_, out_};
  if (!in.rst_n) return o;
  if (in.in_valid && o.in_ready) {
    const std::uint64_t keep = in.in.keep & keep_mask(width_);
    out_ = StreamBeat{};
    out_.keep = keep;
    out_.last = in.in.last;
    for (std::uint32_t i = 0; i < width_; ++i) {
      if ((keep >> i) & 1U) out_.data[i] = static_cast<std::uint8_t>(in.in.data[i] + in.addend);
    }
    out_valid_ = true;
  } else if (in.out_ready) {
    out_valid_ = false;
  }
  return o;
}

std::optional<PortMismatch> first_mismatch(const AddConstPort& shape,
                                           const AddConstOutputs& expected,
                                           const AddConstOutputs& actual) {
  if (auto m = detail::compare_bool("in_ready", expected.in_ready, actual.in_ready)) return m;
  return detail::compare_stream("out", shape.width(), expected.out_valid, expected.out,
                                actual.out_valid, actual.out);
}

AddConstLockstep::AddConstLockstep(std::unique_ptr<AddConstPort> model,
                                   std::unique_ptr<AddConstPort> rtl,
                                   LockstepChecker::Handler on_divergence)
    : pair_(std::move(model), std::move(rtl), std::move(on_divergence)),
      width_(pair_.model().width()) {
  if (pair_.rtl().width() != width_)
    throw std::invalid_argument("add_const lockstep: widths differ");
}

}  // namespace naa::rtl
