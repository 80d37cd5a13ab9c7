// A deliberately broken mr_table (built with NAA_MR_TABLE_BROKEN: the bounds check lets an access
// end one byte past its region), behind MrTablePort: library naa::rtl_mr_table_broken. It exists
// to prove that lockstep catches a real RTL bug; never use it for anything else.
#pragma once

#include <memory>

#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

[[nodiscard]] std::unique_ptr<MrTablePort> make_mr_table_broken_rtl(const RtlOptions& options = {});

}  // namespace naa::rtl
