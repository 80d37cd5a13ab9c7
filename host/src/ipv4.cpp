#include "naa/host/ipv4.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "naa/protocol/ipv4_udp.hpp"

namespace naa::host {

std::optional<std::uint32_t> parse_ipv4(const std::string& text) noexcept {
  in_addr a{};
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::string format_ipv4(std::uint32_t ip) {
  char buf[16];
  const std::size_t n = protocol::format_ipv4(ip, buf, sizeof buf);
  return std::string(buf, n);
}

}  // namespace naa::host
