// Command-line sizes for the host tools (naa-call, naa-bench): a decimal or 0x number with an
// optional K/M/G suffix (powers of 1024). Strict: no sign, no overflow, nothing after the
// suffix; the caller turns nullopt into its usage error (exit 2).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

namespace naa::tools {

[[nodiscard]] inline std::optional<std::uint64_t> parse_size_arg(const std::string& s) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno != 0 || end == s.c_str()) return std::nullopt;
  const std::string suffix(end);
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M" || suffix == "m") {
    shift = 20;
  } else if (suffix == "G" || suffix == "g") {
    shift = 30;
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (v > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return static_cast<std::uint64_t>(v) << shift;
}

}  // namespace naa::tools
