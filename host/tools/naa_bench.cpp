// naa-bench: latency and bandwidth sweeps of calls to an NAA, with raw UDP baselines measured in
// the same run, the 100 GbE line-rate arithmetic, the NAA's simulated time (read from naa-sim's
// statistics before and after every point), simulator speed and naa-sim's idle CPU
// (docs/performance.md explains every figure).
//
// By default it starts its own naa-sim (next to this binary) on <net>.1 (--net) with
// --stats-file, and takes a statistics snapshot (SIGUSR1, then wait for the next stats_seq in the
// file) before and after each point. With --naa it uses a running NAA instead; simulated figures
// then need --sim-pid and --sim-stats (that naa-sim's --stats-file).
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/transport.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/tools/sim_process.hpp"
#include "naa/tools/sim_stats.hpp"
#include "naa/tools/size_arg.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"USAGE(usage: naa-bench [options]

Benchmarks calls to a (simulated) NAA and prints/writes the figures of docs/performance.md:
  latency     call round trip (inout region of SIZE bytes, WRITE(+IMM) -> kernel -> WRITE back)
              for SIZE = 1 B, x1.5, ... up to --max; setup (registration + connect + MRSP)
              measured separately; raw UDP ping-pong of the same datagram sizes beside it
  stream      one-way RDMA WRITE streaming of --stream bytes in WRITEs of 4 KiB .. --write-max
              (x4), beside a raw UDP stream of the same datagrams; simulated goodput vs the
              100 GbE line rate; simulator speed (simulated cycles per wall second)
  sessions    call throughput with 1 .. --sessions concurrent sessions (--call-size each)
  targets     64 B nop call vs 64 B UDP ping-pong, 64 MiB call vs UDP bulk, naa-sim idle CPU
Every point has wall time and the NAA's simulated time (cycles, ns) with the per-block busy
cycles (transport, memory, kernel, ...), taken from naa-sim's statistics.

Options:
  -a, --naa ADDR[:PORT]   use a running NAA (default: start naa-sim on <net>.1)
      --sim PATH          naa-sim to start (default: naa-sim next to naa-bench)
      --sim-args ARGS     extra arguments for the started naa-sim (e.g. "--kernels=rtl")
      --sim-pid PID       with --naa: the naa-sim to signal (SIGUSR1) for statistics
      --sim-stats FILE    with --naa: that naa-sim's --stats-file
      --net A.B.C | N     the /24 of local addresses: naa-sim .1, endpoint .2, UDP baseline
                          .200/.201 (N: 127.40.N; default 127.40.1)
  -w, --what LIST         comma-separated: latency,stream,sessions,targets (default: all)
  -m, --max SIZE          largest latency-sweep size (default 64M, at most 1G)
      --min SIZE          smallest latency-sweep size (default 1)
      --factor F          latency-sweep factor (default 1.5)
  -n, --reps N            repetitions per latency point (default 10)
  -f, --fn FN             kernel of the latency sweep: nop, add1, add2 or 1..127 (default nop)
      --stream SIZE       bytes per one-way streaming point (default 64M)
      --write-max SIZE    largest RDMA WRITE of the streaming sweep (default 4M)
  -s, --sessions N        most concurrent sessions (1..8, default 8)
      --call-size SIZE    inout region per session for the throughput sweep (default 1M)
      --calls N           calls per session per throughput point (default 8)
      --target-reps N     repetitions of the 64 B target latencies (default 300)
      --idle-seconds S    naa-sim idle CPU measured over S seconds (default 5; 0 = skip)
      --mtu N             path MTU 256..4096 (default 4096)
  -o, --out DIR           write the CSV files, summary and plots into DIR (default: none)
      --plot FMT          png, svg, both or none (default png; needs gnuplot)
  -q, --quiet             no progress bar and no tables, only the summary
  -h, --help              this help
SIZE takes K, M, G suffixes (powers of 1024).

Files in DIR: latency.csv, latency_naaice.csv (byte_length,setup_time,transfer_time in
seconds, one line per call, as the NAAICE measurements), stream.csv, sessions.csv, targets.csv,
summary.txt, env.txt and latency/stream/sessions.{png,svg}.
Exit status: 0 done, 2 usage error, 3 connection, MRSP or naa-sim failure.
)USAGE";

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "naa-bench: " << msg << "\n\n" << kUsage;
  std::exit(2);
}

std::uint64_t parse_size(const std::string& s) {
  const auto v = naa::tools::parse_size_arg(s);
  if (!v) usage_error("bad size '" + s + "' (a number with an optional K, M or G suffix)");
  return *v;
}

long parse_int(const std::string& s, const char* what, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 0);
  if (errno != 0 || end == s.c_str() || *end != '\0' || v < lo || v > hi) {
    usage_error(std::string("bad value for ") + what + ": '" + s + "'");
  }
  return v;
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string human_size(std::uint64_t b) {
  char buf[32];
  if (b >= (1ULL << 30) && b % (1ULL << 30) == 0) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " GiB", b >> 30);
  } else if (b >= (1ULL << 20)) {
    std::snprintf(buf, sizeof buf, "%.3g MiB", static_cast<double>(b) / (1 << 20));
  } else if (b >= (1ULL << 10)) {
    std::snprintf(buf, sizeof buf, "%.3g KiB", static_cast<double>(b) / (1 << 10));
  } else {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
  }
  return buf;
}

struct Summary {
  double min = 0, median = 0, mean = 0, max = 0;
};

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return s;
}

// ---------------------------------------------------------------------------------------------
// Progress bar: on a terminal (stderr) only, and never with --quiet.

class Progress {
 public:
  Progress(bool enabled, double total) : enabled_(enabled), total_(total) {}
  void set_total(double t) { total_ = t; }
  void advance(double units, const std::string& what) {
    done_ += units;
    if (!enabled_) return;
    const double f = total_ > 0 ? std::min(1.0, done_ / total_) : 1.0;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(f * kWidth);
    std::fprintf(stderr, "\r[%s%s] %3d%% %-40.40s",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(),
                 static_cast<int>(f * 100), what.c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fprintf(stderr, "\r%80s\r", "");
  }

 private:
  bool enabled_;
  double total_;
  double done_ = 0;
};

// ---------------------------------------------------------------------------------------------
// naa-sim: started as a child (or attached to), statistics snapshots on demand.

using naa::tools::sim_stat;
using naa::tools::SimStats;

// Busy cycles per block and simulated time between two snapshots.
struct SimDelta {
  bool valid = false;
  double time_ns = 0;
  double cycles = 0;
  double work_cycles = 0;
  double peer_wait_ns = 0;  // simulated time that only waited for peers (not in time_ns)
  double clock_mhz = 0;
  double wall_s = 0;  // naa-sim's own wall clock between the snapshots
  double transport = 0;
  double memory = 0;
  double kernel = 0;
  double net_port = 0;
  double rx_pipe = 0;
  double tx_pipe = 0;
  double rx_payload_bytes = 0;
  double cpu_s = 0;  // naa-sim's CPU time (user + system) between the snapshots
};

SimDelta delta(const std::optional<SimStats>& a, const std::optional<SimStats>& b, double cpu_s) {
  SimDelta d;
  if (!a || !b) return d;
  auto df = [&](const char* k) { return sim_stat(*b, k) - sim_stat(*a, k); };
  d.valid = true;
  // The NAA's own time: sim.work_cycles leaves out the simulated time that only followed wall
  // time while the model waited for a peer (retransmit/RNR timers pending, docs/sim/timing.md).
  d.work_cycles = df("sim.work_cycles");
  d.cycles = d.work_cycles;
  const double mhz = sim_stat(*b, "sim.clock_mhz");
  d.time_ns = mhz > 0 ? d.work_cycles * 1e3 / mhz : 0.0;
  d.peer_wait_ns = df("sim.peer_wait_ns");
  d.clock_mhz = mhz;
  d.wall_s = df("wall.seconds");
  d.transport = df("transport.rx_cycles") + df("transport.tx_cycles");
  d.memory = df("memory.cycles");
  d.kernel = df("kernel.cycles");
  d.net_port = df("net_port.rx_cycles") + df("net_port.tx_cycles");
  d.rx_pipe = df("rx_pipe.cycles");
  d.tx_pipe = df("tx_pipe.cycles");
  d.rx_payload_bytes = df("transport.rx_payload_bytes");
  d.cpu_s = cpu_s;
  return d;
}

using naa::tools::SimProcess;

// A statistics snapshot, or nullopt (with a warning: the simulated figures of this point are
// then missing) if naa-sim does not give one.
std::optional<SimStats> snapshot(SimProcess& sim) {
  if (sim.pid() <= 0 || sim.stats_file().empty()) return std::nullopt;
  try {
    return naa::tools::parse_sim_stats(sim.snapshot(std::chrono::seconds(10)));
  } catch (const naa::tools::SimProcessError& e) {
    std::cerr << "naa-bench: " << e.what() << "\n";
    return std::nullopt;
  }
}

// Snapshot pair around a measured point, with naa-sim's CPU time.
class SimProbe {
 public:
  explicit SimProbe(SimProcess& sim) : sim_(sim) {}
  void begin() {
    before_ = snapshot(sim_);
    cpu_before_ = sim_.cpu_seconds();
  }
  SimDelta end() {
    const auto after = snapshot(sim_);
    const auto cpu_after = sim_.cpu_seconds();
    const double cpu = (cpu_before_ && cpu_after) ? *cpu_after - *cpu_before_ : 0.0;
    return delta(before_, after, cpu);
  }

 private:
  SimProcess& sim_;
  std::optional<SimStats> before_;
  std::optional<double> cpu_before_;
};

// ---------------------------------------------------------------------------------------------
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
std::vector<std::uint32_t> roce_datagrams(std::uint64_t bytes, std::uint32_t mtu, bool imm) {
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

double line_rate_goodput_gbps(std::uint64_t message, std::uint32_t mtu) {
  const double packets = std::ceil(static_cast<double>(std::max<std::uint64_t>(message, 1)) / mtu);
  const double wire = static_cast<double>(message) + packets * kWirePerPacket + kRethSize;
  return kLineRateBps / 1e9 * static_cast<double>(message) / wire;
}

// ---------------------------------------------------------------------------------------------
// Benchmarks

struct Config {
  std::string naa_address;
  std::uint16_t cm_port = 12345;
  std::string net = "127.40.1";  // the first three octets of every local address
  std::uint64_t min_size = 1;
  std::uint64_t max_size = 64ULL << 20;
  double factor = 1.5;
  int reps = 10;
  int fn = 3;
  std::uint64_t stream_bytes = 64ULL << 20;
  std::uint64_t write_max = 4ULL << 20;
  int sessions = 8;
  std::uint64_t call_size = 1ULL << 20;
  int calls = 8;
  int target_reps = 300;
  double idle_seconds = 5;
  std::uint32_t mtu = 4096;
  std::string out_dir;
  std::string plot = "png";
  bool quiet = false;
  bool do_latency = true, do_stream = true, do_sessions = true, do_targets = true;
  std::string sim_mode = "model";
};

std::string local_ip(const Config& c, int host) {
  return c.net + "." + std::to_string(host);
}

struct LatencyPoint {
  std::uint64_t size = 0;
  int reps = 0;
  double setup_s = 0, connect_s = 0, mrsp_s = 0;
  Summary wall;
  std::vector<double> walls;
  std::uint64_t bytes_per_call = 0;  // in + out
  SimDelta sim;
  Summary udp;
};

struct StreamPoint {
  std::uint64_t bytes = 0;
  std::uint64_t write_size = 0;
  double wall_s = 0;
  double udp_s = 0;
  SimDelta sim;
};

struct SessionsPoint {
  int sessions = 0;
  std::uint64_t call_size = 0;
  int calls = 0;
  double wall_s = 0;
  std::uint64_t bytes = 0;  // in + out, all sessions
  SimDelta sim;
};

struct Targets {
  Summary call64, udp64;
  std::uint64_t big_size = 0;
  double big_call_gbps = 0, udp_bulk_gbps = 0;
  double sim_write_gbps = 0;     // best simulated goodput of 1 MiB+ WRITEs, end to end
  double sim_pipeline_gbps = 0;  // the same, pipeline bound
  double line_rate_gbps = 0;
  double sim_speed = 0;  // simulated work cycles per wall second while streaming
  double sim_speed_cpu = 0;
  double idle_cpu_s = -1, idle_window_s = 0;
};

naa::host::SessionOptions session_options(const Config& c) {
  naa::host::SessionOptions o;
  o.naa_address = c.naa_address;
  o.cm_port = c.cm_port;
  o.path_mtu = c.mtu;
  o.call_timeout = std::chrono::milliseconds(600000);
  return o;
}

std::shared_ptr<naa::host::Transport> open_transport(const std::string& ip) {
  naa::host::UdpRoceOptions o;
  o.local_ip = naa::host::parse_ipv4(ip);
  std::error_code ec;
  std::string detail;
  auto t = naa::host::open_udp_roce(o, ec, &detail);
  if (!t) {
    throw naa::host::Error(ec, "cannot open the endpoint on " + ip + ": " + detail);
  }
  return t;
}

std::vector<std::uint64_t> sweep_sizes(const Config& c) {
  std::vector<std::uint64_t> v;
  double x = static_cast<double>(c.min_size);
  while (true) {
    const auto s = static_cast<std::uint64_t>(std::llround(x));
    if (s >= c.max_size) break;
    if (v.empty() || s > v.back()) v.push_back(s);
    x *= c.factor;
  }
  v.push_back(c.max_size);
  return v;
}

// One latency point: a fresh session with one inout region of `size` bytes, `reps` calls.
LatencyPoint latency_point(const Config& c, const std::shared_ptr<naa::host::Transport>& t,
                           SimProcess& sim, std::uint64_t size, int reps, int fn) {
  LatencyPoint p;
  p.size = size;
  p.reps = reps;
  std::vector<std::uint8_t> buf(size);
  for (std::size_t i = 0; i < buf.size(); ++i)
    buf[i] = static_cast<std::uint8_t>(i * 7);
  const auto t0 = Clock::now();
  naa::host::Session s(t, session_options(c), {naa::host::Region::inout(buf.data(), buf.size())});
  p.setup_s = seconds(Clock::now() - t0);
  p.connect_s = seconds(s.info().connect_time);
  p.mrsp_s = seconds(s.info().mrsp_time);
  SimProbe probe(sim);
  probe.begin();
  for (int r = 0; r < reps; ++r) {
    const naa::host::CallResult res = s.call(static_cast<std::uint8_t>(fn));
    if (res.return_code != 0) {
      throw naa::host::Error(naa::host::Errc::invalid_argument,
                             "call returned 0x" + std::to_string(res.return_code));
    }
    p.walls.push_back(seconds(res.wall));
    p.bytes_per_call = res.bytes_sent + res.bytes_received;
  }
  p.sim = probe.end();
  p.wall = summarize(p.walls);
  s.disconnect();
  return p;
}

// A connection that does its own MRSP (one input region) so that it can stream plain RDMA WRITEs
// into NAA memory (Session only makes calls).
class WriteStream {
 public:
  WriteStream(const std::shared_ptr<naa::host::Transport>& t, const Config& c, std::uint64_t bytes)
      : t_(t),
        data_(bytes),
        mrsp_tx_(naa::protocol::kMrspMaxMessageSize),
        mrsp_rx_(naa::protocol::kMrspMaxMessageSize) {
    for (std::size_t i = 0; i < data_.size(); ++i)
      data_[i] = static_cast<std::uint8_t>(i * 13);
    check(t_->register_memory(data_.data(), data_.size(), naa::host::Access::none, data_mr_),
          "register");
    check(t_->register_memory(mrsp_tx_.data(), mrsp_tx_.size(), naa::host::Access::none, tx_mr_),
          "register");
    check(t_->register_memory(mrsp_rx_.data(), mrsp_rx_.size(), naa::host::Access::local_write,
                              rx_mr_),
          "register");
    naa::host::ConnectParams cp;
    cp.remote_ip = naa::host::parse_ipv4(c.naa_address).value_or(0);
    cp.cm_port = c.cm_port;
    cp.path_mtu = c.mtu;
    std::error_code ec;
    std::string detail;
    qp_ = t_->connect(cp, ec, &detail);
    if (!qp_) throw naa::host::Error(ec, "connect: " + detail);
    naa::protocol::MrspRequestEntry e;
    e.flags = naa::protocol::kMrspFlagInput;
    e.host_va = reinterpret_cast<std::uintptr_t>(data_.data());  // NOLINT: VAs on the wire
    e.host_rkey = data_mr_.rkey;
    e.size = static_cast<std::uint32_t>(bytes);
    const auto n = naa::protocol::encode_mrsp_request(std::span(&e, 1), mrsp_tx_);
    if (!n) throw naa::host::Error(naa::host::Errc::invalid_argument, "MRSP encode");
    naa::host::RecvWr rwr;
    rwr.wr_id = 1;
    rwr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_rx_.data()),  // NOLINT
               static_cast<std::uint32_t>(mrsp_rx_.size()), rx_mr_.lkey};
    check(qp_->post_recv(rwr), "post_recv");
    naa::host::SendWr swr;
    swr.wr_id = 2;
    swr.opcode = naa::host::WrOpcode::send;
    swr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_tx_.data()),  // NOLINT
               static_cast<std::uint32_t>(*n), tx_mr_.lkey};
    swr.solicited = true;
    check(qp_->post_send(swr), "post_send");
    std::uint32_t reply_len = 0;
    for (int got = 0; got < 2;) {
      naa::host::WorkCompletion wc;
      if (qp_->wait_cq(std::span(&wc, 1), std::chrono::seconds(10)) == 0) {
        throw naa::host::Error(naa::host::Errc::timeout, "no MRSP answer");
      }
      check(wc.status, "MRSP");
      if (wc.wr_id == 1) reply_len = wc.byte_len;
      ++got;
    }
    const auto adv = naa::protocol::decode_mrsp_advertisement({mrsp_rx_.data(), reply_len});
    if (!adv || adv->count() != 1) {
      throw naa::host::Error(naa::host::Errc::mrsp_bad_reply, "MRSP answer");
    }
    placement_ = adv->entry(0);
  }
  ~WriteStream() {
    if (qp_) (void)qp_->disconnect(std::chrono::milliseconds(1000));
    qp_.reset();
    (void)t_->deregister_memory(data_mr_);
    (void)t_->deregister_memory(tx_mr_);
    (void)t_->deregister_memory(rx_mr_);
  }
  WriteStream(const WriteStream&) = delete;
  WriteStream& operator=(const WriteStream&) = delete;

  // Streams the whole buffer in WRITEs of `write_size`, at most 4 outstanding; returns seconds
  // from the first post to the last completion (every WRITE acknowledged).
  double run(std::uint64_t write_size) {
    constexpr std::size_t kDepth = 4;
    const std::uint64_t total = data_.size();
    std::uint64_t posted = 0;
    std::size_t outstanding = 0;
    const auto t0 = Clock::now();
    while (posted < total || outstanding > 0) {
      while (posted < total && outstanding < kDepth) {
        const std::uint64_t n = std::min(write_size, total - posted);
        naa::host::SendWr w;
        w.wr_id = posted;
        w.opcode = naa::host::WrOpcode::rdma_write;
        w.sge = {reinterpret_cast<std::uintptr_t>(data_.data()) + posted,  // NOLINT
                 static_cast<std::uint32_t>(n), data_mr_.lkey};
        w.remote_addr = placement_.naa_address + posted;
        w.rkey = placement_.rkey;
        check(qp_->post_send(w), "post WRITE");
        posted += n;
        ++outstanding;
      }
      naa::host::WorkCompletion wc[8];
      const std::size_t k = qp_->wait_cq(wc, std::chrono::seconds(30));
      if (k == 0) throw naa::host::Error(naa::host::Errc::timeout, "WRITE stream stalled");
      for (std::size_t i = 0; i < k; ++i)
        check(wc[i].status, "WRITE");
      outstanding -= k;
    }
    return seconds(Clock::now() - t0);
  }

 private:
  static void check(std::error_code ec, const char* what) {
    if (ec) throw naa::host::Error(ec, what);
  }
  std::shared_ptr<naa::host::Transport> t_;
  std::vector<std::uint8_t> data_;
  std::vector<std::uint8_t> mrsp_tx_;
  std::vector<std::uint8_t> mrsp_rx_;
  naa::host::MemoryRegion data_mr_, tx_mr_, rx_mr_;
  std::unique_ptr<naa::host::QueuePair> qp_;
  naa::protocol::MrspAdvertisementEntry placement_;
};

SessionsPoint sessions_point(const Config& c, const std::shared_ptr<naa::host::Transport>& t,
                             SimProcess& sim, int k) {
  SessionsPoint p;
  p.sessions = k;
  p.call_size = c.call_size;
  p.calls = c.calls;
  const std::uint64_t stride = (c.call_size + 4095) / 4096 * 4096;
  std::vector<std::vector<std::uint8_t>> bufs(static_cast<std::size_t>(k),
                                              std::vector<std::uint8_t>(c.call_size, 1));
  std::vector<naa::host::Session> ss;
  for (int i = 0; i < k; ++i) {
    auto o = session_options(c);
    o.naa_base_address = stride * static_cast<std::uint64_t>(i);
    auto& b = bufs[static_cast<std::size_t>(i)];
    ss.emplace_back(t, o, std::vector{naa::host::Region::inout(b.data(), b.size())});
  }
  SimProbe probe(sim);
  probe.begin();
  const auto t0 = Clock::now();
  for (int r = 0; r < c.calls; ++r) {
    std::vector<naa::host::Call> inflight;
    for (auto& s : ss)
      inflight.push_back(s.invoke(static_cast<std::uint8_t>(c.fn)));
    for (auto& call : inflight) {
      const auto res = call.get();
      p.bytes += res.bytes_sent + res.bytes_received;
    }
  }
  p.wall_s = seconds(Clock::now() - t0);
  p.sim = probe.end();
  for (auto& s : ss)
    s.disconnect();
  return p;
}

// ---------------------------------------------------------------------------------------------
// Output

class Csv {
 public:
  Csv(const std::string& dir, const std::string& name, const std::string& header) {
    if (dir.empty()) return;
    f_.open(dir + "/" + name);
    if (!f_) {
      std::cerr << "naa-bench: cannot write " << dir << "/" << name << "\n";
      std::exit(3);
    }
    f_ << header << '\n';
  }
  template <class... T>
  void row(const T&... v) {
    if (!f_.is_open()) return;
    bool first = true;
    ((f_ << (first ? "" : ",") << fmt(v), first = false), ...);
    f_ << '\n';
    f_.flush();
  }

 private:
  static std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
  }
  static std::string fmt(std::uint64_t v) { return std::to_string(v); }
  static std::string fmt(int v) { return std::to_string(v); }
  static std::string fmt(const std::string& v) { return v; }
  std::ofstream f_;
};

double gbps(double bytes, double s) {
  return s > 0 ? bytes * 8 / s / 1e9 : 0.0;
}
double sim_gbps(double bytes, const SimDelta& d) {
  return d.valid && d.time_ns > 0 ? bytes * 8 / d.time_ns : 0.0;
}
// What the NAA sustains when packets arrive back to back: bytes over the busy time of its
// busiest block (the pipeline bound), independent of how the host's packets were spaced.
double sim_pipeline_gbps(double bytes, const SimDelta& d) {
  const double busiest =
      std::max({d.net_port, d.rx_pipe, d.transport, d.memory, d.kernel, d.tx_pipe});
  return d.valid && busiest > 0 && d.clock_mhz > 0 ? bytes * 8 / (busiest * 1e3 / d.clock_mhz)
                                                   : 0.0;
}

void write_plots(const Config& c, bool latency, bool stream, bool sessions) {
  if (c.out_dir.empty() || c.plot == "none") return;
  std::vector<std::pair<std::string, std::string>> terms;
  if (c.plot == "png" || c.plot == "both") {
    terms.emplace_back("png", "pngcairo size 1000,650 noenhanced");
  }
  if (c.plot == "svg" || c.plot == "both") {
    terms.emplace_back("svg", "svg size 1000,650 noenhanced");
  }
  const std::string script = c.out_dir + "/plots.gp";
  std::ofstream g(script);
  g << "# gnuplot script written by naa-bench; run: gnuplot plots.gp\n"
       "set datafile separator ','\nset key top left\nset grid\n";
  for (const auto& [ext, term] : terms) {
    g << "set terminal " << term << '\n';
    if (latency) {
      g << "set output 'latency." << ext << "'\n"
        << "set title 'Call round trip vs message size (inout region, " << c.mtu
        << " B MTU)'\nset logscale xy\nset xlabel 'message size (bytes, each way)'\n"
           "set ylabel 'seconds'\nset format y '%g'\n"
           "plot 'latency.csv' using 1:7 with linespoints title 'call wall (median)', \\\n"
           "     '' using 1:($11/1e9) with linespoints title 'call simulated (NAA time)', \\\n"
           "     '' using 1:3 with linespoints title 'setup (register+connect+MRSP)', \\\n"
           "     '' using 1:20 with linespoints title 'raw UDP round trip (median)'\n"
           "unset logscale\n";
    }
    if (stream) {
      g << "set output 'stream." << ext << "'\n"
        << "set title 'One-way RDMA WRITE streaming vs WRITE size'\nset logscale x\n"
           "set xlabel 'RDMA WRITE size (bytes)'\nset ylabel 'Gb/s'\nset yrange [0:*]\n"
           "plot 'stream.csv' using 2:4 with linespoints title 'wall goodput', \\\n"
           "     '' using 2:7 with linespoints title 'simulated goodput', \\\n"
           "     '' using 2:8 with lines dashtype 2 title '100 GbE line rate (goodput)', \\\n"
           "     '' using 2:10 with linespoints title 'raw UDP stream (wall)'\n"
           "unset logscale\nset yrange [*:*]\n";
    }
    if (sessions) {
      g << "set output 'sessions." << ext << "'\n"
        << "set title 'Call throughput vs concurrent sessions (in+out)'\n"
           "set xlabel 'sessions'\nset ylabel 'Gb/s'\nset yrange [0:*]\nset xtics 1\n"
           "plot 'sessions.csv' using 1:6 with linespoints title 'wall', \\\n"
           "     '' using 1:9 with linespoints title 'simulated'\n"
           "set xtics autofreq\nset yrange [*:*]\n";
    }
  }
  g.close();
  const std::string cmd = "cd '" + c.out_dir + "' && gnuplot plots.gp 2>gnuplot.log";
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::cerr << "naa-bench: gnuplot not found; plots.gp written, no plots\n";
    return;
  }
  if (std::system(cmd.c_str()) != 0) {
    std::cerr << "naa-bench: gnuplot failed (see " << c.out_dir << "/gnuplot.log)\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  std::string sim_path;
  std::string sim_args;
  std::string sim_stats;
  long sim_pid = 0;
  bool external = false;

  enum {
    kSim = 1000,
    kSimArgs,
    kSimPid,
    kSimStats,
    kNet,
    kMin,
    kFactor,
    kStream,
    kWriteMax,
    kCallSize,
    kCalls,
    kTargetReps,
    kIdle,
    kMtu,
    kPlot
  };
  static const option long_opts[] = {{"naa", required_argument, nullptr, 'a'},
                                     {"sim", required_argument, nullptr, kSim},
                                     {"sim-args", required_argument, nullptr, kSimArgs},
                                     {"sim-pid", required_argument, nullptr, kSimPid},
                                     {"sim-stats", required_argument, nullptr, kSimStats},
                                     {"net", required_argument, nullptr, kNet},
                                     {"what", required_argument, nullptr, 'w'},
                                     {"max", required_argument, nullptr, 'm'},
                                     {"min", required_argument, nullptr, kMin},
                                     {"factor", required_argument, nullptr, kFactor},
                                     {"reps", required_argument, nullptr, 'n'},
                                     {"fn", required_argument, nullptr, 'f'},
                                     {"stream", required_argument, nullptr, kStream},
                                     {"write-max", required_argument, nullptr, kWriteMax},
                                     {"sessions", required_argument, nullptr, 's'},
                                     {"call-size", required_argument, nullptr, kCallSize},
                                     {"calls", required_argument, nullptr, kCalls},
                                     {"target-reps", required_argument, nullptr, kTargetReps},
                                     {"idle-seconds", required_argument, nullptr, kIdle},
                                     {"mtu", required_argument, nullptr, kMtu},
                                     {"out", required_argument, nullptr, 'o'},
                                     {"plot", required_argument, nullptr, kPlot},
                                     {"quiet", no_argument, nullptr, 'q'},
                                     {"help", no_argument, nullptr, 'h'},
                                     {nullptr, 0, nullptr, 0}};
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, ":a:w:m:n:f:s:o:qh", long_opts, nullptr)) != -1) {
    const std::string arg = optarg != nullptr ? optarg : "";
    switch (opt) {
      case 'a': {
        const std::size_t colon = arg.find(':');
        c.naa_address = arg.substr(0, colon);
        if (colon != std::string::npos) {
          c.cm_port =
              static_cast<std::uint16_t>(parse_int(arg.substr(colon + 1), "--naa port", 1, 65535));
        }
        if (!naa::host::parse_ipv4(c.naa_address)) usage_error("bad --naa address " + arg);
        external = true;
        break;
      }
      case kSim:
        sim_path = arg;
        break;
      case kSimArgs:
        sim_args = arg;
        break;
      case kSimPid:
        sim_pid = parse_int(arg, "--sim-pid", 1, 1L << 30);
        break;
      case kSimStats:
        sim_stats = arg;
        break;
      case kNet:
        if (arg.find('.') == std::string::npos) {
          c.net = "127.40." + std::to_string(parse_int(arg, "--net", 1, 254));
        } else if (!naa::host::parse_ipv4(arg + ".1") ||
                   std::count(arg.begin(), arg.end(), '.') != 2) {
          usage_error("bad --net '" + arg + "' (three octets A.B.C, or N for 127.40.N)");
        } else {
          c.net = arg;
        }
        break;
      case 'w': {
        c.do_latency = c.do_stream = c.do_sessions = c.do_targets = false;
        std::istringstream in(arg);
        for (std::string w; std::getline(in, w, ',');) {
          if (w == "latency") {
            c.do_latency = true;
          } else if (w == "stream") {
            c.do_stream = true;
          } else if (w == "sessions") {
            c.do_sessions = true;
          } else if (w == "targets") {
            c.do_targets = true;
          } else if (w == "all") {
            c.do_latency = c.do_stream = c.do_sessions = c.do_targets = true;
          } else {
            usage_error("unknown --what item '" + w + "'");
          }
        }
        break;
      }
      case 'm':
        c.max_size = parse_size(arg);
        break;
      case kMin:
        c.min_size = parse_size(arg);
        break;
      case kFactor:
        c.factor = std::strtod(arg.c_str(), nullptr);
        if (!(c.factor > 1.01 && c.factor <= 100)) usage_error("--factor must be in (1.01, 100]");
        break;
      case 'n':
        c.reps = static_cast<int>(parse_int(arg, "--reps", 1, 1000000));
        break;
      case 'f':
        if (arg == "nop") {
          c.fn = 3;
        } else if (arg == "add1") {
          c.fn = 1;
        } else if (arg == "add2") {
          c.fn = 2;
        } else {
          c.fn = static_cast<int>(parse_int(arg, "--fn", 1, 127));
        }
        break;
      case kStream:
        c.stream_bytes = parse_size(arg);
        break;
      case kWriteMax:
        c.write_max = parse_size(arg);
        break;
      case 's':
        c.sessions = static_cast<int>(parse_int(arg, "--sessions", 1, 8));
        break;
      case kCallSize:
        c.call_size = parse_size(arg);
        break;
      case kCalls:
        c.calls = static_cast<int>(parse_int(arg, "--calls", 1, 1000000));
        break;
      case kTargetReps:
        c.target_reps = static_cast<int>(parse_int(arg, "--target-reps", 1, 10000000));
        break;
      case kIdle:
        c.idle_seconds = std::strtod(arg.c_str(), nullptr);
        if (!(c.idle_seconds >= 0 && c.idle_seconds <= 3600)) usage_error("bad --idle-seconds");
        break;
      case kMtu: {
        const long m = parse_int(arg, "--mtu", 256, 4096);
        if (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096) {
          usage_error("--mtu must be 256, 512, 1024, 2048 or 4096");
        }
        c.mtu = static_cast<std::uint32_t>(m);
        break;
      }
      case 'o':
        c.out_dir = arg;
        break;
      case kPlot:
        if (arg != "png" && arg != "svg" && arg != "both" && arg != "none") {
          usage_error("--plot takes png, svg, both or none");
        }
        c.plot = arg;
        break;
      case 'q':
        c.quiet = true;
        break;
      case 'h':
        std::cout << kUsage;
        return 0;
      case ':':
        usage_error(std::string("option ") + argv[optind - 1] + " needs a value");
      default:
        usage_error(std::string("unknown option ") + argv[optind - 1]);
    }
  }
  if (optind < argc) usage_error(std::string("unexpected argument ") + argv[optind]);
  if (c.min_size < 1 || c.max_size < c.min_size || c.max_size > (1ULL << 30)) {
    usage_error("need 1 <= --min <= --max <= 1G");
  }
  if (c.stream_bytes < 4096 || c.stream_bytes > (1ULL << 30)) {
    usage_error("--stream must be 4K..1G");
  }
  if (c.write_max < 4096) usage_error("--write-max must be >= 4K");
  if (c.call_size < 1 || c.call_size > (1ULL << 30)) usage_error("--call-size must be 1..1G");
  if (!external && (sim_pid != 0 || !sim_stats.empty())) {
    usage_error("--sim-pid/--sim-stats go with --naa");
  }
  if (!c.out_dir.empty()) {
    if (::mkdir(c.out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      std::cerr << "naa-bench: cannot create " << c.out_dir << "\n";
      return 3;
    }
  }
  if (sim_args.find("rtl") != std::string::npos || sim_args.find("lockstep") != std::string::npos) {
    c.sim_mode = sim_args;
  }
  ::signal(SIGPIPE, SIG_IGN);

  // naa-sim.
  std::unique_ptr<SimProcess> sim_owner;
  std::string tmp_dir;
  if (external) {
    sim_owner = std::make_unique<SimProcess>();
    if (sim_pid != 0 && !sim_stats.empty()) {
      sim_owner->attach(static_cast<pid_t>(sim_pid), sim_stats);
    }
  } else {
    if (sim_path.empty()) {
      char self[4096];
      const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
      std::string dir = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : argv[0];
      dir = dir.substr(0, dir.rfind('/') + 1);
      sim_path = dir + "naa-sim";
    }
    char tmpl[] = "/tmp/naa-bench.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      std::cerr << "naa-bench: mkdtemp failed\n";
      return 3;
    }
    tmp_dir = tmpl;
    c.naa_address = local_ip(c, 1);
    naa::tools::SimLaunch launch;
    launch.binary = sim_path;
    launch.listen = c.naa_address;
    launch.stats_file = tmp_dir + "/naa-sim.stats";
    std::istringstream words(sim_args);
    for (std::string w; words >> w;)
      launch.args.push_back(w);
    try {
      sim_owner = std::make_unique<SimProcess>(launch);
    } catch (const naa::tools::SimProcessError& e) {
      std::cerr << "naa-bench: " << e.what() << "\n";
      return 3;
    }
    if (!sim_owner->ready()) {
      std::cerr << "naa-bench: naa-sim did not start (" << sim_owner->command()
                << "): " << sim_owner->describe_exit() << "; its output: '"
                << sim_owner->ready_line() << "'\n";
      return 3;
    }
  }
  SimProcess& sim = *sim_owner;

  const bool bar = !c.quiet && ::isatty(STDERR_FILENO) != 0;
  const auto sizes = sweep_sizes(c);
  std::vector<std::uint64_t> write_sizes;
  for (std::uint64_t w = 4096; w <= std::min(c.write_max, c.stream_bytes); w *= 4)
    write_sizes.push_back(w);
  // Progress units: roughly proportional to the bytes moved.
  double total = 0;
  if (c.do_latency) {
    for (auto s : sizes)
      total += 1 + static_cast<double>(s) * c.reps / (1 << 20);
  }
  if (c.do_stream)
    total += static_cast<double>(write_sizes.size()) *
             (1 + static_cast<double>(c.stream_bytes) / (1 << 20));
  if (c.do_sessions)
    total += c.sessions * (1 + static_cast<double>(c.call_size) * c.calls / (1 << 20));
  if (c.do_targets) total += 4 + static_cast<double>(c.max_size) / (1 << 20);
  Progress progress(bar, total);
  auto say = [&](const char* fmt_line, auto... a) {
    if (c.quiet) return;
    if (bar) std::fprintf(stderr, "\r%80s\r", "");
    std::printf(fmt_line, a...);
    std::fflush(stdout);
  };

  std::vector<LatencyPoint> lat;
  std::vector<StreamPoint> streams;
  std::vector<SessionsPoint> sess;
  Targets tg;
  int rc = 0;
  try {
    UdpPair udp(local_ip(c, 200), local_ip(c, 201));
    if (!udp.ok()) throw naa::host::Error(naa::host::Errc::socket_error, "UDP baseline sockets");
    auto transport = open_transport(local_ip(c, 2));
    say("naa-bench: NAA %s:%u (%s), endpoint %s, MTU %u\n", c.naa_address.c_str(), c.cm_port,
        external ? "external" : "naa-sim started", local_ip(c, 2).c_str(), c.mtu);

    if (c.do_latency) {
      Csv csv(c.out_dir, "latency.csv",
              "bytes,reps,setup_s,connect_s,mrsp_s,wall_min_s,wall_median_s,wall_mean_s,"
              "wall_max_s,sim_cycles,sim_ns,transport_cycles,memory_cycles,kernel_cycles,"
              "net_port_cycles,rx_pipe_cycles,tx_pipe_cycles,bytes_per_call,udp_min_s,"
              "udp_median_s,call_over_udp,sim_peer_wait_ns");
      Csv naaice(c.out_dir, "latency_naaice.csv", "byte_length,setup_time,transfer_time");
      say("\nlatency (fn %d, inout region, %d calls per size; times per call)\n", c.fn, c.reps);
      say("%12s %10s %11s %11s %11s %12s %11s\n", "bytes", "setup ms", "wall med ms", "sim us",
          "udp med ms", "call/udp", "sim cycles");
      for (const std::uint64_t size : sizes) {
        LatencyPoint p = latency_point(c, transport, sim, size, c.reps, c.fn);
        const auto dg = roce_datagrams(size, c.mtu, true);
        std::vector<double> u;
        for (int r = 0; r < c.reps; ++r) {
          const double s = udp.round_trip(dg);
          if (s > 0) u.push_back(s);
        }
        p.udp = summarize(u);
        const double n = p.reps;
        const SimDelta& d = p.sim;
        csv.row(p.size, p.reps, p.setup_s, p.connect_s, p.mrsp_s, p.wall.min, p.wall.median,
                p.wall.mean, p.wall.max, d.cycles / n, d.time_ns / n, d.transport / n, d.memory / n,
                d.kernel / n, d.net_port / n, d.rx_pipe / n, d.tx_pipe / n, p.bytes_per_call,
                p.udp.min, p.udp.median, p.udp.median > 0 ? p.wall.median / p.udp.median : 0.0,
                d.peer_wait_ns / n);
        for (double w : p.walls)
          naaice.row(p.size, p.setup_s, w);
        say("%12" PRIu64 " %10.3f %11.3f %11.3f %11.3f %12.2f %11.0f\n", p.size, p.setup_s * 1e3,
            p.wall.median * 1e3, d.time_ns / n / 1e3, p.udp.median * 1e3,
            p.udp.median > 0 ? p.wall.median / p.udp.median : 0.0, d.cycles / n);
        lat.push_back(std::move(p));
        progress.advance(1 + static_cast<double>(size) * c.reps / (1 << 20),
                         "latency " + human_size(size));
      }
    }

    if (c.do_stream) {
      Csv csv(c.out_dir, "stream.csv",
              "bytes,write_size,wall_s,wall_gbps,sim_ns,sim_cycles,sim_goodput_gbps,"
              "line_rate_goodput_gbps,udp_wall_s,udp_gbps,transport_cycles,memory_cycles,"
              "kernel_cycles,net_port_cycles,rx_pipe_cycles,tx_pipe_cycles,"
              "sim_work_cycles_per_wall_s,sim_cycles_per_cpu_s,sim_mode,mtu,sim_pipeline_gbps");
      say("\none-way RDMA WRITE streaming, %s per point, MTU %u\n",
          human_size(c.stream_bytes).c_str(), c.mtu);
      say("%10s %10s %10s %10s %10s %10s %14s\n", "write", "wall Gb/s", "sim Gb/s", "line Gb/s",
          "udp Gb/s", "sim ms", "sim cyc/wall s");
      WriteStream ws(transport, c, c.stream_bytes);
      // Same datagram sizes as the WRITE packets of the whole stream.
      for (const std::uint64_t w : write_sizes) {
        StreamPoint p;
        p.bytes = c.stream_bytes;
        p.write_size = w;
        SimProbe probe(sim);
        probe.begin();
        p.wall_s = ws.run(w);
        p.sim = probe.end();
        std::vector<std::uint32_t> dg;
        for (std::uint64_t off = 0; off < c.stream_bytes; off += w) {
          const auto part = roce_datagrams(std::min(w, c.stream_bytes - off), c.mtu, false);
          dg.insert(dg.end(), part.begin(), part.end());
        }
        p.udp_s = udp.one_way(dg);
        const SimDelta& d = p.sim;
        const double speed = d.wall_s > 0 ? d.work_cycles / d.wall_s : 0.0;
        const double speed_cpu = d.cpu_s > 0 ? d.work_cycles / d.cpu_s : 0.0;
        const double bytes = static_cast<double>(p.bytes);
        csv.row(p.bytes, p.write_size, p.wall_s, gbps(bytes, p.wall_s), d.time_ns, d.cycles,
                sim_gbps(bytes, d), line_rate_goodput_gbps(w, c.mtu), p.udp_s, gbps(bytes, p.udp_s),
                d.transport, d.memory, d.kernel, d.net_port, d.rx_pipe, d.tx_pipe, speed, speed_cpu,
                c.sim_mode, static_cast<int>(c.mtu), sim_pipeline_gbps(bytes, d));
        say("%10s %10.2f %10.2f %10.2f %10.2f %10.3f %14.3g\n", human_size(w).c_str(),
            gbps(bytes, p.wall_s), sim_gbps(bytes, d), line_rate_goodput_gbps(w, c.mtu),
            gbps(bytes, p.udp_s), d.time_ns / 1e6, speed);
        if (w >= (1ULL << 20)) {
          tg.sim_write_gbps = std::max(tg.sim_write_gbps, sim_gbps(bytes, d));
          tg.sim_pipeline_gbps = std::max(tg.sim_pipeline_gbps, sim_pipeline_gbps(bytes, d));
          tg.line_rate_gbps = line_rate_goodput_gbps(w, c.mtu);
        }
        tg.sim_speed = std::max(tg.sim_speed, speed);
        tg.sim_speed_cpu = std::max(tg.sim_speed_cpu, speed_cpu);
        streams.push_back(p);
        progress.advance(1 + bytes / (1 << 20), "stream " + human_size(w));
      }
    }

    if (c.do_sessions) {
      Csv csv(c.out_dir, "sessions.csv",
              "sessions,call_size,calls_per_session,wall_s,bytes,wall_gbps,calls_per_s,sim_ns,"
              "sim_gbps,transport_cycles,memory_cycles,kernel_cycles,net_port_cycles,"
              "rx_pipe_cycles,tx_pipe_cycles");
      say("\ncall throughput, fn %d, inout %s per session, %d calls each (in+out)\n", c.fn,
          human_size(c.call_size).c_str(), c.calls);
      say("%9s %10s %10s %10s %10s\n", "sessions", "wall Gb/s", "calls/s", "sim Gb/s", "sim ms");
      for (int k = 1; k <= c.sessions; ++k) {
        SessionsPoint p = sessions_point(c, transport, sim, k);
        const SimDelta& d = p.sim;
        const double b = static_cast<double>(p.bytes);
        const double cps = p.wall_s > 0 ? k * p.calls / p.wall_s : 0.0;
        csv.row(k, p.call_size, p.calls, p.wall_s, p.bytes, gbps(b, p.wall_s), cps, d.time_ns,
                sim_gbps(b, d), d.transport, d.memory, d.kernel, d.net_port, d.rx_pipe, d.tx_pipe);
        say("%9d %10.2f %10.1f %10.2f %10.3f\n", k, gbps(b, p.wall_s), cps, sim_gbps(b, d),
            d.time_ns / 1e6);
        sess.push_back(p);
        progress.advance(1 + static_cast<double>(c.call_size) * c.calls / (1 << 20),
                         "sessions " + std::to_string(k));
      }
    }

    if (c.do_targets) {
      // 64 B nop call vs a 64 B UDP ping-pong (the same datagram sizes).
      {
        std::vector<std::uint8_t> b(64);
        naa::host::Session s(transport, session_options(c), {naa::host::Region::inout(b)});
        std::vector<double> w;
        for (int r = 0; r < c.target_reps; ++r)
          w.push_back(seconds(s.call(3).wall));
        tg.call64 = summarize(w);
        s.disconnect();
        const auto dg = roce_datagrams(64, c.mtu, true);
        std::vector<double> u;
        for (int r = 0; r < c.target_reps; ++r) {
          const double x = udp.round_trip(dg);
          if (x > 0) u.push_back(x);
        }
        tg.udp64 = summarize(u);
        progress.advance(2, "targets: 64 B");
      }
      // The largest call (default 64 MiB) vs raw UDP out and back of the same datagrams.
      {
        tg.big_size = c.max_size;
        const LatencyPoint* have = nullptr;
        for (const auto& p : lat) {
          if (p.size == c.max_size) have = &p;
        }
        LatencyPoint fresh;
        if (have == nullptr) {
          fresh = latency_point(c, transport, sim, c.max_size, 3, 3);
          have = &fresh;
        }
        tg.big_call_gbps = gbps(static_cast<double>(have->bytes_per_call), have->wall.median);
        const auto dg = roce_datagrams(c.max_size, c.mtu, true);
        std::vector<double> u;
        for (int r = 0; r < 3; ++r) {
          const double x = udp.round_trip(dg);
          if (x > 0) u.push_back(x);
        }
        tg.udp_bulk_gbps = gbps(2.0 * static_cast<double>(c.max_size), summarize(u).median);
        progress.advance(2 + static_cast<double>(c.max_size) / (1 << 20), "targets: bulk");
      }
    }
    transport.reset();
  } catch (const naa::host::Error& e) {
    progress.finish();
    std::cerr << "naa-bench: " << e.what() << " ["
              << naa::host::errc_name(static_cast<naa::host::Errc>(e.code().value())) << "]\n";
    rc = 3;
  }
  progress.finish();

  // naa-sim idle: CPU time over a quiet window (nothing connected any more).
  if (rc == 0 && c.do_targets && c.idle_seconds > 0 && sim.pid() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the last DREQs settle
    const auto a = sim.cpu_seconds();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(c.idle_seconds));
    const auto b = sim.cpu_seconds();
    if (a && b) {
      tg.idle_cpu_s = *b - *a;
      tg.idle_window_s = seconds(Clock::now() - t0);
    }
  }

  if (rc == 0 && c.do_targets) {
    Csv csv(c.out_dir, "targets.csv", "target,goal,measured,unit,met");
    std::ostringstream out;
    auto line = [&](const std::string& name, const std::string& goal, double v,
                    const std::string& unit, bool ok, bool known) {
      char b[256];
      std::snprintf(b, sizeof b, "  %-44s %-16s %12.4g %-10s %s\n", name.c_str(), goal.c_str(), v,
                    unit.c_str(), known ? (ok ? "met" : "NOT met") : "n/a");
      out << b;
      csv.row(name, goal, v, unit, std::string(known ? (ok ? "yes" : "no") : "n/a"));
    };
    out << "targets (issue 7):\n";
    const double ratio_big = tg.udp_bulk_gbps > 0 ? tg.big_call_gbps / tg.udp_bulk_gbps : 0;
    line(human_size(tg.big_size) + " call wall throughput / raw UDP bulk", ">= 0.5", ratio_big,
         "ratio", ratio_big >= 0.5, tg.udp_bulk_gbps > 0);
    line("  call (in+out)", "", tg.big_call_gbps, "Gb/s", true, true);
    line("  raw UDP out and back", "", tg.udp_bulk_gbps, "Gb/s", true, true);
    const double ratio64 = tg.udp64.median > 0 ? tg.call64.median / tg.udp64.median : 0;
    line("64 B nop call latency / raw UDP ping-pong", "<= 2", ratio64, "ratio (med)",
         ratio64 <= 2.0, tg.udp64.median > 0);
    line("  call median", "", tg.call64.median * 1e6, "us", true, true);
    line("  UDP ping-pong median", "", tg.udp64.median * 1e6, "us", true, true);
    const double ratio64min = tg.udp64.min > 0 ? tg.call64.min / tg.udp64.min : 0;
    line("  min / min", "", ratio64min, "ratio", true, true);
    line("simulated goodput, 1 MiB+ WRITEs (end to end)", ">= 97", tg.sim_write_gbps, "Gb/s",
         tg.sim_write_gbps >= 97.0, tg.sim_write_gbps > 0);
    line("  pipeline bound (busiest block)", ">= 97", tg.sim_pipeline_gbps, "Gb/s",
         tg.sim_pipeline_gbps >= 97.0, tg.sim_pipeline_gbps > 0);
    line("  100 GbE line-rate goodput at this MTU", "", tg.line_rate_gbps, "Gb/s", true, true);
    line("simulator speed while streaming (" + c.sim_mode + ")", ">= 5e6", tg.sim_speed, "cycles/s",
         tg.sim_speed >= 5e6, tg.sim_speed > 0);
    line("  per naa-sim CPU second", "", tg.sim_speed_cpu, "cycles/s", true, true);
    const double idle_pct = tg.idle_window_s > 0 ? 100.0 * tg.idle_cpu_s / tg.idle_window_s : -1;
    line("naa-sim idle CPU", "0 (1 tick)", idle_pct, "% of a core",
         tg.idle_cpu_s >= 0 && tg.idle_cpu_s <= 0.011, tg.idle_cpu_s >= 0);
    std::cout << (c.quiet ? "" : "\n") << out.str();
    if (!c.out_dir.empty()) {
      std::ofstream(c.out_dir + "/summary.txt") << out.str();
    }
  }
  if (!c.out_dir.empty()) {
    std::ofstream env(c.out_dir + "/env.txt");
    env << "naa_address=" << c.naa_address << "\nmtu=" << c.mtu << "\nsim_mode=" << c.sim_mode
        << "\nreps=" << c.reps << "\nfn=" << c.fn << "\n";
    write_plots(c, !lat.empty(), !streams.empty(), !sess.empty());
  }
  sim.stop();
  if (!tmp_dir.empty()) {
    (void)std::remove((tmp_dir + "/naa-sim.stats").c_str());
    (void)std::remove((tmp_dir + "/naa-sim.stats.tmp").c_str());
    (void)::rmdir(tmp_dir.c_str());
  }
  return rc;
}
