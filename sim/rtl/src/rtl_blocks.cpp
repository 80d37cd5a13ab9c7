#include "naa/sim/rtl_blocks.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <systemc>

#include "naa/protocol/bytes.hpp"
#include "naa/rtl/add_const.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/crc32.hpp"
#include "naa/rtl/crc32_rtl.hpp"
#include "naa/rtl/hpu_rtl.hpp"
#include "naa/rtl/icrc_check.hpp"
#include "naa/rtl/icrc_check_rtl.hpp"
#include "naa/rtl/kernel_driver.hpp"
#include "naa/rtl/mr_table_rtl.hpp"
#include "naa/rtl/rtl_session.hpp"
#include "naa/rtl/rx_parser.hpp"
#include "naa/rtl/rx_parser_rtl.hpp"
#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/sum_u64_rtl.hpp"
#include "naa/rtl/vadd_i32.hpp"
#include "naa/rtl/vadd_i32_rtl.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/shell_kernel.hpp"
#include "trace_window.hpp"

namespace naa::sim {

std::optional<BlockMode> parse_block_mode(std::string_view s) {
  if (s == "model") return BlockMode::model;
  if (s == "rtl") return BlockMode::rtl;
  if (s == "lockstep") return BlockMode::lockstep;
  return std::nullopt;
}

std::string_view to_string(BlockMode m) noexcept {
  switch (m) {
    case BlockMode::model:
      return "model";
    case BlockMode::rtl:
      return "rtl";
    case BlockMode::lockstep:
      return "lockstep";
  }
  return "?";
}

namespace {

// A lookup whose result has not appeared after this many cycles is an RTL bug.
constexpr std::uint32_t kMaxLookupCycles = 16;

std::uint64_t sim_time_ps() {
  return static_cast<std::uint64_t>(std::llround(sim_now().to_seconds() * 1e12));
}

// MrTableIf over the MR table's port (RTL or lockstep pair). Every answer comes from the block:
// lookups from its lookup port, entry() from its read port, the free-entry search from its
// search outputs (rtl/mr_table/README.md); nothing is kept on the C++ side. Reads and searches
// clock the block (they are not charged to simulated time: the MRSP handler charges its own
// per-entry latency, docs/sim/mrsp_handler.md).
//
// The inputs are kept between cycles (in_), as a hardware driver holds its request registers: a
// request sets its port's fields and valid bit, the next cycle drops only the valid bit, and the
// fields stay until the next request on that port. The block ignores a port's fields while its
// valid bit is low, so these are the same cycles as with fields zeroed when idle; knowing which
// port changed, the cycle asks the port to write only that one (MrTablePort::step_changed, issue
// 31: the Verilated adapter writes 6 of its 17 input ports per lookup cycle).
class MrTableRtl final : public MrTableIf {
 public:
  MrTableRtl(std::unique_ptr<rtl::MrTablePort> port, std::size_t entries, RtlBlocks& blocks)
      : port_(std::move(port)), entries_(entries), blocks_(blocks) {}

  [[nodiscard]] std::size_t size() const override { return entries_; }
  [[nodiscard]] bool timed() const override { return true; }
  [[nodiscard]] std::uint32_t last_lookup_cycles() const override { return last_cycles_; }

  // The request cycle, then cycles until the result (1 for the reference RTL).
  [[nodiscard]] MrCheck lookup(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                               std::uint8_t access, std::uint32_t qpn) override {
    const rtl::MrTableLookup request = mr_lookup_port(rkey, va, len, access, qpn);
    blocks_.sync_time();
    // The fields are usually the last request's (the same region, offset and length per call).
    rtl::MrTableLookup fields = in_.lookup;
    fields.valid = true;
    const std::uint8_t changed = request == fields ? rtl::kMrInputLookupValid : rtl::kMrInputLookup;
    (void)step(changed, 0, [&] { in_.lookup = request; });
    rtl::MrTableOutputs out;
    std::uint32_t cycles = 0;
    do {
      out =
          step(rtl::kMrInputLookupValid, rtl::kMrOutputResponse, [&] { in_.lookup.valid = false; });
      ++cycles;
    } while (!out.rsp_valid && cycles < kMaxLookupCycles);
    if (!out.rsp_valid) {
      model_fatal("mr_table", "the RTL gave no result within " + std::to_string(kMaxLookupCycles) +
                                  " cycles of a lookup");
    }
    last_cycles_ = cycles;
    ++blocks_.counters.mr_lookups;
    if (static_cast<unsigned>(out.rsp_status) > static_cast<unsigned>(rtl::MrStatus::permission)) {
      model_fatal("mr_table", "the RTL answered an undefined status " +
                                  std::to_string(static_cast<unsigned>(out.rsp_status)));
    }
    return out.rsp_status;
  }

  // One write cycle.
  void program(std::size_t index, const MrEntry& e) override { write(mr_write_port(index, e)); }

  // One write cycle.
  void invalidate(std::size_t index) override { write(mr_write_port(index, MrEntry{})); }

  // The read port: the request cycle, then cycles until rd_valid (1 for the reference RTL).
  [[nodiscard]] const MrEntry& entry(std::size_t index) const override {
    if (index >= entries_) model_fatal("mr_table", "entry " + std::to_string(index) + " read");
    blocks_.sync_time();
    (void)step(rtl::kMrInputRead, 0, [&] {
      in_.read.valid = true;
      in_.read.index = static_cast<std::uint8_t>(index);
    });
    rtl::MrTableOutputs out;
    std::uint32_t cycles = 0;
    do {
      out = step(rtl::kMrInputRead, rtl::kMrOutputRead, [&] { in_.read.valid = false; });
      ++cycles;
    } while (!out.rd_valid && cycles < kMaxLookupCycles);
    if (!out.rd_valid) {
      model_fatal("mr_table", "the RTL gave no result within " + std::to_string(kMaxLookupCycles) +
                                  " cycles of an entry read");
    }
    ++blocks_.counters.mr_reads;
    const rtl::MrTableEntry& r = out.rd_entry;
    read_ = MrEntry{r.valid, r.rkey, r.base, r.length, r.access, r.owner_qpn};
    return read_;
  }

  // The search outputs of one idle cycle. Entries at and above size() are never programmed (the
  // MRSP handler takes indices from here), so they count as free in the block and are left out.
  [[nodiscard]] std::optional<std::size_t> free_index() const override {
    const rtl::MrTableOutputs out = search();
    if (!out.free_any || out.free_index >= entries_) return std::nullopt;
    return out.free_index;
  }

  [[nodiscard]] std::size_t free_count() const override {
    const rtl::MrTableOutputs out = search();
    const std::size_t unused = rtl::kMrEntries - entries_;
    if (out.free_count < unused) {
      model_fatal("mr_table", "the RTL counts " + std::to_string(out.free_count) +
                                  " free entries, fewer than the " + std::to_string(unused) +
                                  " never used");
    }
    return out.free_count - unused;
  }

 private:
  // A write cycle; the write port's valid bit drops at the next cycle, whatever it is.
  void write(const rtl::MrTableWrite& w) {
    blocks_.sync_time();
    (void)step(rtl::kMrInputWrite, 0, [&] { in_.write = w; });
    in_.write.valid = false;
    unsynced_ |= rtl::kMrInputWrite;
  }

  rtl::MrTableOutputs search() const {
    blocks_.sync_time();
    ++blocks_.counters.mr_searches;
    return step(0, rtl::kMrOutputSearch, [] {});
  }

  // One cycle: `change` edits in_ within the groups of `changed`; the outputs of `wanted` are
  // read (MrTablePort::step_changed).
  template <class Change>
  rtl::MrTableOutputs step(std::uint8_t changed, std::uint8_t wanted, Change change) const {
    change();
    ++blocks_.counters.mr_cycles;
    changed |= unsynced_;
    unsynced_ = 0;
    return port_->step_changed(in_, changed, wanted);
  }

  std::unique_ptr<rtl::MrTablePort> port_;
  std::size_t entries_;
  RtlBlocks& blocks_;
  mutable MrEntry read_;  // the last entry read (entry() returns a reference)
  std::uint32_t last_cycles_ = rtl::kMrLookupLatency;
  mutable rtl::MrTableInputs in_;  // the inputs of the last cycle, idle ports' fields held
  // Groups whose ports may not show in_ yet: all of them before the first cycle (RtlBlocks'
  // reset cycle drove the port itself), the write port after a write (its valid bit drops).
  mutable std::uint8_t unsynced_ = rtl::kMrInputAll;
};

std::string join_widths(std::span<const std::uint32_t> widths) {
  std::string s;
  for (const std::uint32_t w : widths)
    s += (s.empty() ? "" : ", ") + std::to_string(w);
  return s;
}

bool has_width(std::span<const std::uint32_t> widths, std::uint32_t w) {
  return std::find(widths.begin(), widths.end(), w) != widths.end();
}

// The built-in kernels with RTL (docs/rtl/kernel-shell.md "Built-in kernels"): each block once,
// what its RTL can exist at (its parameter check), its factories.
struct BuiltinKernelBlock {
  std::string_view block;
  std::span<const std::uint32_t> (*rtl_widths)() noexcept;
  std::unique_ptr<rtl::KernelPort> (*make_rtl)(std::uint32_t, const rtl::RtlOptions&);
  std::unique_ptr<rtl::KernelPort> (*make_model)(std::uint32_t);
  bool (*can_exist)(std::uint32_t width);
  std::string_view width_rule;  // why it cannot, for the note
};

template <class Model>
std::unique_ptr<rtl::KernelPort> make_model(std::uint32_t width) {
  return std::make_unique<Model>(width);
}

constexpr BuiltinKernelBlock kBuiltinKernelBlocks[] = {
    {"add_const", rtl::add_const_rtl_widths, rtl::make_add_const_rtl,
     make_model<rtl::AddConstModel>, [](std::uint32_t) { return true; }, ""},
    {"vadd_i32", rtl::vadd_i32_rtl_widths, rtl::make_vadd_i32_rtl, make_model<rtl::VaddI32Model>,
     [](std::uint32_t w) { return w % 4 == 0; },
     "its lanes are 4 bytes: W must be a multiple of 4"},
    {"crc32", rtl::crc32_rtl_widths, rtl::make_crc32_rtl, make_model<rtl::Crc32Model>,
     [](std::uint32_t w) { return w >= 4 && std::has_single_bit(w); },
     "W must be a power of two >= 4"},
    {"sum_u64", rtl::sum_u64_rtl_widths, rtl::make_sum_u64_rtl, make_model<rtl::SumU64Model>,
     [](std::uint32_t w) { return w >= 8 && w % 4 == 0; },
     "W must be a multiple of 4 >= 8: 4-byte lanes, an 8-byte result beat"},
};

// The functions of PROTOCOL.md 5.3 that run on those blocks, and how (ShellKernel::Spec).
struct BuiltinKernelFunction {
  std::string_view block;
  std::uint8_t fn;
  rtl::KernelShape shape;
  std::optional<std::uint32_t> user;
};
const BuiltinKernelFunction kBuiltinKernelFunctions[] = {
    {"add_const", 1, rtl::KernelShape{1, 1, true}, 1},  // add1 adds 1 to every region
    {"add_const", 2, rtl::KernelShape{1, 1, true}, 2},  // add2 adds 2
    {"vadd_i32", 4, rtl::KernelShape{2, 1, false}, std::nullopt},
    {"sum_u64", 5, rtl::KernelShape{1, 1, false}, std::nullopt},
    {"crc32", 6, rtl::KernelShape{1, 1, false}, std::nullopt},
};

}  // namespace

struct RtlBlocks::Kernels {
  // By block name; a block without an entry stays the C++ model.
  std::map<std::string, std::shared_ptr<rtl::KernelPort>, std::less<>> ports;
};

RtlBlocks::RtlBlocks(RtlBlocksOptions options, const SimConfig& cfg)
    : options_(std::move(options)),
      clock_mhz_(cfg.clock_mhz),
      width_(cfg.width),
      mr_entries_(cfg.mr_entries),
      kernels_(std::make_shared<Kernels>()) {
  const bool mr_rtl = options_.mr_table != BlockMode::model;
  const bool kernels_rtl = options_.kernels != BlockMode::model;
  const std::string kmode = "--kernels=" + std::string(to_string(options_.kernels));

  // ---- what cannot work ----
  // The receive path: both blocks at cfg.width, or (the default) the C++ model with a note.
  bool rx_rtl = options_.rx_pipe != BlockMode::model;
  if (rx_rtl && (!has_width(rtl::rx_parser_rtl_widths(), cfg.width) ||
                 !has_width(rtl::icrc_check_rtl_widths(), cfg.width))) {
    const std::string why = "--rx-pipe=" + std::string(to_string(options_.rx_pipe)) +
                            ": rx_parser and icrc_check are Verilated at --width " +
                            join_widths(rtl::rx_parser_rtl_widths()) + " and " +
                            join_widths(rtl::icrc_check_rtl_widths()) + " only, not " +
                            std::to_string(cfg.width);
    if (!options_.rx_pipe_by_default) {
      throw std::invalid_argument(why +
                                  " (add the width to their WIDTHS in rtl/CMakeLists.txt, "
                                  "or use --rx-pipe=model)");
    }
    notes_.push_back(why + " (the default): the receive path runs as the C++ model");
    rx_rtl = false;
  }
  if (mr_rtl && cfg.mr_entries > rtl::kMrEntries) {
    throw std::invalid_argument("--mr-table=" + std::string(to_string(options_.mr_table)) +
                                ": the RTL MR table has " + std::to_string(rtl::kMrEntries) +
                                " entries, the configuration asks for " +
                                std::to_string(cfg.mr_entries));
  }
  // Which kernels get RTL. Asked for (--kernels=rtl|lockstep): a width without a build is an
  // error. The default (kernels_by_default): such a kernel stays the C++ model, with a note.
  std::vector<const BuiltinKernelBlock*> kernel_blocks;  // the blocks to Verilate
  if (kernels_rtl) {
    if (cfg.width > rtl::kMaxStreamBytes && !options_.kernels_by_default) {
      throw std::invalid_argument(kmode + ": the RTL kernels carry at most " +
                                  std::to_string(rtl::kMaxStreamBytes) +
                                  " bytes per beat, --width is " + std::to_string(cfg.width));
    }
    for (const BuiltinKernelBlock& k : kBuiltinKernelBlocks) {
      const std::string block(k.block);
      // A width at which the RTL cannot exist (its parameter check refuses it): that kernel has
      // no RTL here and stays the C++ model, like kernels without RTL.
      if (!k.can_exist(cfg.width)) {
        notes_.push_back(kmode + ": " + block + " has no RTL at --width " +
                         std::to_string(cfg.width) + " (" + std::string(k.width_rule) +
                         "); it runs as the C++ model");
        continue;
      }
      if (!has_width(k.rtl_widths(), cfg.width)) {
        const std::string why = kmode + ": " + block + " is Verilated at --width " +
                                join_widths(k.rtl_widths()) + " only, not " +
                                std::to_string(cfg.width);
        if (!options_.kernels_by_default) {
          throw std::invalid_argument(why +
                                      " (add the width to the block's WIDTHS in "
                                      "rtl/CMakeLists.txt, or use --kernels=model)");
        }
        notes_.push_back(why.substr(0, kmode.size()) + " (the default)" + why.substr(kmode.size()) +
                         "; it runs as the C++ model");
        continue;
      }
      kernel_blocks.push_back(&k);
    }
  }
  if (!options_.trace_fst.empty()) {
    if (!mr_rtl && !kernels_rtl && !rx_rtl) {
      throw std::invalid_argument(
          "--trace records the RTL blocks: it needs --mr-table, --kernels or --rx-pipe set to "
          "rtl or lockstep");
    }
    if (!std::ofstream(options_.trace_fst, std::ios::trunc)) {
      throw std::invalid_argument("--trace: cannot write " + options_.trace_fst);
    }
  }
  // The HPU cores: only when there are handler images to run (naa-sim --handler) or --hpu asks
  // for them (images hosts install over MRSP, docs/protocol.md "Handler images").
  const bool hpu_rtl =
      options_.hpu != BlockMode::model && (!cfg.handler_images.empty() || options_.hpu_given);
  if (!mr_rtl && !kernels_rtl && !rx_rtl && !hpu_rtl) return;  // nothing Verilated

  // ---- the Verilated blocks, all in one session, all created before the first cycle ----
  // With --trace-window the session naa-sim uses is not traced; every block gets a shadow in a
  // traced session that replays the last cycles (trace_window.hpp).
  const auto period_ps =
      std::max<std::uint64_t>(static_cast<std::uint64_t>(std::llround(1e6 / cfg.clock_mhz)), 2);
  const bool windowed = options_.trace_window != 0 && !options_.trace_fst.empty();
  rtl::RtlSessionOptions main_options{windowed ? std::string() : options_.trace_fst,
                                      options_.x_seed, period_ps};
  main_options.trace_start_ps = options_.trace_start_ps;
  session_ = std::make_shared<rtl::RtlSession>(main_options);
  if (windowed) {
    rtl::RtlSessionOptions shadow_options{options_.trace_fst, options_.x_seed, period_ps};
    shadow_options.trace_start_ps = options_.trace_start_ps;
    window_ = std::make_shared<trace_window::Ring>(
        options_.trace_window, session_, std::make_shared<rtl::RtlSession>(shadow_options));
  }
  // A Verilated block: make(options) in the session, and its shadow if windowed.
  const auto verilate = [this](std::string_view name, auto make) {
    rtl::RtlOptions o;
    o.name = std::string(name);
    o.session = session_;
    auto port = make(o);
    if (!window_) return port;
    o.session = window_->shadow();
    return trace_window::make_windowed(std::move(port), make(o), *window_);
  };
  const auto on_divergence = [this](const rtl::Divergence& d) { this->on_divergence(d); };

  if (mr_rtl) {
    std::unique_ptr<rtl::MrTablePort> rtl = verilate("mr_table", [this](const rtl::RtlOptions& o) {
      return options_.mr_table_rtl ? options_.mr_table_rtl(o) : rtl::make_mr_table_rtl(o);
    });
    if (!rtl) throw std::invalid_argument("--mr-table: no MR table RTL could be built");
    if (options_.mr_table == BlockMode::lockstep) {
      mr_port_ = std::make_unique<rtl::MrTableLockstep>(std::make_unique<rtl::MrTableModel>(),
                                                        std::move(rtl), on_divergence);
    } else {
      mr_port_ = std::move(rtl);
    }
  }
  for (const BuiltinKernelBlock* k : kernel_blocks) {
    const std::uint32_t w = cfg.width;
    std::unique_ptr<rtl::KernelPort> rtl =
        verilate(k->block, [k, w](const rtl::RtlOptions& o) { return k->make_rtl(w, o); });
    if (!rtl) throw std::invalid_argument(kmode + ": " + std::string(k->block) + ": no RTL");
    if (options_.kernels == BlockMode::lockstep) {
      rtl = std::make_unique<rtl::KernelLockstep>(k->make_model(w), std::move(rtl), on_divergence);
    }
    kernels_->ports.emplace(std::string(k->block), std::move(rtl));
  }

  if (rx_rtl) {
    const std::uint32_t w = cfg.width;
    rx_parser_port_ = verilate(
        "rx_parser", [w](const rtl::RtlOptions& o) { return rtl::make_rx_parser_rtl(w, o); });
    icrc_check_port_ = verilate(
        "icrc_check", [w](const rtl::RtlOptions& o) { return rtl::make_icrc_check_rtl(w, o); });
    if (!rx_parser_port_ || !icrc_check_port_) {
      throw std::invalid_argument("--rx-pipe: the receive path's RTL could not be built");
    }
    if (options_.rx_pipe == BlockMode::lockstep) {
      rx_parser_port_ = std::make_unique<rtl::RxParserLockstep>(
          std::make_unique<rtl::RxParserModel>(w), std::move(rx_parser_port_), on_divergence);
      icrc_check_port_ = std::make_unique<rtl::IcrcCheckLockstep>(
          std::make_unique<rtl::IcrcCheckModel>(w), std::move(icrc_check_port_), on_divergence);
    }
  }

  for (std::uint32_t i = 0; hpu_rtl && i < cfg.hpus; ++i) {
    std::unique_ptr<rtl::HpuPort> rtl = verilate(
        "hpu" + std::to_string(i), [](const rtl::RtlOptions& o) { return rtl::make_hpu_rtl(o); });
    if (options_.hpu == BlockMode::lockstep) {
      rtl = std::make_unique<rtl::HpuLockstep>(std::make_unique<rtl::HpuModel>(), std::move(rtl),
                                               on_divergence);
    }
    hpu_ports_.push_back(std::move(rtl));
  }
  hpu_cores_ = hpu_ports_.size();

  // ---- reset: one cycle with rst_n low each, at simulated time 0 ----
  if (mr_port_) {
    rtl::MrTableInputs in;
    in.rst_n = false;
    (void)mr_port_->step(in);
    ++counters.mr_cycles;
  }
  for (auto& [block, port] : kernels_->ports)
    rtl::reset_kernel(*port);
  // The receive path's drivers step their blocks' reset cycle as they are made.
  if (rx_parser_port_) rx_parser_ = std::make_shared<rtl::RxParser>(std::move(rx_parser_port_));
  if (icrc_check_port_) {
    icrc_check_ = std::make_shared<rtl::IcrcCheck>(std::move(icrc_check_port_));
  }
  reset_cycles_ = session_->cycles();
}

RtlBlocks::~RtlBlocks() = default;

std::unique_ptr<rtl::HpuPort> RtlBlocks::make_hpu(const SimConfig& /*cfg*/, std::uint32_t index) {
  if (index >= hpu_ports_.size()) return nullptr;
  return std::move(hpu_ports_[index]);  // each HPU's core once; the HpuCores reset them
}

std::unique_ptr<MrTableIf> RtlBlocks::make_mr_table(const SimConfig& cfg) {
  if (!mr_port_) return nullptr;
  return std::make_unique<MrTableRtl>(std::move(mr_port_), cfg.mr_entries, *this);
}

void RtlBlocks::install_kernels(KernelRegistry& registry, const SimConfig& /*cfg*/) {
  const auto on_invocation = [this](const rtl::KernelInvocation& inv) {
    counters.kernel_cycles += inv.cycles;
  };
  for (const BuiltinKernelFunction& f : kBuiltinKernelFunctions) {
    const auto port = kernels_->ports.find(f.block);
    if (port == kernels_->ports.end()) continue;
    std::unique_ptr<Kernel> model = registry.take(f.fn);
    if (!model) continue;
    ShellKernel::Spec spec{f.fn, std::string(model->name()), f.shape, f.user};
    registry.register_kernel(std::make_unique<ShellKernel>(std::move(spec), port->second,
                                                           std::move(model), on_invocation, [this] {
                                                             sync_time();
                                                             ++counters.kernel_runs;
                                                           }));
  }
}

void RtlBlocks::sync_time() {
  if (session_) session_->advance_to(sim_time_ps());
}

void RtlBlocks::report(std::ostream& os) const {
  const auto flag = [](bool b) { return b ? 1 : 0; };
  os << "rtl.mr_table.verilated=" << flag(options_.mr_table != BlockMode::model) << '\n'
     << "rtl.mr_table.lockstep=" << flag(options_.mr_table == BlockMode::lockstep) << '\n'
     << "rtl.mr_table.cycles=" << counters.mr_cycles << '\n'
     << "rtl.mr_table.lookups=" << counters.mr_lookups << '\n'
     << "rtl.mr_table.reads=" << counters.mr_reads << '\n'
     << "rtl.mr_table.searches=" << counters.mr_searches << '\n'
     << "rtl.kernels.verilated=" << flag(options_.kernels != BlockMode::model) << '\n'
     << "rtl.kernels.lockstep=" << flag(options_.kernels == BlockMode::lockstep) << '\n'
     << "rtl.kernels.cycles=" << counters.kernel_cycles << '\n'
     << "rtl.kernels.runs=" << counters.kernel_runs << '\n'
     << "rtl.rx_pipe.verilated=" << flag(rx_parser_ != nullptr) << '\n'
     << "rtl.rx_pipe.lockstep=" << flag(rx_parser_ && options_.rx_pipe == BlockMode::lockstep)
     << '\n'
     << "rtl.rx_pipe.packets=" << counters.rx_packets << '\n'
     << "rtl.rx_pipe.drops=" << counters.rx_drops << '\n'
     << "rtl.rx_parser.cycles=" << rx_parser_cycles() << '\n'
     << "rtl.icrc_check.cycles=" << icrc_check_cycles() << '\n'
     << "rtl.cycles=" << (session_ ? session_->cycles() : 0) << '\n'
     << "rtl.reset_cycles=" << reset_cycles_ << '\n'
     << "rtl.last_cycle_ps=" << (session_ && session_->cycles() ? session_->last_cycle_ps() : 0)
     << '\n'
     << "rtl.trace.window=" << (window_ ? window_->cycles() : 0) << '\n'
     << "rtl.hpu.verilated=" << hpu_cores_ << '\n'
     << "rtl.hpu.lockstep=" << flag(hpu_cores_ != 0 && options_.hpu == BlockMode::lockstep) << '\n'
     << "rtl.lockstep.divergences=" << flag(report_.has_value()) << '\n';
}

void RtlBlocks::end_trace() {
  if (window_) window_->write();
  if (session_) session_->close_trace();
}

void RtlBlocks::finish() {
  end_trace();
}

void RtlBlocks::on_divergence(const rtl::Divergence& d) {
  if (report_) return;  // the first divergence of the run is the one that counts
  const sc_core::sc_time now = sim_now();
  const double ns = now.to_seconds() * 1e9;
  const auto naa_cycle =
      static_cast<std::uint64_t>(std::floor(now.to_seconds() * clock_mhz_ * 1e6 + 1e-6));
  std::ostringstream r;
  r << "naa-sim: " << d.to_string() << '\n'
    << "  block:            " << d.block
    << (d.block == "mr_table" && options_.mr_table_variant != "reference"
            ? " (variant " + options_.mr_table_variant + ")"
            : "")
    << '\n'
    << "  port:             " << d.port << '\n'
    << "  expected (model): " << d.expected << '\n'
    << "  actual (RTL):     " << d.actual << '\n'
    << "  simulated time:   " << static_cast<std::uint64_t>(std::llround(ns)) << " ns, NAA cycle "
    << naa_cycle << " (" << clock_mhz_ << " MHz)\n"
    << "  block cycle:      " << d.cycle << " (cycles " << d.block
    << " has been clocked; 0 is its reset)\n";
  const bool tracing = (session_ && session_->tracing()) || (window_ && !window_->written());
  // A plug-in kernel runs in its own Verilator context (its own runtime copy,
  // naa/rtl/kernel_plugin.hpp): naa-sim's waveform never holds it.
  const bool in_session =
      d.block == "mr_table" || d.block == "rx_parser" || d.block == "icrc_check" ||
      std::any_of(std::begin(kBuiltinKernelBlocks), std::end(kBuiltinKernelBlocks),
                  [&d](const BuiltinKernelBlock& k) { return k.block == d.block; });
  if (!in_session) {
    r << "  waveform:         none (a plug-in kernel runs in its own Verilator context; "
         "--trace does not record it)\n";
  } else if (tracing) {
    r << "  waveform:         " << options_.trace_fst << ", this cycle at "
      << session_->last_cycle_ps() << " ps (the file ends with it"
      << (window_ ? "; the last " + std::to_string(window_->cycles()) + " cycles)\n" : ")\n");
  } else {
    r << "  waveform:         none (add --trace FILE.fst to record one)\n";
  }
  r << "  reproduce:        " << options_.command_line << '\n'
    << "                    (and the same traffic from the peer)\n";
  report_ = r.str();
  std::cerr << *report_ << std::flush;
  end_trace();
  // Stop naa-sim: end the current sc_start() and let the runner take its SIGTERM path (statistics
  // and pcap are written as on any stop); naa-sim then exits with kExitLockstepDivergence.
  if (sc_core::sc_is_running()) {
    sc_core::sc_pause();
    if (options_.stop_run) {
      options_.stop_run();
    } else {
      std::raise(SIGTERM);
    }
  }
}

}  // namespace naa::sim
