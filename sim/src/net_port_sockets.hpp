// NetPort's socket side, shared by net_port.cpp (the model's stages) and net_port_socket.cpp (the
// UDP socket, recvmmsg/sendmmsg batches): the sockets and buffers, and the constants both use.
// Private to sim/src.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <boost/asio.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "naa/sim/net_port.hpp"

namespace naa::sim {

struct NetPort::Sockets {
  using udp = boost::asio::ip::udp;
  explicit Sockets(boost::asio::io_context& io_ctx) : io(io_ctx), listen(io_ctx) {}
  boost::asio::io_context& io;
  udp::socket listen;
  // Per-QP send sockets by UDP source port; nullptr = bind failed, use the listening socket.
  std::map<std::uint16_t, std::unique_ptr<udp::socket>> senders;
  // The last QP looked up (source_port() is asked twice per datagram, by TxPipe for the ICRC
  // and by the wire, and queue_datagram() wants its socket): its port and socket, without the
  // map (entries are never removed or replaced).
  struct LastSender {
    bool valid = false;
    std::uint32_t qpn = 0;
    std::uint16_t port = 0;  // what source_port() returned
    int fd = -1;             // the socket that port sends from
  } last;

  // recvmmsg: one system call takes every datagram waiting (issue 19).
  static constexpr std::size_t kRxBatch = 64;
  struct RxSlot {
    sockaddr_in from;
    iovec iov;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(in_pktinfo)) +
                                  CMSG_SPACE(sizeof(std::uint32_t)) + CMSG_SPACE(sizeof(int))];
  };
  std::array<mmsghdr, kRxBatch> rx_msgs{};
  std::array<RxSlot, kRxBatch> rx_slots{};
  std::array<Packet*, kRxBatch> rx_packets{};
  // recvmmsg message i: into buf[0, size), with its slot's address and control space.
  void prepare_rx(std::size_t i, std::uint8_t* buf, std::size_t size) {
    RxSlot& slot = rx_slots[i];
    slot.iov = iovec{buf, size};
    msghdr& msg = rx_msgs[i].msg_hdr;
    msg.msg_name = &slot.from;
    msg.msg_namelen = sizeof slot.from;
    msg.msg_iov = &slot.iov;
    msg.msg_iovlen = 1;
    msg.msg_control = slot.control;
    msg.msg_controllen = sizeof slot.control;
    msg.msg_flags = 0;
  }
  // UDP_GRO (issue 31, docs/sim/net_port.md "UDP GRO"): a peer's GSO send arrives as one buffer
  // of up to 64 datagrams (the kernel's UDP_GRO_CNT_MAX) and 64 KiB; read into these, then cut
  // into the pool's packets. A read asks for one buffer per 64 packets of room, so nothing read
  // ever waits outside the FIFO.
  bool gro = false;
  static constexpr std::size_t kGroSlots = 8;
  static constexpr std::size_t kGroBufferSize = 65536;
  static constexpr std::size_t kGroMaxSegments = 64;
  std::vector<std::uint8_t> gro_bufs;  // kGroSlots x kGroBufferSize, once GRO is on

  // sendmmsg: datagrams the model transmitted, sent together when the runner's simulation step
  // ends (flush_tx), before the model reads the socket again, or when kTxBatch are queued. Their
  // buffers go back to the pool once sent.
  static constexpr std::size_t kTxBatch = 32;
  struct TxEntry {
    int fd;
    sockaddr_in to;
    Packet* packet;
  };
  std::vector<TxEntry> outbox;
  std::array<mmsghdr, kTxBatch> tx_msgs{};
  std::array<iovec, kTxBatch> tx_iovs{};  // one per datagram: a GSO message takes a run of them
  // A GSO message's control block (UDP_SEGMENT, the segment size), one per message.
  struct TxControl {
    alignas(cmsghdr) char bytes[CMSG_SPACE(sizeof(std::uint16_t))];
  };
  std::array<TxControl, kTxBatch> tx_ctrl{};
  // Message m of a sendmmsg batch carries the outbox's datagrams tx_first[m] .. tx_first[m+1).
  std::array<std::size_t, kTxBatch + 1> tx_first{};
};

// In-model socket refill (rx_thread): only behind datagrams of a bulk transfer, so that small
// calls never pay for the extra (usually empty) receive.
inline constexpr std::size_t kRefillMinBytes = 1024;
inline constexpr std::size_t kRefillBudget = 64;
inline constexpr std::size_t kRxFifo = 4096;  // NetPort's input FIFO (datagrams)

inline std::uint64_t to_ns(const sc_core::sc_time& t) {
  return static_cast<std::uint64_t>(t.to_seconds() * 1e9 + 0.5);
}

}  // namespace naa::sim
