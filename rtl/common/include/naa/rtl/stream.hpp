// Valid/ready byte streams as the RTL kernels see them (docs/rtl/README.md "Streams"): one beat is
// W bytes (W <= kMaxStreamBytes), a keep bit per byte, and last on the final beat of a packet. A
// beat moves at a clock edge where valid && ready; while valid is low the payload is don't-care.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace naa::rtl {

// The widest beat the C++ port structs carry (keep is a 64-bit mask). 64 bytes at 250 MHz is
// 128 Gb/s, above the 100 GbE line rate (ARCHITECTURE.md).
inline constexpr std::uint32_t kMaxStreamBytes = 64;

struct StreamBeat {
  std::array<std::uint8_t, kMaxStreamBytes> data{};  // data[i] = RTL bits [8i+7:8i]
  std::uint64_t keep = 0;                            // bit i: byte i is part of the packet
  bool last = false;                                 // final beat of the packet

  friend bool operator==(const StreamBeat&, const StreamBeat&) = default;
};

// keep with the low n bits set (n <= 64).
[[nodiscard]] constexpr std::uint64_t keep_mask(std::uint32_t n) noexcept {
  return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1U;
}

// True when width is a legal beat width for the C++ ports: 1..kMaxStreamBytes.
[[nodiscard]] constexpr bool is_supported_width(std::uint32_t width) noexcept {
  return width >= 1 && width <= kMaxStreamBytes;
}

// Lowercase hex of the first `width` bytes, byte 0 first (as they appear in memory).
[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace naa::rtl
