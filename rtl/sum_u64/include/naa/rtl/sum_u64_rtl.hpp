// The Verilated sum_u64 (rtl/sum_u64/sum_u64.sv) behind SumU64Port: library naa::rtl_sum_u64.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "naa/rtl/rtl_options.hpp"
#include "naa/rtl/sum_u64.hpp"

namespace naa::rtl {

// The widths (bytes per beat) this library was Verilated at (WIDTHS of its naa_rtl_block()).
[[nodiscard]] std::span<const std::uint32_t> sum_u64_rtl_widths() noexcept;

// A new instance at `width` bytes per beat with its own Verilator context, or nullptr if the
// library has no Verilation at that width (see sum_u64_rtl_widths()).
[[nodiscard]] std::unique_ptr<SumU64Port> make_sum_u64_rtl(std::uint32_t width,
                                                           const RtlOptions& options = {});

}  // namespace naa::rtl
