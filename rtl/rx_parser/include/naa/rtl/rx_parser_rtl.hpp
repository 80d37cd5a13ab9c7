// The Verilated rx_parser (rtl/rx_parser/rx_parser.sv) behind RxParserPort, and the packet-level
// factories over it: library naa::rtl_rx_parser.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "naa/rtl/rtl_options.hpp"
#include "naa/rtl/rx_parser.hpp"

namespace naa::rtl {

// The widths (bytes per beat) this library was Verilated at (WIDTHS of its naa_rtl_block()).
[[nodiscard]] std::span<const std::uint32_t> rx_parser_rtl_widths() noexcept;

// A new cycle-level instance at `width` bytes per beat, or nullptr if the library has no
// Verilation at that width (see rx_parser_rtl_widths()).
[[nodiscard]] std::unique_ptr<RxParserPort> make_rx_parser_rtl(std::uint32_t width,
                                                               const RtlOptions& options = {});

namespace rx_parser {
// Packet-level drivers (naa/rtl/rx_parser.hpp) over the Verilated block, or over the model and
// the Verilated block in lockstep (the model's results are returned; the first divergence goes to
// on_divergence and to RxParser::divergence()). nullptr if `width` was not Verilated.
[[nodiscard]] std::unique_ptr<RxParser> make_rtl(std::uint32_t width,
                                                 const RtlOptions& options = {});
[[nodiscard]] std::unique_ptr<RxParser> make_lockstep(std::uint32_t width,
                                                      const RtlOptions& options = {},
                                                      LockstepChecker::Handler on_divergence = {});
}  // namespace rx_parser

}  // namespace naa::rtl
