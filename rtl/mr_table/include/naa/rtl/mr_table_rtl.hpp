// The Verilated mr_table (rtl/mr_table/mr_table.sv) behind MrTablePort: library naa::rtl_mr_table.
#pragma once

#include <memory>

#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// A new instance with its own Verilator context, in reset-released state with an empty table
// once it has seen one cycle of rst_n = 0 (drive MrTableInputs::rst_n low for the first cycle).
[[nodiscard]] std::unique_ptr<MrTablePort> make_mr_table_rtl(const RtlOptions& options = {});

}  // namespace naa::rtl
