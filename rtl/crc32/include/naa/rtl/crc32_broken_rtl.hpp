// A deliberately broken crc32 (built with NAA_CRC32_BROKEN; rtl/crc32/crc32.sv says how) behind
// KernelPort: library naa::rtl_crc32_broken. It exists to prove that the kernel testbench and
// lockstep catch a real RTL bug; never use it for anything else.
#pragma once

#include <cstdint>
#include <memory>

#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// nullptr if `width` was not Verilated (the widths of crc32_rtl_widths()).
[[nodiscard]] std::unique_ptr<KernelPort> make_crc32_broken_rtl(std::uint32_t width,
                                                                  const RtlOptions& options = {});

}  // namespace naa::rtl
