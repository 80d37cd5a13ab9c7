// The send batch of the UDP endpoint (udp_endpoint.hpp TxQueue): datagrams queued inside a
// TxBatch scope leave together in sendmmsg calls, runs of equal-size datagrams to a loopback
// address as UDP GSO sends (issue 31).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "naa/protocol/udp_gso.hpp"
#include "udp_endpoint.hpp"

namespace naa::host::detail {

std::span<std::uint8_t> Endpoint::tx_slot(int fd) {
  TxQueue& q = tx_queue_;
  if (q.count == kTxBatch || (q.count > 0 && q.fd != fd)) flush_tx();
  if (q.bytes.empty()) q.bytes.resize(kTxBatch * kRxBufferSize);
  q.fd = fd;
  return {q.bytes.data() + q.offsets[q.count], kRxBufferSize};
}

void Endpoint::commit_tx(const sockaddr_in& to, std::size_t size) {
  TxQueue& q = tx_queue_;
  q.sizes[q.count] = size;
  q.to[q.count] = to;
  q.offsets[q.count + 1] = q.offsets[q.count] + size;
  ++q.count;
}

bool Endpoint::enqueue_tx(int fd, const sockaddr_in& to, ByteView datagram) {
  if (datagram.size() > kRxBufferSize) return false;
  const std::span<std::uint8_t> slot = tx_slot(fd);
  std::memcpy(slot.data(), datagram.data(), datagram.size());
  commit_tx(to, datagram.size());
  return true;
}

// The queued datagrams in sendmmsg calls. A run of equal-size datagrams (the last may be
// shorter) to one loopback address is one message with UDP_SEGMENT: the kernel passes it through
// its IP stack once and cuts it into the same datagrams at the receiving socket, a third of the
// sender's system time per datagram (docs/performance-cost.md item 23). Only toward loopback:
// GSO numbers the segments' IPv4 IDs 0, 1, 2, ..., and the ICRC covers the ID, which a receiver
// that reads the IP header (a RoCE NIC, Soft-RoCE) checks as sent (PROTOCOL.md 1: ID 0); a
// receiver behind a socket (naa-sim, this library) never sees the ID and recovers the one the
// ICRC was written with. A message the kernel refuses is sent datagram by datagram.
void Endpoint::flush_tx() {
  TxQueue& q = tx_queue_;
  std::array<mmsghdr, kTxBatch> msgs{};
  std::array<iovec, kTxBatch> iov{};
  std::array<std::array<std::uint8_t, CMSG_SPACE(sizeof(std::uint16_t))>, kTxBatch> ctrl{};
  std::array<std::size_t, kTxBatch + 1> first{};  // message m: datagrams first[m] .. first[m+1)
  std::size_t nmsg = 0;
  for (std::size_t i = 0; i < q.count; ++nmsg) {
    std::size_t j = i + 1;
    if (tx_gso_ && protocol::udp_gso::allowed_to(ntohl(q.to[i].sin_addr.s_addr))) {
      j = protocol::udp_gso::run_end(
          i, q.count, [&q](std::size_t k) { return q.sizes[k]; },
          [&q, i](std::size_t k) {
            return q.to[k].sin_addr.s_addr == q.to[i].sin_addr.s_addr &&
                   q.to[k].sin_port == q.to[i].sin_port;
          });
    }
    iov[nmsg] = {q.bytes.data() + q.offsets[i], q.offsets[j] - q.offsets[i]};
    msghdr& mh = msgs[nmsg].msg_hdr;
    mh.msg_name = &q.to[i];
    mh.msg_namelen = sizeof(sockaddr_in);
    mh.msg_iov = &iov[nmsg];
    mh.msg_iovlen = 1;
    if (j - i > 1) {
      mh.msg_control = ctrl[nmsg].data();
      mh.msg_controllen = ctrl[nmsg].size();
      cmsghdr* c = CMSG_FIRSTHDR(&mh);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
      const auto segment = static_cast<std::uint16_t>(q.sizes[i]);
      std::memcpy(CMSG_DATA(c), &segment, sizeof segment);
    }
    first[nmsg] = i;
    i = j;
  }
  first[nmsg] = q.count;
  std::size_t sent = 0;
  while (sent < nmsg) {
    ++stats_.send_system_calls;
    const int n = ::sendmmsg(q.fd, msgs.data() + sent, static_cast<unsigned>(nmsg - sent), 0);
    if (n > 0) {
      for (std::size_t m = sent; m < sent + static_cast<std::size_t>(n); ++m) {
        if (first[m + 1] - first[m] > 1) stats_.gso_datagrams += first[m + 1] - first[m];
      }
      sent += static_cast<std::size_t>(n);
      continue;
    }
    const int err = n < 0 ? errno : 0;
    if (err == EINTR) continue;
    // The message at `sent` failed (a queued ICMP error, no buffer, or no UDP GSO here): its
    // datagrams as unbatched sends.
    if (first[sent + 1] - first[sent] > 1 && protocol::udp_gso::refused(err)) {
      tx_gso_ = false;
    }
    for (std::size_t k = first[sent]; k < first[sent + 1]; ++k)
      send_now(q.fd, q.to[k], {q.bytes.data() + q.offsets[k], q.sizes[k]});
    ++sent;
  }
  q.count = 0;
}

}  // namespace naa::host::detail
