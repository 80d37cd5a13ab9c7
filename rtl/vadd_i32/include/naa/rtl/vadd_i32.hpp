// vadd_i32's C++ cycle model (rtl/vadd_i32/README.md; RTL rtl/vadd_i32/vadd_i32.sv): the kernel
// vadd_i32 of PROTOCOL.md 5.3 at the kernel ports (naa/rtl/kernel_port.hpp). src carries in0 then
// in1; in0 goes into a buffer of max_bytes bytes; out0 (n = in0 rounded down to whole lanes) comes
// out while in1 streams in, through one register stage. An in0 larger than the buffer is consumed
// and refused: ap_return = kVaddI32TooBig, out0 empty.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "naa/rtl/kernel_models.hpp"

namespace naa::rtl {

// The buffer of the RTL's default (parameter MaxBytes) and naa-sim's vadd_i32.
inline constexpr std::uint32_t kVaddI32MaxBytes = 1U << 20;
// ap_return when in0 does not fit (PROTOCOL.md 5.2: a kernel-specific code).
inline constexpr std::uint32_t kVaddI32TooBig = 0x10;

class VaddI32Model final : public KernelPort {
 public:
  // width: a multiple of 4 in 4..kMaxStreamBytes; max_bytes a positive multiple of width; else
  // std::invalid_argument.
  explicit VaddI32Model(std::uint32_t width, std::uint32_t max_bytes = kVaddI32MaxBytes);
  [[nodiscard]] std::string_view block() const noexcept override { return "vadd_i32"; }
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  KernelOutputs step(const KernelInputs& in) override;

 private:
  enum class Phase : std::uint8_t { a, read, b };
  void start_call();
  std::uint32_t width_;
  std::uint32_t depth_;  // buffer entries (beats)
  std::uint32_t addr_mask_;
  std::vector<std::uint8_t> buffer_;
  KernelCtrlModel ctrl_;
  Phase phase_ = Phase::a;
  std::uint32_t beats_a_ = 0;
  std::uint32_t bytes_a_ = 0;
  bool too_big_ = false;   // in0 did not fit (set in the read phase)
  std::uint32_t rem_ = 0;  // out0 bytes from the next in1 beat on (set in the read phase)
  std::uint32_t rd_addr_ = 0;
  StreamBeat a_;  // the buffer entry of the next in1 beat
  bool out_done_ = false;
  bool out_sent_ = false;
  bool took_last_ = false;
  bool reg_valid_ = false;
  StreamBeat reg_;
};

// The cycles of one call, dst always ready (naa-sim's cost model): in0 and in1 of the given sizes,
// in1 >= in0 rounded down to whole lanes.
[[nodiscard]] std::uint64_t vadd_i32_call_cycles(std::uint64_t in0, std::uint64_t in1,
                                                 std::uint32_t width);

}  // namespace naa::rtl
