// A deliberately broken vadd_i32 (built with NAA_VADD_I32_BROKEN; rtl/vadd_i32/vadd_i32.sv says how) behind
// KernelPort: library naa::rtl_vadd_i32_broken. It exists to prove that the kernel testbench and
// lockstep catch a real RTL bug; never use it for anything else.
#pragma once

#include <cstdint>
#include <memory>

#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// nullptr if `width` was not Verilated (the widths of vadd_i32_rtl_widths()).
[[nodiscard]] std::unique_ptr<KernelPort> make_vadd_i32_broken_rtl(std::uint32_t width,
                                                                  const RtlOptions& options = {});

}  // namespace naa::rtl
