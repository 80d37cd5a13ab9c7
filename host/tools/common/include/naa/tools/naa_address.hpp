// The NAA's address as the host tools take it (-a/--naa IP[:PORT], naa-call, naa-bench,
// softroce-probe): a dotted-quad IPv4 address and optionally the CM port (decimal, 1..65535).
// Strict: the caller turns nullopt into its usage error (exit 2). Standard library and POSIX only.
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <optional>
#include <string>

namespace naa::tools {

struct NaaAddress {
  std::string ip;                        // dotted quad, as given
  std::optional<std::uint16_t> cm_port;  // absent: the tool's default CM port
};

[[nodiscard]] inline std::optional<NaaAddress> parse_naa_address(const std::string& arg) {
  const std::size_t colon = arg.find(':');
  NaaAddress a;
  a.ip = arg.substr(0, colon);
  in_addr ignored{};
  if (::inet_pton(AF_INET, a.ip.c_str(), &ignored) != 1) return std::nullopt;
  if (colon == std::string::npos) return a;
  const std::string port = arg.substr(colon + 1);
  if (port.empty() || port.size() > 5) return std::nullopt;
  unsigned long v = 0;
  for (const char ch : port) {
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned long>(ch - '0');
  }
  if (v == 0 || v > 65535) return std::nullopt;
  a.cm_port = static_cast<std::uint16_t>(v);
  return a;
}

}  // namespace naa::tools
