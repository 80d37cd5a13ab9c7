// naa-cosim: one naa-call session, co-simulated in-process with the NAA model on one simulated
// clock (docs/adr/0004): connect + MRSP, the calls, disconnect; prints the simulated time of
// each phase. The same arguments give the same packets at the same simulated times (--pcap).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>

#include "naa/cosim/cosim.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/sim/block_modes.hpp"
#include "naa_cosim_options.hpp"
#if NAA_COSIM_HAS_RTL
#include "naa/sim/rtl_block_setup.hpp"
#endif

namespace {

using naa::cosim::tools::kExitLockstepDivergence;
using naa::cosim::tools::Options;
using naa::cosim::tools::RegionArg;
using naa::cosim::tools::usage_error;

// The host buffers at one fixed virtual address: host VAs travel on the wire (MRSP, RETH), so
// the same arguments must give the same addresses whatever ASLR does.
class FixedArena {
 public:
  explicit FixedArena(std::uint64_t bytes) : size_((bytes + 4095) / 4096 * 4096 + 4096) {
    void* want = reinterpret_cast<void*>(naa::cosim::kHostBufferAddress);  // NOLINT: fixed
    base_ = ::mmap(want, size_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (base_ == MAP_FAILED || base_ != want) throw std::runtime_error("cannot map the arena");
  }
  ~FixedArena() { ::munmap(base_, size_); }
  FixedArena(const FixedArena&) = delete;
  FixedArena& operator=(const FixedArena&) = delete;
  std::uint8_t* take(std::uint64_t n) {
    std::uint8_t* p = static_cast<std::uint8_t*>(base_) + used_;
    used_ += (n + 4095) / 4096 * 4096;
    return p;
  }

 private:
  std::size_t size_;
  void* base_ = nullptr;
  std::size_t used_ = 0;
};

// --save-regions: DIR/region<i>.<when>, the bytes of parameter i, for a check outside naa-cosim
// (the examples' figure scripts compare them with what the handler must have computed).
bool save_regions(const std::string& dir,
                  const std::vector<std::pair<const std::uint8_t*, std::uint64_t>>& regions,
                  const char* when) {
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const std::string path = dir + "/region" + std::to_string(i) + "." + when;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(regions[i].first),
            static_cast<std::streamsize>(regions[i].second));
    if (!f.flush()) {
      std::cerr << "naa-cosim: --save-regions: cannot write " << path << "\n";
      return false;
    }
  }
  return true;
}

void fill(std::uint8_t* p, const RegionArg& r) {
  if (r.source.rfind("seq:", 0) == 0) {
    for (std::uint64_t i = 0; i < r.size; ++i)
      p[i] = static_cast<std::uint8_t>(i);
    return;
  }
  std::uint64_t seed = 1;
  const std::size_t c2 = r.source.find(':', 4);
  if (c2 != std::string::npos) seed = std::strtoull(r.source.c_str() + c2 + 1, nullptr, 0);
  std::mt19937_64 rng(seed);
  for (std::uint64_t i = 0; i < r.size; ++i)
    p[i] = static_cast<std::uint8_t>(rng());
}

// One write per phase line, no stream or printf formatting per call (issue 31: the per-call
// line cost the co-simulation's cost count a few thousand instructions).
void phase(const naa::cosim::Cosim& cs, std::string_view name, double t0, double t1) {
  const double cycles = (t1 - t0) * cs.clock_mhz() / 1e3;
  char line[160];
  char* const end = line + sizeof line;
  auto put = [&](char* p, std::string_view s) {
    const std::size_t n = std::min<std::size_t>(s.size(), static_cast<std::size_t>(end - p));
    std::memcpy(p, s.data(), n);
    return p + n;
  };
  auto put_u64 = [&](char* p, std::uint64_t v) { return std::to_chars(p, end, v).ptr; };
  char* p = put(line, "naa-cosim: ");
  p = put(p, name);
  p = put(p, " ");
  p = put_u64(p, static_cast<std::uint64_t>(t1 - t0 + 0.5));
  p = put(p, " ns (");
  p = put_u64(p, static_cast<std::uint64_t>(cycles + 0.5));
  p = put(p, " cycles)\n");
  std::cout.write(line, p - line);
}

// The session or sweep the options ask for, on o.cfg (its blocks included).
int run_cosim(const Options& o) {
  if (o.loss_sweep) {
    naa::cosim::LossSweepOptions ls = o.loss;
    ls.mtu = o.mtu;
    ls.seed = o.seed;
    ls.quiet = o.quiet;
    ls.stats = o.stats;
    return naa::cosim::run_loss_sweep(o.cfg, ls);
  }
  if (!o.sweep.csv_path.empty()) {
    naa::cosim::SweepOptions sw = o.sweep;
    sw.fn = o.fn;
    sw.seed = o.seed;
    if (o.blocks.any_rtl()) {
      sw.blocks = "--mr-table=" + o.blocks.mr_table + " --kernels=" + o.blocks.kernels +
                  " --rx-pipe=" + o.blocks.rx_pipe + ", a block not Verilated at --width a model";
    }
    return naa::cosim::run_naaice_sweep(o.cfg, sw);
  }
  std::uint64_t total = 0;
  for (const auto& r : o.regions)
    total += (r.size + 4095) / 4096 * 4096;
  FixedArena arena(total);
  std::vector<naa::host::Region> regions;
  std::vector<std::pair<std::uint8_t*, std::vector<std::uint8_t>>> inouts;  // for the check
  bool streaming = false;
  std::vector<std::pair<const std::uint8_t*, std::uint64_t>> saved;  // --save-regions
  for (const auto& r : o.regions) {
    std::uint8_t* p = arena.take(r.size);
    if (r.kind != RegionArg::out) fill(p, r);
    saved.emplace_back(p, r.size);
    if (r.kind == RegionArg::inout)
      inouts.emplace_back(p, std::vector<std::uint8_t>(p, p + r.size));
    switch (r.kind) {
      case RegionArg::in:
        regions.push_back(naa::host::Region::input(p, r.size));
        break;
      case RegionArg::out:
        regions.push_back(naa::host::Region::output(p, r.size));
        break;
      case RegionArg::inout:
        regions.push_back(naa::host::Region::inout(p, r.size));
        break;
      case RegionArg::stream_in:
        regions.push_back(naa::host::Region::input(p, r.size).stream());
        break;
      default:
        regions.push_back(naa::host::Region::inout(p, r.size).stream());
        break;
    }
    if (r.kind >= RegionArg::stream_in) streaming = true;
  }
  if (!o.save_regions.empty() && !save_regions(o.save_regions, saved, "before")) return 2;
  naa::cosim::Cosim cs(o.cfg);
  naa::host::UdpRoceOptions uo;
  uo.seed = o.seed;
  uo.fault_seed = o.seed;
  // go-back-N unless --irn, as this run's published simulated figures (docs/performance.md)
  uo.irn = o.irn;
  if (o.rto_given) uo.irn_rto_low = o.loss.rto_low;
  auto transport = cs.open_host(uo);
  naa::host::SessionOptions so;
  char ip[16];
  const std::uint32_t a = o.cfg.naa_ip;
  std::snprintf(ip, sizeof ip, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255U, (a >> 8) & 255U, a & 255U);
  so.naa_address = ip;
  so.path_mtu = o.mtu;
  if (o.rto_given) so.local_ack_timeout = o.loss.rto_high;
  if (streaming) {  // the handlers of --fn (docs/protocol.md "Streaming regions")
    so.stream_function = static_cast<std::uint8_t>(o.fn);
    so.stream_argument = o.stream_arg;
    so.irn_streaming = o.irn;  // --irn streams on IRN too (SessionOptions: off by default)
  }
  int status = 0;
  // The co-simulation's own speed (issue 31): simulated cycles of the session (connect to
  // disconnect) per wall second of it, without making the input and checking the results.
  const double session_start_ns = cs.now_ns();
  const auto session_wall_start = std::chrono::steady_clock::now();
  try {
    double t0 = cs.now_ns();
    naa::host::Session s(transport, so, regions);
    double t1 = cs.now_ns();
    phase(cs, "connect+mrsp", t0, t1);
    for (int i = 0; i < o.repeat; ++i) {
      t0 = cs.now_ns();
      const naa::host::CallResult r = s.call(static_cast<std::uint8_t>(o.fn));
      t1 = cs.now_ns();
      char name[48] = "call ";
      char* p = std::to_chars(name + 5, name + 24, i + 1).ptr;
      p = std::copy_n(" rc 0x", 6, p);
      p = std::to_chars(p, name + sizeof name, r.return_code, 16).ptr;
      phase(cs, std::string_view(name, static_cast<std::size_t>(p - name)), t0, t1);
      if (r.return_code != 0) status = 1;
    }
    t0 = cs.now_ns();
    s.disconnect();
    t1 = cs.now_ns();
    phase(cs, "disconnect", t0, t1);
  } catch (const naa::host::Error& e) {
    std::cerr << "naa-cosim: " << e.what() << "\n";
    return 3;
  }
  if (!o.save_regions.empty() && !save_regions(o.save_regions, saved, "after")) return 2;
  const double session_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - session_wall_start).count();
  const double session_cycles = (cs.now_ns() - session_start_ns) * cs.clock_mhz() / 1e3;
  // add1 / add2 (fn 1, 2) add fn to every byte of an inout region per call: check the results
  // came back (the simulated data path, not only its timing).
  if ((o.fn == 1 || o.fn == 2) && status == 0) {
    for (const auto& [p, before] : inouts) {
      for (std::size_t i = 0; i < before.size(); ++i) {
        if (p[i] != static_cast<std::uint8_t>(before[i] + o.fn * o.repeat)) {
          std::cerr << "naa-cosim: result byte " << i << " wrong\n";
          return 1;
        }
      }
    }
    std::cout << "naa-cosim: results verified\n";
  }
  std::ostringstream rep;
  cs.report(rep);
  if (o.stats) {
    std::cout << rep.str()
              << "activity.session_sim_cycles=" << static_cast<std::uint64_t>(session_cycles + 0.5)
              << '\n'
              << "activity.session_wall_seconds=" << session_wall_s << '\n'
              << "activity.session_cycles_per_wall_second="
              << static_cast<std::uint64_t>(session_wall_s > 0 ? session_cycles / session_wall_s
                                                               : 0)
              << '\n';
  } else if (!o.quiet) {
    std::cout << rep.str().substr(0, rep.str().find('\n', rep.str().find("sim.cycles")) + 1);
  }
  return status;
}

// Builds the blocks the options ask for as RTL (as naa-sim does) and runs.
int run(Options o) {
#if NAA_COSIM_HAS_RTL
  std::shared_ptr<naa::sim::RtlBlocks> rtl;
  if (o.blocks.any_rtl()) {
    naa::sim::RtlBlocksOptions ro;
    ro.command_line = o.command_line;
    // In lockstep the rest of the NAA sees the models' outputs, so after a divergence (its report
    // on stderr) the session goes on and ends as it would have (pcap complete) and the exit status
    // says it. A loss sweep point is a forked child (loss_sweep.hpp): it ends at once instead.
    const bool forked = o.loss_sweep;
    ro.stop_run = [forked] {
      if (!forked) return;
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(kExitLockstepDivergence);
    };
    try {
      rtl =
          naa::sim::install_rtl_blocks(o.blocks, std::move(ro), o.cfg.sim, std::cerr, "naa-cosim");
    } catch (const std::exception& e) {
      usage_error(e.what());
    }
  }
  const int status = run_cosim(o);
  if (rtl) {
    rtl->finish();
    if (rtl->diverged()) return kExitLockstepDivergence;
  }
  return status;
#else
  return run_cosim(o);
#endif
}

}  // namespace

// `naa-cosim --topology FILE ...` (issue 27): many hosts and NAAs behind switches are the
// fabric's (fabric/, docs/adr/0005-fabric.md); naa-cosim hands the whole command line to the
// naa-fabric next to it, so cosim/ does not depend on fabric/.
[[noreturn]] void exec_fabric(char* argv[]) {
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  std::string dir = n > 0 ? self.substr(0, static_cast<std::size_t>(n)) : std::string(argv[0]);
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  const std::string fabric = dir + "naa-fabric";
  argv[0] = const_cast<char*>(fabric.c_str());
  ::execv(fabric.c_str(), argv);
  std::cerr << "naa-cosim: --topology needs naa-fabric (" << fabric << "): " << std::strerror(errno)
            << '\n';
  std::exit(2);
}

int sc_main(int argc, char* argv[]) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--topology") == 0) exec_fabric(argv);
  return run(naa::cosim::tools::parse_options(argc, argv));
}
