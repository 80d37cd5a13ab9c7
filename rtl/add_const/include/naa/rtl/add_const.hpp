// add_const's C++ cycle model (rtl/add_const/README.md; RTL rtl/add_const/add_const.sv): adds
// user[7:0] (mod 256) to every byte of one src packet, at the kernel ports
// (naa/rtl/kernel_port.hpp): one register stage, a beat per cycle, dst bytes outside TKEEP 0.
#pragma once

#include <cstdint>
#include <string_view>

#include "naa/rtl/kernel_models.hpp"

namespace naa::rtl {

class AddConstModel final : public KernelPort {
 public:
  // width: 1..kMaxStreamBytes, else std::invalid_argument.
  explicit AddConstModel(std::uint32_t width);
  [[nodiscard]] std::string_view block() const noexcept override { return "add_const"; }
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  KernelOutputs step(const KernelInputs& in) override;

 private:
  std::uint32_t width_;
  KernelCtrlModel ctrl_;
  bool took_last_ = false;
  std::uint8_t addend_ = 0;
  bool reg_valid_ = false;  // the output register (naa_stream_reg)
  StreamBeat reg_;
};

// The cycles of one call over a packet of `bytes` bytes (> 0), dst always ready: naa-sim's cost
// model of add1/add2, one call per non-empty region.
[[nodiscard]] std::uint64_t add_const_call_cycles(std::uint64_t bytes, std::uint32_t width);

}  // namespace naa::rtl
