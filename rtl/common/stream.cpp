#include "naa/rtl/stream.hpp"

#include <cstdio>

#include "compare.hpp"

namespace naa::rtl {

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr std::string_view kDigits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * bytes.size());
  for (const std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 0xFU]);
  }
  return s;
}

namespace detail {

namespace {

std::string hex64(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::optional<PortMismatch> compare_stream(std::string_view prefix, std::uint32_t width,
                                           bool expected_valid, const StreamBeat& expected,
                                           bool actual_valid, const StreamBeat& actual) {
  // The common case (everything equal) builds no strings: this runs every cycle.
  const auto port = [prefix](std::string_view name) {
    return std::string(prefix) + "_" + std::string(name);
  };
  if (expected_valid != actual_valid) {
    return PortMismatch{port("valid"), expected_valid ? "1" : "0", actual_valid ? "1" : "0"};
  }
  if (!expected_valid) return std::nullopt;
  const std::uint64_t mask = keep_mask(width);
  if ((expected.keep & mask) != (actual.keep & mask)) {
    return PortMismatch{port("keep"), hex64(expected.keep & mask), hex64(actual.keep & mask)};
  }
  if (expected.last != actual.last) {
    return PortMismatch{port("last"), expected.last ? "1" : "0", actual.last ? "1" : "0"};
  }
  for (std::uint32_t i = 0; i < width; ++i) {
    if (expected.data[i] != actual.data[i]) {
      const std::span<const std::uint8_t> e(expected.data.data(), width);
      const std::span<const std::uint8_t> a(actual.data.data(), width);
      return PortMismatch{port("data") + " (byte " + std::to_string(i) + ")", to_hex(e), to_hex(a)};
    }
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace naa::rtl
