// naa::sim_rtl: the blocks of the simulated NAA that also exist as RTL (the MR table, the kernels
// add1/add2, vadd_i32 and crc32), as Verilated RTL or in lockstep with their cycle models, for
// naa-sim's --mr-table=model|rtl|lockstep, --kernels=model|rtl|lockstep and --trace
// (docs/sim/rtl.md). RtlBlocks is the BlockFactory a program puts into SimConfig::blocks.
//
// - The MR table runs behind MrTableIf over rtl::MrTablePort: program / invalidate is one write
//   cycle, a lookup is the request cycle plus the cycles until the result (1 for the reference
//   RTL); entry() uses the RTL's read port and the free-entry search its search outputs, so
//   every answer about the table comes from the RTL.
// - A kernel with RTL streams each region through its block, W bytes per beat (W = --width), and
//   takes the cycle count from the run; kernels without RTL stay C++ models in every mode.
// - All Verilated blocks share one VerilatedContext and one FST waveform, on the simulated time
//   axis; a block is clocked only while it has work.
// - Lockstep: the first divergence prints a report (simulated time and cycle, block, port,
//   expected and actual, waveform time, the command to reproduce) on stderr, ends the waveform and
//   stops naa-sim (its SIGTERM path); the program then exits with kExitLockstepDivergence.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/rtl_options.hpp"
#include "naa/sim/block_factory.hpp"

namespace naa::rtl {
class RtlSession;
class RxParser;
class RxParserPort;
class IcrcCheck;
class IcrcCheckPort;
}  // namespace naa::rtl

namespace naa::sim {
namespace trace_window {
class Ring;
}

enum class BlockMode : std::uint8_t { model, rtl, lockstep };
[[nodiscard]] std::optional<BlockMode> parse_block_mode(std::string_view s);
[[nodiscard]] std::string_view to_string(BlockMode m) noexcept;

// naa-sim's exit status after a lockstep divergence stopped the run (docs/sim/naa-sim.md).
inline constexpr int kExitLockstepDivergence = 3;

using MrTableRtlFactory =
    std::function<std::unique_ptr<rtl::MrTablePort>(const rtl::RtlOptions& options)>;

struct RtlBlocksOptions {
  BlockMode mr_table = BlockMode::model;
  BlockMode kernels = BlockMode::model;
  // The kernels' mode is naa-sim's default, not asked for: a kernel whose RTL is not built at
  // cfg.width stays the C++ model (a note says so) instead of refusing the run.
  bool kernels_by_default = false;
  // --rx-pipe: the receive path's checks (rtl/rx_parser, rtl/icrc_check).
  BlockMode rx_pipe = BlockMode::model;
  // The receive path's mode is naa-sim's default: at a width without a build it stays the model.
  bool rx_pipe_by_default = false;
  // --hpu: the HPU cores that run --handler images and images hosts install (rtl/hpu); built
  // only when there are --handler images or --hpu was named (hpu_given), so that a run without
  // handlers Verilates nothing more.
  BlockMode hpu = BlockMode::model;
  bool hpu_given = false;
  // --trace: FST waveform of every Verilated block; empty = none.
  std::string trace_fst;
  // --trace-window: keep only the last N Verilated cycles (0 = all); --trace-start: record from
  // this simulated time (ps) on.
  std::uint64_t trace_window = 0;
  std::uint64_t trace_start_ps = 0;
  // The command line that reproduces this run (printed in a divergence report).
  std::string command_line;
  // Seed of the unreset flops' initial values (rtl::RtlOptions::x_seed).
  std::uint32_t x_seed = 1;
  // The MR table RTL; empty = the reference rtl/mr_table/mr_table.sv (naa::rtl_mr_table). Your own
  // table goes here (docs/rtl/plug-in-your-rtl.md); naa-sim's --mr-table-variant=broken puts the
  // deliberately broken one.
  MrTableRtlFactory mr_table_rtl;
  std::string mr_table_variant = "reference";  // its name, for messages
  // How the first lockstep divergence stops the run, called after sc_pause(); empty: raise SIGTERM
  // (naa-sim's runner then stops as on a signal). naa-cosim, whose host runs in this process and
  // thread, passes its own.
  std::function<void()> stop_run;
};

class RtlBlocks final : public BlockFactory {
 public:
  // Builds every Verilated block the options ask for, at cfg's clock and width, and resets them.
  // Throws std::invalid_argument with a message for the user when the options cannot work with
  // cfg: RTL modes with more than 32 MR entries, kernels not Verilated at cfg.width, --trace
  // without any RTL block or to a path that cannot be written.
  RtlBlocks(RtlBlocksOptions options, const SimConfig& cfg);
  ~RtlBlocks() override;
  RtlBlocks(const RtlBlocks&) = delete;
  RtlBlocks& operator=(const RtlBlocks&) = delete;

  [[nodiscard]] std::unique_ptr<MrTableIf> make_mr_table(const SimConfig& cfg) override;
  void install_kernels(KernelRegistry& registry, const SimConfig& cfg) override;
  [[nodiscard]] std::unique_ptr<RxChecksIf> make_rx_checks(const SimConfig& cfg) override;
  [[nodiscard]] std::unique_ptr<rtl::HpuPort> make_hpu(const SimConfig& cfg,
                                                       std::uint32_t index) override;
  void report(std::ostream& os) const override;
  // The run is over (stopped by a signal or a divergence): writes the --trace-window and closes
  // the waveform, so the file is complete. Idempotent.
  void finish();

  // Informational lines for the user (e.g. a kernel whose RTL cannot exist at this width and so
  // stays a C++ model), to print at startup.
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }
  // The first lockstep divergence, if there was one: its full report.
  [[nodiscard]] bool diverged() const noexcept { return report_.has_value(); }
  [[nodiscard]] const std::optional<std::string>& divergence_report() const noexcept {
    return report_;
  }

  // ---- for the block implementations (rtl_blocks.cpp, rtl_kernels.cpp) ----
  // Every lockstep pair reports here; the first divergence stops the run.
  void on_divergence(const rtl::Divergence& d);
  // Before clocking a block: its next cycle starts no earlier than the simulated time.
  void sync_time();
  struct Counters {
    std::uint64_t mr_cycles = 0;    // MR table cycles clocked
    std::uint64_t mr_lookups = 0;   // lookups through the RTL
    std::uint64_t mr_reads = 0;     // entry reads through the RTL's read port
    std::uint64_t mr_searches = 0;  // free-entry searches (the RTL's search outputs)
    std::uint64_t kernel_cycles = 0;
    std::uint64_t kernel_runs = 0;
    std::uint64_t rx_packets = 0;  // datagrams through the receive path's blocks
    std::uint64_t rx_drops = 0;    // of which a block said drop
  };
  Counters counters;

 private:
  struct Kernels;  // the Verilated kernels (rtl_kernels.cpp)
  void end_trace();

  RtlBlocksOptions options_;
  double clock_mhz_;
  std::uint32_t width_;
  std::uint32_t mr_entries_;
  std::shared_ptr<rtl::RtlSession> session_;
  std::uint64_t reset_cycles_ = 0;              // the blocks' reset cycles, part of rtl.cycles
  std::shared_ptr<trace_window::Ring> window_;  // --trace-window, else null
  std::unique_ptr<rtl::MrTablePort> mr_port_;   // until make_mr_table() takes it
  std::shared_ptr<Kernels> kernels_;
  // --rx-pipe: the blocks' ports until the reset, then their packet-level drivers (rtl_rx.cpp).
  std::unique_ptr<rtl::RxParserPort> rx_parser_port_;
  std::unique_ptr<rtl::IcrcCheckPort> icrc_check_port_;
  std::shared_ptr<rtl::RxParser> rx_parser_;
  std::shared_ptr<rtl::IcrcCheck> icrc_check_;
  [[nodiscard]] std::uint64_t rx_parser_cycles() const;
  [[nodiscard]] std::uint64_t icrc_check_cycles() const;
  std::vector<std::unique_ptr<rtl::HpuPort>> hpu_ports_;  // until make_hpu() takes each
  std::size_t hpu_cores_ = 0;
  std::vector<std::string> notes_;
  std::optional<std::string> report_;
};

}  // namespace naa::sim
