// A deliberately broken hpu (built with NAA_HPU_BROKEN: REM's remainder takes the divisor's sign
// instead of the dividend's), behind HpuPort: library naa::rtl_hpu_broken. It exists to prove
// that lockstep catches a real RTL bug; never use it for anything else.
#pragma once

#include <memory>

#include "naa/rtl/hpu.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

[[nodiscard]] std::unique_ptr<HpuPort> make_hpu_broken_rtl(const RtlOptions& options = {});

}  // namespace naa::rtl
