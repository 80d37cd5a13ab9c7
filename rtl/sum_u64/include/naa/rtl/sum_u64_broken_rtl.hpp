// A deliberately broken sum_u64 (built with NAA_SUM_U64_BROKEN: the carry out of bit 31 of the
// accumulator is dropped), behind KernelPort: library naa::rtl_sum_u64_broken. It exists to prove
// that the kernel testbench and lockstep catch a real RTL bug; never use it for anything else.
#pragma once

#include <cstdint>
#include <memory>

#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// nullptr if `width` was not Verilated (the widths of sum_u64_rtl_widths()).
[[nodiscard]] std::unique_ptr<KernelPort> make_sum_u64_broken_rtl(std::uint32_t width,
                                                                  const RtlOptions& options = {});

}  // namespace naa::rtl
