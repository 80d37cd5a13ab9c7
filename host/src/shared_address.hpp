// Many processes on one IPv4 address (docs/adr/0006): the endpoints that set
// UdpRoceOptions::share_address bind <ip>:4791 with SO_REUSEPORT, and a classic BPF program
// attached to the group (SO_ATTACH_REUSEPORT_CBPF) hands each datagram to the socket of the
// process that owns its destination, as a RoCE NIC delivers to the QP its BTH names:
//   - every sharing endpoint holds a slot s (1..255), and hands out QPNs s << 16 | n and
//     local comm IDs s << 24 | random, so the BTH destination QPN's top byte names the slot of a
//     data packet, and a CM MAD's remote comm ID's top byte that of a REP, RTU, REJ, MRA, DREQ,
//     DREP;
//   - a REQ (its remote comm ID is 0) goes to the slot listening on its service ID's rdma_cm port;
//   - everything else (no such slot, no listener, not a CM MAD) returns an index past the group,
//     so the kernel's hash picks a socket, whose endpoint drops and counts it as before.
// The program returns a socket's index in the group, which is its join order (the kernel moves
// the last socket into a leaver's index), so the join order and the listeners are kept in a state
// file that every change rewrites under a lock: /tmp/naa-shared-<uid>/<ip>/{lock,group,slot-<s>}.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "naa/host/error.hpp"

namespace naa::host::detail {

inline constexpr unsigned kFirstSlot = 1;
inline constexpr unsigned kLastSlot = 255;

// What the steering program knows: the slot of the socket at each index of the group (join
// order), and which slot listens on which rdma_cm port.
struct SteeringTable {
  std::vector<std::uint8_t> order;
  std::vector<std::pair<std::uint16_t, std::uint8_t>> listeners;  // port, slot
};

// The classic BPF program for a table (it runs on the UDP payload: the BTH at offset 0).
std::vector<sock_filter> steering_program(const SteeringTable& table);

// The index the program answers for "no socket of ours": the kernel then hashes.
inline constexpr std::uint32_t kNoSocket = 0xFFFFFFFF;

// Attaches a program to the reuseport group of fd; 0 or an errno. Replaceable by tests.
int attach_steering(int fd, const std::vector<sock_filter>& program);

class SharedAddress {
 public:
  // Claims a slot on ip, binds ip:4791 with SO_REUSEPORT (the socket set up as PROTOCOL.md 1)
  // and steers the group. nullptr with the reason and a one-line detail on failure.
  static std::unique_ptr<SharedAddress> join(std::uint32_t ip, Errc& why, std::string& detail);
  ~SharedAddress();
  SharedAddress(const SharedAddress&) = delete;
  SharedAddress& operator=(const SharedAddress&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] std::uint8_t slot() const noexcept { return slot_; }

  // Takes (on) or gives back (off) rdma_cm port `port` on the address: address_in_use if another
  // process listens on it.
  std::error_code listen(std::uint16_t port, bool on);

  // Leaves the group: steers it for the sockets that remain, then calls close_socket (which must
  // close fd()) under the address lock, so that no other join or leave sees the group half-done.
  void leave(const std::function<void()>& close_socket);

 private:
  SharedAddress(std::string dir, std::uint8_t slot, int slot_fd, int fd)
      : dir_(std::move(dir)), slot_(slot), slot_fd_(slot_fd), fd_(fd) {}
  std::string dir_;
  std::uint8_t slot_;
  int slot_fd_;  // the slot's lock, held while this endpoint lives (crash included: the kernel)
  int fd_;
  bool left_ = false;
};

}  // namespace naa::host::detail
