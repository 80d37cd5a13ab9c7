// A deliberately broken rx_parser (built with NAA_RX_PARSER_BROKEN: the pad-byte check looks at
// the first pad byte only, so a non-zero second or third pad byte passes), behind RxParserPort:
// library naa::rtl_rx_parser_broken. It exists to prove that lockstep catches a real RTL bug;
// never use it for anything else.
#pragma once

#include <cstdint>
#include <memory>

#include "naa/rtl/rtl_options.hpp"
#include "naa/rtl/rx_parser.hpp"

namespace naa::rtl {

// nullptr if `width` was not Verilated (the widths of rx_parser_rtl_widths()).
[[nodiscard]] std::unique_ptr<RxParserPort> make_rx_parser_broken_rtl(
    std::uint32_t width, const RtlOptions& options = {});

}  // namespace naa::rtl
