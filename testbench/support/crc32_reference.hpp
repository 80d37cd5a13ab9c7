// The CRC-32 of PROTOCOL.md 2 (reflected, polynomial 0xEDB88320) from its definition, one bit at a
// time: the independent reference the CRC tests compare protocol::crc32's paths with
// (testbench/unit/protocol/test_crc32.cpp, testbench/bench/test_crc32_paths.cpp). `c` is the raw
// register (no pre- or post-inversion).
#pragma once

#include <cstddef>
#include <cstdint>

namespace naa::testbench {

inline std::uint32_t crc32_bitwise(std::uint32_t c, const std::uint8_t* p, std::size_t n) {
  while (n-- > 0) {
    c ^= *p++;
    for (int k = 0; k < 8; ++k)
      c = (c & 1U) != 0 ? (c >> 1) ^ 0xEDB88320U : c >> 1;
  }
  return c;
}

}  // namespace naa::testbench
