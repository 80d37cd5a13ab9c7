#include "naaice_sweep.hpp"

#include <sys/mman.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "naa/host/error.hpp"
#include "naa/host/session.hpp"

namespace naa::cosim {
namespace {

// Means of transfer_time per byte_length of a NAAICE-form CSV.
std::map<std::uint64_t, double> reference_means(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::map<std::uint64_t, std::pair<double, int>> acc;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::uint64_t n = 0;
    double setup = 0, transfer = 0;
    if (std::sscanf(line.c_str(), "%lu,%lf,%lf", &n, &setup, &transfer) != 3) continue;
    acc[n].first += transfer;
    ++acc[n].second;
  }
  std::map<std::uint64_t, double> means;
  for (const auto& [n, a] : acc)
    means[n] = a.first / a.second;
  return means;
}

// NAAICE's sizes: 1 B, x1.5 (rounded down, at least +1) up to the maximum.
std::vector<std::uint64_t> naaice_sizes(std::uint64_t max) {
  std::vector<std::uint64_t> v;
  double x = 1;
  while (static_cast<std::uint64_t>(x) <= max) {
    const auto s = static_cast<std::uint64_t>(x);
    if (v.empty() || s > v.back()) v.push_back(s);
    x *= 1.5;
  }
  return v;
}

}  // namespace

int run_naaice_sweep(const CosimConfig& cfg, const SweepOptions& o) {
  std::map<std::uint64_t, double> ref;
  if (!o.reference_path.empty()) ref = reference_means(o.reference_path);
  std::vector<std::uint64_t> sizes;
  if (!ref.empty()) {
    for (const auto& [n, t] : ref)
      if (n <= o.max_size) sizes.push_back(n);
  } else {
    sizes = naaice_sizes(o.max_size);
  }
  // One region at a fixed address (host VAs travel on the wire: the same run, the same bytes).
  const std::size_t map_size = (o.max_size + 4095) / 4096 * 4096;
  void* want = reinterpret_cast<void*>(kHostBufferAddress);  // NOLINT: a fixed address
  void* base = ::mmap(want, map_size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (base != want) {
    std::cerr << "naa-cosim: cannot map the region\n";
    return 3;
  }
  auto* data = static_cast<std::uint8_t*>(base);
  std::ofstream csv(o.csv_path, std::ios::trunc);
  if (!csv) {
    std::cerr << "naa-cosim: cannot write " << o.csv_path << "\n";
    return 3;
  }
  csv << "byte_length,setup_time,transfer_time\n";
  Cosim cs(cfg);
  host::UdpRoceOptions uo;
  uo.seed = o.seed;
  uo.irn = false;  // go-back-N, as the NAAICE reference it is compared with
  auto transport = cs.open_host(uo);
  host::SessionOptions so;
  const std::uint32_t a = cfg.naa_ip;
  so.naa_address = std::to_string(a >> 24) + '.' + std::to_string((a >> 16) & 255U) + '.' +
                   std::to_string((a >> 8) & 255U) + '.' + std::to_string(a & 255U);
  // Deviation per size range, as NAAICE's check computes it (mean over sizes of |ref-ours|/ref).
  struct Range {
    const char* name;
    std::uint64_t lo, hi;
    double sum = 0;
    int n = 0;
  };
  std::vector<Range> ranges = {{"1 B .. 64 KiB", 1, 64ULL << 10},
                               {"64 KiB .. 1 MiB", (64ULL << 10) + 1, 1ULL << 20},
                               {"1 MiB .. 64 MiB", (1ULL << 20) + 1, 64ULL << 20},
                               {"all up to 64 MiB", 1, 64ULL << 20}};
  int status = 0;
  // The model's speed in co-simulation (issue 15 item 5; no UDP in the way): simulated cycles
  // per wall second over the sweep. Printed only, never in the CSV (wall time is not repeatable).
  const auto wall0 = std::chrono::steady_clock::now();
  const double sim0 = cs.now_ns();
  for (const std::uint64_t n : sizes) {
    for (std::uint64_t i = 0; i < n; ++i)
      data[i] = static_cast<std::uint8_t>(i * 7);
    double setup = 0, transfer = 0;
    try {
      const double t0 = cs.now_ns();
      host::Session s(transport, so, {host::Region::inout(data, n)});
      const double t1 = cs.now_ns();
      const host::CallResult r = s.call(static_cast<std::uint8_t>(o.fn));
      const double t2 = cs.now_ns();
      if (r.return_code != 0) status = 1;
      s.disconnect();
      setup = (t1 - t0) * 1e-9;
      transfer = (t2 - t1) * 1e-9;
    } catch (const host::Error& e) {
      std::cerr << "naa-cosim: size " << n << ": " << e.what() << "\n";
      return 3;
    }
    char line[96];
    std::snprintf(line, sizeof line, "%lu,%.9f,%.9f\n", static_cast<unsigned long>(n), setup,
                  transfer);
    csv << line;
    if (auto it = ref.find(n); it != ref.end()) {
      const double dev = std::fabs(it->second - transfer) / it->second;
      for (Range& r : ranges) {
        if (n >= r.lo && n <= r.hi) {
          r.sum += dev;
          ++r.n;
        }
      }
    }
  }
  csv.close();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double cycles = (cs.now_ns() - sim0) * cs.clock_mhz() / 1e3;
  std::printf(
      "model speed (co-simulation, %s): %.0f simulated cycles in %.2f wall s, "
      "%.3g cycles per wall second\n",
      o.blocks.c_str(), cycles, wall_s, wall_s > 0 ? cycles / wall_s : 0.0);
  // gnuplot script beside the CSV: ours and the FPGA's points (png if gnuplot is there).
  const std::string gp = o.csv_path.substr(0, o.csv_path.rfind('.')) + ".gp";
  std::ofstream(gp) << "set datafile separator ','\nset logscale xy\nset key top left\n"
                    << "set xlabel 'bytes (one in/out region)'\nset ylabel 'transfer time (s)'\n"
                    << "set terminal pngcairo size 900,600\nset output '"
                    << o.csv_path.substr(0, o.csv_path.rfind('.')) << ".png'\n"
                    << "plot '" << o.csv_path << "' every ::1 using 1:3 with linespoints title "
                    << "'naa co-simulation'"
                    << (o.reference_path.empty()
                            ? std::string("\n")
                            : ", '" + o.reference_path +
                                  "' every ::1 using 1:3 with points pt 7 ps 0.4 title "
                                  "'NAAICE FPGA (published)'\n");
  if (!ref.empty()) {
    std::cout << "mean relative deviation of transfer_time from the reference means:\n";
    for (const Range& r : ranges) {
      if (r.n == 0) continue;
      std::printf("  %-18s %2d sizes  %.3f\n", r.name, r.n, r.sum / r.n);
    }
  }
  std::cout << "wrote " << o.csv_path << " and " << gp << "\n";
  return status;
}

}  // namespace naa::cosim
