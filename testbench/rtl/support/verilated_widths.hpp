// The widths a block was Verilated at, for the loops that run a test at every one of them: an
// empty list fails the test instead of running no iteration and passing (issue 26 item 11).
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <span>

namespace naa::testbench {

inline std::span<const std::uint32_t> verilated(std::span<const std::uint32_t> widths) {
  REQUIRE_FALSE(widths.empty());  // the build Verilated no width of this block
  return widths;
}

}  // namespace naa::testbench
