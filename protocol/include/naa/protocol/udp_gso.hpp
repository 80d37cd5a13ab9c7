// UDP GSO (UDP_SEGMENT, Linux 4.18) as the host library's and naa-sim's batched sends use it
// (issue 31; docs/performance-cost.md items 23 and 28): one message of up to 64 segments and
// 64 KiB of UDP payload, cut into datagrams by the kernel as a RoCE NIC segments a message. The
// rules live here once; each side builds its own sendmmsg messages from them.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace naa::protocol::udp_gso {

inline constexpr std::size_t kMaxSegments = 64;
inline constexpr std::size_t kMaxBytes = 65507;  // 65535 - IPv4 20 - UDP 8

// Only toward loopback (127/8, `ipv4` in host order): GSO numbers the segments' IPv4 IDs 0, 1,
// 2, ..., and the ICRC covers the ID (PROTOCOL.md 1: written for ID 0), which a receiver reading
// the IP header (Soft-RoCE, a RoCE NIC) checks as sent; a receiver behind a socket (the host
// library, naa-sim) never sees the ID and recovers the one the ICRC was written with.
constexpr bool allowed_to(std::uint32_t ipv4) noexcept {
  return (ipv4 >> 24) == 127;
}

// The end of the run of datagrams [first, end) that one message may carry: equal sizes (the last
// may be shorter), one destination, at most kMaxSegments and kMaxBytes. `size(k)` is datagram
// k's size, `same_destination(k)` whether it goes where datagram `first` goes.
template <typename SizeOf, typename SameDestination>
std::size_t run_end(std::size_t first, std::size_t end, SizeOf size,
                    SameDestination same_destination) {
  const std::size_t segment = size(first);
  std::size_t bytes = segment;
  std::size_t j = first + 1;
  while (j < end && j - first < kMaxSegments && same_destination(j) && size(j) <= segment &&
         bytes + size(j) <= kMaxBytes) {
    bytes += size(j);
    ++j;
    if (size(j - 1) < segment) break;  // only the last segment may be shorter
  }
  return j;
}

// What a kernel without UDP GSO (or one refusing this message) answers a UDP_SEGMENT send: GSO
// is then switched off for the socket, and the message's datagrams go one by one.
constexpr bool refused(int err) noexcept {
  return err == EIO || err == EINVAL || err == ENOPROTOOPT || err == EOPNOTSUPP || err == EMSGSIZE;
}

}  // namespace naa::protocol::udp_gso
