// Port comparison helpers shared by the blocks' first_mismatch() (private to naa_rtl_models).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/stream.hpp"

namespace naa::rtl::detail {

[[nodiscard]] inline std::optional<PortMismatch> compare_bool(std::string_view port, bool expected,
                                                              bool actual) {
  if (expected == actual) return std::nullopt;
  return PortMismatch{std::string(port), expected ? "1" : "0", actual ? "1" : "0"};
}

// Compares an output stream: valid always, data/keep/last only while valid (both sides agree on
// valid by then). Ports are named <prefix>_valid, <prefix>_data (byte i), <prefix>_keep,
// <prefix>_last.
[[nodiscard]] std::optional<PortMismatch> compare_stream(std::string_view prefix,
                                                         std::uint32_t width, bool expected_valid,
                                                         const StreamBeat& expected,
                                                         bool actual_valid,
                                                         const StreamBeat& actual);

}  // namespace naa::rtl::detail
