// sum_u64's C++ cycle model (rtl/sum_u64/README.md; RTL rtl/sum_u64/sum_u64.sv): the kernel
// sum_u64 of PROTOCOL.md 5.3 at the kernel ports (naa/rtl/kernel_port.hpp). Lane i of a beat
// (bytes 4i..4i+3) counts when its four TKEEP bits are set. The sum of a packet appears 3 cycles
// after its last beat is taken (the RTL's adder pipeline) and is on dst the cycle after: one beat,
// bytes 0..7 little-endian, TKEEP = 0xFF, TLAST = 1.
#pragma once

#include <cstdint>

#include "naa/rtl/kernel_models.hpp"

namespace naa::rtl {

class SumU64Model final : public ReduceKernelModel {
 public:
  // width: a multiple of 4 in 8..kMaxStreamBytes, else std::invalid_argument.
  explicit SumU64Model(std::uint32_t width);

 private:
  void restart() override { sum_ = 0; }
  void absorb(const StreamBeat& beat) override { sum_ += lanes(beat); }
  std::uint64_t finish(const StreamBeat& beat) override;
  [[nodiscard]] std::uint64_t lanes(const StreamBeat& beat) const;
  std::uint64_t sum_ = 0;
};

// The cycles from a call's ap_start to its ap_done with dst always ready (naa-sim's cost model).
[[nodiscard]] std::uint64_t sum_u64_call_cycles(std::uint64_t bytes, std::uint32_t width);

}  // namespace naa::rtl
