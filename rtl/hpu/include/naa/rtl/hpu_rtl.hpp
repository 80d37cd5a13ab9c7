// The Verilated hpu (rtl/hpu/hpu.sv) behind HpuPort: library naa::rtl_hpu.
#pragma once

#include <memory>

#include "naa/rtl/hpu.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// A new instance with its own Verilator context (or options.session's), idle once it has seen
// one cycle of rst_n = 0 (drive HpuInputs::rst_n low for the first cycle).
[[nodiscard]] std::unique_ptr<HpuPort> make_hpu_rtl(const RtlOptions& options = {});

}  // namespace naa::rtl
