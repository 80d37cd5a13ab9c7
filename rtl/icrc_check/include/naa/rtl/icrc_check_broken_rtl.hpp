// A deliberately broken icrc_check (built with NAA_ICRC_CHECK_BROKEN: the last beat's byte count
// wraps at W, so a full last beat counts as empty), behind IcrcCheckPort: library
// naa::rtl_icrc_check_broken. It exists to prove that lockstep catches a real RTL bug; never use
// it for anything else.
#pragma once

#include <cstdint>
#include <memory>

#include "naa/rtl/icrc_check.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// nullptr if `width` was not Verilated (the widths of icrc_check_rtl_widths()).
[[nodiscard]] std::unique_ptr<IcrcCheckPort> make_icrc_check_broken_rtl(
    std::uint32_t width, const RtlOptions& options = {});

}  // namespace naa::rtl
