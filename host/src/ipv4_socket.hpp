// Socket-address helpers shared by the host's socket code (UdpRoce, Verbs, Session, AP1): the
// conversions between host-order IPv4 addresses and sockaddr_in, and errno messages.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "naa/host/ipv4.hpp"

namespace naa::host::detail {

inline sockaddr_in make_sockaddr(std::uint32_t ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(ip);
  return a;
}

// The host-order address of a sockaddr_in.
inline std::uint32_t ipv4_of(const sockaddr_in& a) {
  return ntohl(a.sin_addr.s_addr);
}

inline sockaddr* as_sockaddr(sockaddr_in& a) {
  return reinterpret_cast<sockaddr*>(&a);  // NOLINT: the sockets API
}
inline const sockaddr* as_sockaddr(const sockaddr_in& a) {
  return reinterpret_cast<const sockaddr*>(&a);  // NOLINT: the sockets API
}

inline std::string errno_text(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}
inline std::string errno_text(const std::string& what, int err) {
  return errno_text(what.c_str(), err);
}

}  // namespace naa::host::detail
