// The Verilated vadd_i32 (rtl/vadd_i32/vadd_i32.sv) behind VaddI32Port: library naa::rtl_vadd_i32.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "naa/rtl/rtl_options.hpp"
#include "naa/rtl/vadd_i32.hpp"

namespace naa::rtl {

// The widths (bytes per beat) this library was Verilated at (WIDTHS of its naa_rtl_block()).
[[nodiscard]] std::span<const std::uint32_t> vadd_i32_rtl_widths() noexcept;

// A new instance at `width` bytes per beat with its own Verilator context, or nullptr if the
// library has no Verilation at that width (see vadd_i32_rtl_widths()).
[[nodiscard]] std::unique_ptr<VaddI32Port> make_vadd_i32_rtl(std::uint32_t width,
                                                             const RtlOptions& options = {});

}  // namespace naa::rtl
