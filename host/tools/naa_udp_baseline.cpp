// naa-udp-baseline: raw UDP loopback figures to put next to naa-call's, measured the same way:
// the round trip of a 64-byte datagram (a 64 B call), and a bulk transfer of SIZE bytes in 4 KiB
// datagrams (the path MTU) sent to an echo thread and received back, with at most 128 datagrams
// in flight (the RC window). No RoCE, no ICRC, no reliability: the floor of what the socket costs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int bound_socket(const char* ip, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int buf = 16 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &a.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("bind");
    std::exit(1);
  }
  return fd;
}

sockaddr_in addr(const char* ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

constexpr const char* kUsage =
    "usage: naa-udp-baseline [--net A.B.C] [BULK_MIB (default 64)] [ROUND_TRIPS (default 1000)]\n"
    "  --net A.B.C   the two sockets bind A.B.C.1 and A.B.C.2, UDP 4791 (default 127.23.0)\n";

struct BaselineOptions {
  std::size_t bulk = std::size_t{64} << 20;  // bytes of the bulk transfer
  int trips = 1000;                          // 64-byte round trips
  std::string net = "127.23.0";
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "naa-udp-baseline: %s\n\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

long parse_count(const char* s, const char* what, long lo, long hi) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < lo || v > hi) {
    usage_error(std::string("bad ") + what + " '" + s + "'");
  }
  return v;
}

// Reads the command line; a bad argument prints usage and exits 2, --help prints it and exits 0.
BaselineOptions parse_options(int argc, char** argv) {
  BaselineOptions o;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (arg == "--net") {
      if (i + 1 >= argc) usage_error("--net needs a value");
      o.net = argv[++i];
      in_addr probe{};
      if (std::count(o.net.begin(), o.net.end(), '.') != 2 ||
          ::inet_pton(AF_INET, (o.net + ".1").c_str(), &probe) != 1) {
        usage_error("bad --net '" + o.net + "' (three octets A.B.C)");
      }
    } else if (!arg.empty() && arg[0] == '-') {
      usage_error("unknown option " + arg);
    } else if (positional == 0) {
      o.bulk = static_cast<std::size_t>(parse_count(argv[i], "BULK_MIB", 1, 1 << 16)) << 20;
      ++positional;
    } else if (positional == 1) {
      o.trips = static_cast<int>(parse_count(argv[i], "ROUND_TRIPS", 1, 100000000));
      ++positional;
    } else {
      usage_error("unexpected argument " + arg);
    }
  }
  return o;
}

int run(const BaselineOptions& o) {
  const std::size_t bulk = o.bulk;
  const int trips = o.trips;
  const std::string ip_a_s = o.net + ".1", ip_b_s = o.net + ".2";
  const char* ip_a = ip_a_s.c_str();
  const char* ip_b = ip_b_s.c_str();
  const int a = bound_socket(ip_a, 4791);
  const int b = bound_socket(ip_b, 4791);
  const sockaddr_in to_a = addr(ip_a, 4791);
  const sockaddr_in to_b = addr(ip_b, 4791);
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    std::vector<char> buf(65536);
    timeval tv{0, 100000};
    ::setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (!stop) {
      const ssize_t n = ::recv(b, buf.data(), buf.size(), 0);
      if (n > 0) {
        ::sendto(b, buf.data(), static_cast<std::size_t>(n), 0,
                 reinterpret_cast<const sockaddr*>(&to_a), sizeof to_a);
      }
    }
  });
  using Clock = std::chrono::steady_clock;
  std::vector<char> buf(65536);
  std::vector<double> lat;
  for (int i = 0; i < trips; ++i) {
    const auto t0 = Clock::now();
    ::sendto(a, buf.data(), 64, 0, reinterpret_cast<const sockaddr*>(&to_b), sizeof to_b);
    ::recv(a, buf.data(), buf.size(), 0);
    lat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(lat.begin(), lat.end());
  std::printf("udp 64 B round trip: min %.3f ms median %.3f ms max %.3f ms (%d trips)\n",
              lat.front(), lat[lat.size() / 2], lat.back(), trips);
  const std::size_t dgram = 4096;
  const std::size_t count = (bulk + dgram - 1) / dgram;
  std::size_t sent = 0;
  std::size_t received = 0;
  timeval tv{1, 0};
  ::setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const auto t0 = Clock::now();
  while (received < count) {
    while (sent < count && sent - received < 128) {
      ::sendto(a, buf.data(), dgram, 0, reinterpret_cast<const sockaddr*>(&to_b), sizeof to_b);
      ++sent;
    }
    if (::recv(a, buf.data(), buf.size(), 0) <= 0) break;  // a loss: stop (no retransmission)
    ++received;
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "udp bulk %zu MiB out and back in 4 KiB datagrams, window 128: %.1f MB/s (in+out), "
      "%.3f s, %zu of %zu datagrams returned\n",
      bulk >> 20, 2.0 * static_cast<double>(received * dgram) / 1e6 / s, s, received, count);
  stop = true;
  echo.join();
  ::close(a);
  ::close(b);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run(parse_options(argc, argv));
}
