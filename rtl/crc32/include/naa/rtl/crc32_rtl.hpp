// The Verilated crc32 (rtl/crc32/crc32.sv) inside the kernel shell, behind KernelPort: library
// naa::rtl_crc32.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// The widths (bytes per beat) this library was Verilated at (WIDTHS of its naa_rtl_block()).
[[nodiscard]] std::span<const std::uint32_t> crc32_rtl_widths() noexcept;

// A new instance at `width` bytes per beat (its own Verilator context unless options name a
// session), or nullptr if the library has no Verilation at that width (crc32_rtl_widths()).
[[nodiscard]] std::unique_ptr<KernelPort> make_crc32_rtl(std::uint32_t width,
                                                       const RtlOptions& options = {});

}  // namespace naa::rtl
