// IPv4 addresses as the host library handles them: host-order std::uint32_t, written as dotted
// quads. The one place that parses and formats them (naa/host/udp_roce.hpp includes it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace naa::host {

// Parses a dotted quad into a host-order IPv4 address.
[[nodiscard]] std::optional<std::uint32_t> parse_ipv4(const std::string& text) noexcept;
[[nodiscard]] std::string format_ipv4(std::uint32_t ip);

// 127.0.0.x: the loopback addresses a host endpoint picks from when none is given, x in
// [kFirstLoopbackHost, kLastLoopbackHost] (PROTOCOL.md 6: 127.0.0.2 is the NAA's default).
inline constexpr std::uint32_t kFirstLoopbackHost = 3;
inline constexpr std::uint32_t kLastLoopbackHost = 254;
[[nodiscard]] constexpr std::uint32_t loopback_ipv4(std::uint32_t x) noexcept {
  return 0x7F000000U | (x & 0xFFU);
}

}  // namespace naa::host
