// The golden model of rtl/add_const/add_const.sv.
#include "naa/rtl/add_const.hpp"

#include <stdexcept>
#include <string>

namespace naa::rtl {

AddConstModel::AddConstModel(std::uint32_t width) : width_(width) {
  if (!is_supported_width(width)) {
    throw std::invalid_argument("add_const: width " + std::to_string(width) + " is not in 1..64");
  }
}

KernelOutputs AddConstModel::step(const KernelInputs& in) {
  if (!in.rst_n) {
    ctrl_.reset();
    took_last_ = false;
    reg_valid_ = false;
  }
  KernelOutputs out;
  ctrl_.outputs(in, out);
  const bool reg_ready = !reg_valid_ || in.dst_ready;
  out.src_ready = ctrl_.running() && reg_ready && !took_last_;
  out.dst_valid = reg_valid_;
  out.dst = reg_;
  if (!in.rst_n) return out;

  const bool load = ctrl_.load(in);
  const bool take = in.src_valid && out.src_ready;
  const bool finish = reg_valid_ && in.dst_ready && reg_.last;
  if (load) {
    took_last_ = false;
    addend_ = static_cast<std::uint8_t>(in.user & 0xFFU);
  } else if (take && in.src.last) {
    took_last_ = true;
  }
  if (take) {
    reg_ = StreamBeat{};
    reg_.keep = in.src.keep & keep_mask(width_);
    reg_.last = in.src.last;
    for (std::uint32_t i = 0; i < width_; ++i) {
      if ((reg_.keep >> i) & 1U) reg_.data[i] = static_cast<std::uint8_t>(in.src.data[i] + addend_);
    }
    reg_valid_ = true;
  } else if (in.dst_ready) {
    reg_valid_ = false;
  }
  ctrl_.edge(in, finish);
  return out;
}

std::uint64_t add_const_call_cycles(std::uint64_t bytes, std::uint32_t width) {
  // ap_start (1), the beats, the output register (1), ap_done (1).
  return 1 + (bytes + width - 1) / width + 1 + 1;
}

}  // namespace naa::rtl
