// crc32's C++ cycle model (rtl/crc32/README.md; RTL rtl/crc32/crc32.sv): the kernel crc32 of
// PROTOCOL.md 5.3 at the kernel ports (naa/rtl/kernel_port.hpp). The CRC of a packet appears
// log2(W) + 1 cycles after its last beat is taken (the RTL's last-beat pipeline) and is on dst the
// cycle after: one beat, bytes 0..3 little-endian, TKEEP = 0xF, TLAST = 1.
#pragma once

#include <cstdint>

#include "naa/rtl/kernel_models.hpp"

namespace naa::rtl {

class Crc32Model final : public ReduceKernelModel {
 public:
  // width: a power of two in 4..kMaxStreamBytes, else std::invalid_argument.
  explicit Crc32Model(std::uint32_t width);

 private:
  void restart() override { crc_ = ~0U; }
  void absorb(const StreamBeat& beat) override;
  std::uint64_t finish(const StreamBeat& beat) override;
  std::uint32_t crc_ = ~0U;  // running register of the current packet (before the final xor)
};

// The cycles from a call's ap_start to its ap_done at W bytes per beat with dst always ready:
// the cost model of naa-sim's crc32 (sim/src/kernels.cpp), checked against the RTL.
[[nodiscard]] std::uint64_t crc32_call_cycles(std::uint64_t bytes, std::uint32_t width);

}  // namespace naa::rtl
