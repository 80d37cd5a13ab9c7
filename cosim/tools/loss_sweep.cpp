#include "loss_sweep.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/protocol/bytes.hpp"
#include "naa/protocol/crc32.hpp"

namespace naa::cosim {
namespace {

struct LossPoint {
  bool irn = false;
  double loss_pct = 0;
  std::uint64_t bytes = 0;
  double sim_gbps = 0, wall_gbps = 0;
  std::uint64_t retransmitted = 0, injected = 0, timeouts = 0;
  double p50_us = 0, p99_us = 0;
  int status = 0;  // 0 ok, 1 a call failed or a result was wrong, 3 session error
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// The NAA model's statistics (naa-sim's key=value lines).
std::map<std::string, std::uint64_t> model_stats(const Cosim& cs) {
  std::ostringstream os;
  cs.report(os);
  std::istringstream in(os.str());
  std::map<std::string, std::uint64_t> m;
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    m[line.substr(0, eq)] = std::strtoull(line.c_str() + eq + 1, nullptr, 10);
  }
  return m;
}

// One point in this process (the child's). Host buffers at one fixed virtual address: host VAs
// travel on the wire (MRSP, RETH), so the same arguments give the same packets.
LossPoint run_point(CosimConfig cfg, const LossSweepOptions& o, bool irn, double loss_pct) {
  LossPoint p;
  p.irn = irn;
  p.loss_pct = loss_pct;
  const std::uint64_t out_bytes = 4096;
  const std::size_t map_size = (o.stream_bytes + out_bytes + o.call_bytes + 3 * 4095) / 4096 * 4096;
  void* want = reinterpret_cast<void*>(kHostBufferAddress);  // NOLINT: a fixed address
  void* base = ::mmap(want, map_size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (base != want) throw std::runtime_error("cannot map the host buffers");
  auto* stream = static_cast<std::uint8_t*>(base);
  std::uint8_t* out = stream + (o.stream_bytes + 4095) / 4096 * 4096;
  std::uint8_t* buf = out + out_bytes;
  for (std::uint64_t i = 0; i < o.stream_bytes; ++i)
    stream[i] = static_cast<std::uint8_t>(i * 13 + 5);
  for (std::uint64_t i = 0; i < o.call_bytes; ++i)
    buf[i] = static_cast<std::uint8_t>(i * 7);

  // Both directions lose the same share of their sends, decided per (QPN, PSN, attempt).
  impair::FaultSpec faults;
  faults.loss = loss_pct / 100;
  faults.key = impair::FaultKey::packet;
  cfg.sim.fault_tx = faults;
  cfg.sim.fault_rx = impair::FaultSpec{};
  cfg.sim.seed = o.seed;
  cfg.sim.idle_timeout_ms = 0;
  Cosim cs(cfg);
  host::UdpRoceOptions uo;
  uo.seed = o.seed;
  uo.fault_seed = o.seed;
  uo.fault_tx = faults;
  uo.irn = irn;
  uo.irn_rto_low = o.rto_low;
  uo.irn_low_threshold = o.low_threshold;
  auto transport = cs.open_host(uo);
  host::SessionOptions so;
  const std::uint32_t a = cfg.naa_ip;
  so.naa_address = std::to_string(a >> 24) + '.' + std::to_string((a >> 16) & 255U) + '.' +
                   std::to_string((a >> 8) & 255U) + '.' + std::to_string(a & 255U);
  so.path_mtu = o.mtu;
  so.local_ack_timeout = o.rto_high;
  // Retries count consecutive timeouts without progress: at 10 % loss on both directions a
  // retransmission is lost too now and then; 7 (the IBTA maximum) as on any connection.
  so.retry_count = 7;

  // The figures cover the calls only: connection setup, MRSP and disconnect are excluded (a lost
  // CM message costs the same CM retry under either transport, and would swamp a small run).
  double sim_ns = 0, wall_s = 0;
  std::vector<double> call_us;
  auto timed = [&](host::Session& s, std::uint8_t fn) {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cs.now_ns();
    if (s.call(fn).return_code != 0) p.status = 1;
    sim_ns += cs.now_ns() - c0;
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    return (cs.now_ns() - c0) / 1e3;
  };
  {
    host::Session s(transport, so,
                    {host::Region::input(stream, o.stream_bytes), host::Region::output(out, 4)});
    // crc32 (fn 6) of the stream: the result proves every byte arrived where it belongs.
    (void)timed(s, 6);
    s.disconnect();
    if (protocol::load_le32(out) != protocol::crc32({stream, o.stream_bytes})) p.status = 1;
  }
  {
    host::Session s(transport, so, {host::Region::inout(buf, o.call_bytes)});
    for (int i = 0; i < o.calls; ++i)
      call_us.push_back(timed(s, 1));
    s.disconnect();
  }
  // add1 adds 1 to every byte per call: every byte of the region must have come back.
  for (std::uint64_t i = 0; i < o.call_bytes && p.status == 0; ++i) {
    if (buf[i] != static_cast<std::uint8_t>(i * 7 + static_cast<std::uint64_t>(o.calls)))
      p.status = 1;
  }
  const host::TransportStats hs = transport->stats();
  const auto ms = model_stats(cs);
  auto stat = [&](const char* k) {
    const auto it = ms.find(k);
    return it == ms.end() ? std::uint64_t{0} : it->second;
  };
  p.bytes = o.stream_bytes + 2 * o.call_bytes * static_cast<std::uint64_t>(o.calls);
  p.sim_gbps = sim_ns > 0 ? static_cast<double>(p.bytes) * 8 / sim_ns : 0;
  p.wall_gbps = wall_s > 0 ? static_cast<double>(p.bytes) * 8 / wall_s / 1e9 : 0;
  // Both directions: the host's requester (the stream, the calls' inputs) and the NAA's (the
  // calls' results), and the ACKs either way.
  p.retransmitted = hs.retransmitted_packets + stat("transport.retransmits");
  p.injected = hs.fault_tx_loss + stat("net_port.fault_tx.loss");
  p.timeouts = hs.timeouts + stat("transport.timeouts");
  if (o.stats) {
    std::ostringstream os;
    cs.report(os);
    std::cerr << "# " << (irn ? "irn" : "go-back-n") << " at " << loss_pct << "%: host "
              << "retransmitted=" << hs.retransmitted_packets << " timeouts=" << hs.timeouts
              << " fault_tx_loss=" << hs.fault_tx_loss << " seq_naks_sent=" << hs.seq_naks_sent
              << " seq_naks_received=" << hs.seq_naks_received
              << " rnr_naks_received=" << hs.rnr_naks_received
              << " duplicates_received=" << hs.duplicates_received
              << " dropped_out_of_order=" << hs.dropped_out_of_order << "; calls (us):";
    for (const double c : call_us)
      std::cerr << ' ' << static_cast<long>(c);
    std::cerr << '\n' << os.str();
  }
  p.p50_us = percentile(call_us, 0.5);
  p.p99_us = percentile(call_us, 0.99);
  ::munmap(base, map_size);
  return p;
}

std::string csv_line(const LossPoint& p) {
  char line[256];
  std::snprintf(line, sizeof line, "%s,%g,%llu,%.3f,%.3f,%llu,%llu,%llu,%.1f,%.1f",
                p.irn ? "irn" : "go-back-n", p.loss_pct, static_cast<unsigned long long>(p.bytes),
                p.sim_gbps, p.wall_gbps, static_cast<unsigned long long>(p.retransmitted),
                static_cast<unsigned long long>(p.injected),
                static_cast<unsigned long long>(p.timeouts), p.p50_us, p.p99_us);
  return line;
}

// A point in a forked child (SystemC elaborates one model per process): the CSV line, or an
// error line starting with "error ", comes back through a pipe.
std::string fork_point(const CosimConfig& cfg, const LossSweepOptions& o, bool irn, double loss,
                       int& status) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    std::string msg;
    int rc = 0;
    try {
      const LossPoint p = run_point(cfg, o, irn, loss);
      msg = csv_line(p);
      rc = p.status;
    } catch (const std::exception& e) {
      msg = std::string("error ") + e.what();
      rc = 3;
    }
    msg += '\n';
    (void)!::write(fds[1], msg.data(), msg.size());
    ::close(fds[1]);
    ::_exit(rc);
  }
  ::close(fds[1]);
  std::string got;
  char b[512];
  for (;;) {
    const ssize_t n = ::read(fds[0], b, sizeof b);
    if (n <= 0) break;
    got.append(b, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int ws = 0;
  ::waitpid(pid, &ws, 0);
  status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 3;
  if (!got.empty() && got.back() == '\n') got.pop_back();
  if (got.empty()) got = "error the point's process died";
  return got;
}

struct Row {
  std::string transport;
  double loss = 0, gbps = 0;
};

// loss.svg: simulated goodput against loss, one line per transport (drawn here, no tool needed).
void write_svg(const std::string& path, const std::vector<Row>& rows) {
  const double w = 640, h = 400, l = 70, r = 130, t = 30, b = 50;
  double xmax = 1, ymax = 1;
  for (const Row& x : rows) {
    xmax = std::max(xmax, x.loss);
    ymax = std::max(ymax, x.gbps);
  }
  ymax *= 1.1;
  auto X = [&](double v) { return l + v / xmax * (w - l - r); };
  auto Y = [&](double v) { return h - b - v / ymax * (h - t - b); };
  std::ofstream f(path);
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h
    << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' "
       "fill='white'/>\n<text x='"
    << l << "' y='18'>simulated goodput, go-back-N vs IRN (naa-cosim --loss-sweep)</text>\n"
    << "<line x1='" << l << "' y1='" << h - b << "' x2='" << w - r << "' y2='" << h - b
    << "' stroke='black'/>\n<line x1='" << l << "' y1='" << t << "' x2='" << l << "' y2='" << h - b
    << "' stroke='black'/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double yv = ymax * i / 5, xv = xmax * i / 5;
    f << "<text x='" << l - 8 << "' y='" << Y(yv) + 4 << "' text-anchor='end'>"
      << static_cast<int>(yv + 0.5) << "</text>\n<text x='" << X(xv) << "' y='" << h - b + 18
      << "' text-anchor='middle'>" << xv << "</text>\n";
  }
  f << "<text x='" << (l + w - r) / 2 << "' y='" << h - 10
    << "' text-anchor='middle'>injected loss (%)</text>\n<text x='18' y='" << (t + h - b) / 2
    << "' transform='rotate(-90 18 " << (t + h - b) / 2
    << ")' text-anchor='middle'>Gb/s (simulated)</text>\n";
  const std::pair<const char*, const char*> series[] = {{"go-back-n", "#d62728"},
                                                        {"irn", "#1f77b4"}};
  int k = 0;
  for (const auto& [name, colour] : series) {
    std::ostringstream pts;
    for (const Row& x : rows) {
      if (x.transport != name) continue;
      pts << X(x.loss) << ',' << Y(x.gbps) << ' ';
      f << "<circle cx='" << X(x.loss) << "' cy='" << Y(x.gbps) << "' r='3' fill='" << colour
        << "'/>\n";
    }
    f << "<polyline fill='none' stroke='" << colour << "' stroke-width='2' points='" << pts.str()
      << "'/>\n<text x='" << w - r + 10 << "' y='" << t + 20 + 18 * k << "' fill='" << colour
      << "'>" << (k == 0 ? "go-back-N" : "IRN") << "</text>\n";
    ++k;
  }
  f << "</svg>\n";
}

}  // namespace

int run_loss_sweep(const CosimConfig& cfg, const LossSweepOptions& o) {
  const std::string dir = o.out_dir.empty() ? "." : o.out_dir;
  const std::string csv = dir + "/loss.csv";
  (void)::mkdir(dir.c_str(), 0755);  // may exist; a failure shows when the CSV cannot be written
  std::ofstream f(csv, std::ios::trunc);
  if (!f) {
    std::cerr << "naa-cosim: cannot write " << csv << "\n";
    return 3;
  }
  const char* header =
      "transport,loss_pct,bytes,sim_goodput_gbps,wall_goodput_gbps,retransmitted,"
      "injected_losses,timeouts,p50_call_us,p99_call_us";
  f << header << "\n" << std::flush;
  if (!o.quiet) std::cout << header << "\n";
  std::vector<Row> rows;
  int status = 0;
  for (const double loss : o.loss_pct) {
    for (const bool irn : {false, true}) {
      int rc = 0;
      const std::string line = fork_point(cfg, o, irn, loss, rc);
      if (line.rfind("error ", 0) == 0 || rc == 3) {
        std::cerr << "naa-cosim: loss sweep " << (irn ? "irn" : "go-back-n") << " at " << loss
                  << "%: " << line << "\n";
        return 3;
      }
      if (rc != 0) {
        std::cerr << "naa-cosim: loss sweep " << (irn ? "irn" : "go-back-n") << " at " << loss
                  << "%: a call failed or a result byte was wrong\n";
        status = 1;
      }
      f << line << "\n" << std::flush;
      if (!o.quiet) std::cout << line << "\n" << std::flush;
      Row row;
      row.transport = irn ? "irn" : "go-back-n";
      row.loss = loss;
      std::sscanf(line.c_str(), "%*[^,],%*[^,],%*[^,],%lf", &row.gbps);
      rows.push_back(row);
    }
  }
  write_svg(dir + "/loss.svg", rows);
  std::ofstream(dir + "/loss.gp")
      << "# gnuplot " << dir << "/loss.gp -> loss.png (optional; loss.svg is drawn already)\n"
      << "set terminal pngcairo size 900,500\nset output '" << dir << "/loss.png'\n"
      << "set datafile separator ','\nset key autotitle columnhead\n"
      << "set xlabel 'loss (%)'\nset ylabel 'simulated goodput (Gb/s)'\nset grid\n"
      << "plot '" << csv << "' using (strcol(1) eq 'go-back-n' ? $2 : 1/0):4 with linespoints "
      << "title 'go-back-N', '' using (strcol(1) eq 'irn' ? $2 : 1/0):4 with linespoints "
      << "title 'IRN'\n";
  if (status == 0) {
    std::cout << "loss sweep: every call of " << rows.size() << " points returned 0 and every "
              << "result byte verified\n";
  }
  std::cout << "loss sweep: " << csv << ", " << dir << "/loss.svg\n";
  return status;
}

}  // namespace naa::cosim
