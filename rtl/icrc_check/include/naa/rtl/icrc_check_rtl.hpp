// The Verilated icrc_check (rtl/icrc_check/icrc_check.sv) behind IcrcCheckPort, and the
// packet-level factories over it: library naa::rtl_icrc_check.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "naa/rtl/icrc_check.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// The widths (bytes per beat) this library was Verilated at (WIDTHS of its naa_rtl_block()).
[[nodiscard]] std::span<const std::uint32_t> icrc_check_rtl_widths() noexcept;

// A new cycle-level instance at `width` bytes per beat, or nullptr if the library has no
// Verilation at that width (see icrc_check_rtl_widths()).
[[nodiscard]] std::unique_ptr<IcrcCheckPort> make_icrc_check_rtl(std::uint32_t width,
                                                                 const RtlOptions& options = {});

namespace icrc_check {
// Packet-level drivers (naa/rtl/icrc_check.hpp) over the Verilated block, or over the model and
// the Verilated block in lockstep (the model's results are returned; the first divergence goes to
// on_divergence and to IcrcCheck::divergence()). nullptr if `width` was not Verilated.
[[nodiscard]] std::unique_ptr<IcrcCheck> make_rtl(std::uint32_t width,
                                                  const RtlOptions& options = {});
[[nodiscard]] std::unique_ptr<IcrcCheck> make_lockstep(std::uint32_t width,
                                                       const RtlOptions& options = {},
                                                       LockstepChecker::Handler on_divergence = {});
}  // namespace icrc_check

}  // namespace naa::rtl
