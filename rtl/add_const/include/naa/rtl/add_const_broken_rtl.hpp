// A deliberately broken add_const (built with NAA_ADD_CONST_BROKEN; rtl/add_const/add_const.sv says how) behind
// KernelPort: library naa::rtl_add_const_broken. It exists to prove that the kernel testbench and
// lockstep catch a real RTL bug; never use it for anything else.
#pragma once

#include <cstdint>
#include <memory>

#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// nullptr if `width` was not Verilated (the widths of add_const_rtl_widths()).
[[nodiscard]] std::unique_ptr<KernelPort> make_add_const_broken_rtl(std::uint32_t width,
                                                                  const RtlOptions& options = {});

}  // namespace naa::rtl
