// naa-bench: raw UDP baselines and the 100 GbE line-rate arithmetic (docs/performance.md).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "naa/host/udp_roce.hpp"

namespace naa::bench {

// Raw UDP baselines: the same datagram sizes as the RoCE packets, plain sendto/recv per datagram,
// between two sockets of this process (an echo/sink thread on the other one).

// RoCE bytes around the payload of a WRITE packet: BTH 12 + ICRC 4, RETH 16 on the first packet,
// ImmDt 4 on the last (PROTOCOL.md 2).
constexpr std::size_t kRoceOverhead = 12 + 4;
constexpr std::size_t kRethSize = 16;
constexpr std::size_t kImmSize = 4;
constexpr std::size_t kWindow = 128;   // the RC window in PSNs (PROTOCOL.md 3)
constexpr std::size_t kAckEvery = 64;  // AckReq every 64 PSNs

// Datagram sizes of a message of `bytes` in WRITE packets of at most `mtu` payload bytes.
inline std::vector<std::uint32_t> roce_datagrams(std::uint64_t bytes, std::uint32_t mtu, bool imm) {
  std::vector<std::uint32_t> d;
  std::uint64_t left = bytes;
  bool first = true;
  do {
    const std::uint64_t n = std::min<std::uint64_t>(left, mtu);
    left -= n;
    std::size_t size =
        n + kRoceOverhead + (first ? kRethSize : 0) + (left == 0 && imm ? kImmSize : 0);
    d.push_back(static_cast<std::uint32_t>(size));
    first = false;
  } while (left > 0);
  return d;
}

class UdpPair {
 public:
  UdpPair(const std::string& ip_a, const std::string& ip_b) {
    a_ = bound(ip_a);
    b_ = bound(ip_b);
    to_a_ = addr(ip_a);
    to_b_ = addr(ip_b);
    buf_.resize(65536);
  }
  ~UdpPair() {
    stop_worker();
    if (a_ >= 0) ::close(a_);
    if (b_ >= 0) ::close(b_);
  }
  [[nodiscard]] bool ok() const { return a_ >= 0 && b_ >= 0; }

  // Round trip: every datagram of the message out, the same datagrams back (the echo thread
  // returns each one), at most kWindow in flight. Returns seconds, or a negative value on loss.
  double round_trip(const std::vector<std::uint32_t>& dgrams) {
    start_worker(Mode::echo);
    const auto t0 = Clock::now();
    std::size_t sent = 0;
    std::size_t received = 0;
    while (received < dgrams.size()) {
      while (sent < dgrams.size() && sent - received < kWindow) {
        (void)::sendto(a_, buf_.data(), dgrams[sent], 0, to_b_ptr(), sizeof to_b_);
        ++sent;
      }
      if (!recv_one(a_)) return -1.0;
      ++received;
    }
    return seconds(Clock::now() - t0);
  }

  // One way: the datagrams go out, the sink answers a 16-byte ACK every kAckEvery datagrams and
  // after the last, and the sender keeps at most kWindow unacknowledged (as RC does).
  double one_way(const std::vector<std::uint32_t>& dgrams) {
    sink_expected_ = dgrams.size();
    start_worker(Mode::sink);
    const auto t0 = Clock::now();
    std::size_t sent = 0;
    std::size_t acked = 0;
    while (acked < dgrams.size()) {
      while (sent < dgrams.size() && sent - acked < kWindow) {
        (void)::sendto(a_, buf_.data(), dgrams[sent], 0, to_b_ptr(), sizeof to_b_);
        ++sent;
      }
      std::uint64_t count = 0;
      const ssize_t r = recv_into(a_, &count, sizeof count);
      if (r != static_cast<ssize_t>(sizeof count)) return -1.0;
      acked = std::max<std::size_t>(acked, count);
    }
    const double s = seconds(Clock::now() - t0);
    stop_worker();
    return s;
  }

 private:
  enum class Mode { none, echo, sink };

  static int bound(const std::string& ip) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int buf = 16 << 20;
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0) {
      (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    }
    timeval tv{2, 0};
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a = addr(ip);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  static sockaddr_in addr(const std::string& ip) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(4791);
    a.sin_addr.s_addr = htonl(naa::host::parse_ipv4(ip).value_or(0));
    return a;
  }
  const sockaddr* to_b_ptr() const { return reinterpret_cast<const sockaddr*>(&to_b_); }
  const sockaddr* to_a_ptr() const { return reinterpret_cast<const sockaddr*>(&to_a_); }
  bool recv_one(int fd) { return ::recv(fd, buf_.data(), buf_.size(), 0) > 0; }
  static ssize_t recv_into(int fd, void* p, std::size_t n) { return ::recv(fd, p, n, 0); }

  void start_worker(Mode m) {
    if (mode_ == m) return;
    stop_worker();
    mode_ = m;
    stop_ = false;
    worker_ = std::thread([this, m] {
      std::vector<char> b(65536);
      timeval tv{0, 50000};
      (void)::setsockopt(b_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      std::uint64_t count = 0;
      while (!stop_) {
        const ssize_t n = ::recv(b_, b.data(), b.size(), 0);
        if (n <= 0) continue;
        if (m == Mode::echo) {
          (void)::sendto(b_, b.data(), static_cast<std::size_t>(n), 0, to_a_ptr(), sizeof to_a_);
        } else if (++count % kAckEvery == 0 || count == sink_expected_) {
          (void)::sendto(b_, &count, sizeof count, 0, to_a_ptr(), sizeof to_a_);
          if (count == sink_expected_) count = 0;
        }
      }
    });
  }
  void stop_worker() {
    if (!worker_.joinable()) return;
    stop_ = true;
    worker_.join();
    mode_ = Mode::none;
  }

  int a_ = -1;
  int b_ = -1;
  sockaddr_in to_a_{};
  sockaddr_in to_b_{};
  std::vector<char> buf_;
  std::thread worker_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> sink_expected_{0};
  Mode mode_ = Mode::none;
};

// 100 GbE: per packet on the wire, besides the RoCE payload: preamble+SFD 8, Ethernet 14, IPv4 20,
// UDP 8, BTH 12, ICRC 4, FCS 4, inter-frame gap 12 = 82 bytes; RETH 16 once per message.
constexpr double kLineRateBps = 100e9;
constexpr double kWirePerPacket = 8 + 14 + 20 + 8 + 12 + 4 + 4 + 12;

inline double line_rate_goodput_gbps(std::uint64_t message, std::uint32_t mtu) {
  const double packets = std::ceil(static_cast<double>(std::max<std::uint64_t>(message, 1)) / mtu);
  const double wire = static_cast<double>(message) + packets * kWirePerPacket + kRethSize;
  return kLineRateBps / 1e9 * static_cast<double>(message) / wire;
}

}  // namespace naa::bench
