// MrTable (ARCHITECTURE.md "The NAA model"; PROTOCOL.md 5.1 and 7): 32 global entries {valid,
// rkey, base, length, access, owner QP}, direct-indexed by rkey[4:0], so a lookup is one cycle in
// hardware. Every remote access the Transport performs is checked here.
//
// The block has a narrow contract (MrTableIf) so that Verilated RTL (rtl/mr_table/mr_table.sv) can
// sit behind it: program/invalidate from the MRSP handler, lookup from the Transport. There is one
// golden model: naa::rtl::MrTableModel (rtl/mr_table/), the model lockstep compares the RTL
// against; MrTableModel below is that model behind MrTableIf, and lookups answer its status.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <systemc>

#include "naa/rtl/mr_table.hpp"
#include "naa/sim/common.hpp"

namespace naa::sim {

// The access bits of the RTL block (rtl/mr_table/README.md).
enum MrAccess : std::uint8_t {
  kMrRemoteRead = rtl::kMrAccessRemoteRead,
  kMrRemoteWrite = rtl::kMrAccessRemoteWrite,
};

struct MrEntry {
  bool valid = false;
  std::uint32_t rkey = 0;
  std::uint64_t base = 0;
  std::uint64_t length = 0;
  std::uint8_t access = 0;  // MrAccess bits
  std::uint32_t owner_qpn = 0;
};

// The result of a lookup: the RTL block's status, one enum for the model and the RTL
// (rtl/mr_table/README.md). naa-sim's statistics keep their keys (mr_table.result.<key>,
// docs/sim/naa-sim.md): stat_key() maps no_entry and key_mismatch to bad_rkey, owner_mismatch to
// wrong_owner, bounds to out_of_bounds, permission to no_permission. Any status but ok NAKs the
// access the same way (Remote Access Error, PROTOCOL.md 7).
using MrCheck = rtl::MrStatus;
inline constexpr std::size_t kMrStatKeyCount = 5;
// Index into the keys below; inline, as it runs once per lookup (issue 31).
[[nodiscard]] inline std::size_t stat_index(MrCheck c) noexcept {
  switch (c) {
    case MrCheck::ok:
      return 0;
    case MrCheck::no_entry:
    case MrCheck::key_mismatch:
      return 1;  // bad_rkey
    case MrCheck::owner_mismatch:
      return 2;  // wrong_owner
    case MrCheck::bounds:
      return 3;  // out_of_bounds
    case MrCheck::permission:
      return 4;  // no_permission
  }
  return 1;  // an undefined status is no valid key
}

// The port contract of the MR table: the C++ model below, or the Verilated RTL (naa::sim_rtl,
// docs/sim/rtl.md). lookup() is not const: an RTL implementation clocks its block.
class MrTableIf {
 public:
  virtual ~MrTableIf() = default;
  [[nodiscard]] virtual std::size_t size() const = 0;
  [[nodiscard]] virtual MrCheck lookup(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                                       std::uint8_t access, std::uint32_t qpn) = 0;
  // True if the implementation has port timing of its own (RTL): last_lookup_cycles() is then
  // what the last lookup took from request to result. False (the C++ model): the configured
  // mr_latency applies.
  [[nodiscard]] virtual bool timed() const { return false; }
  [[nodiscard]] virtual std::uint32_t last_lookup_cycles() const { return 0; }
  virtual void program(std::size_t index, const MrEntry& entry) = 0;
  virtual void invalidate(std::size_t index) = 0;
  // The entry as the table holds it; the reference is valid until the next call on the table.
  [[nodiscard]] virtual const MrEntry& entry(std::size_t index) const = 0;
  // The free-entry search: the lowest invalid entry, and how many are invalid. These defaults
  // scan entry(); the RTL asks its block's search outputs (docs/sim/rtl.md).
  [[nodiscard]] virtual std::optional<std::size_t> free_index() const;
  [[nodiscard]] virtual std::size_t free_count() const;
};

// The golden model (naa::rtl::MrTableModel) behind MrTableIf. Lookups are its combinational
// check (the sc_module charges mr_latency); program/invalidate are one write cycle of the model.
// entry() reads a shadow kept on every write (the C++ model has no port timing to honour; the RTL
// mode reads the block's read port, docs/sim/rtl.md). entries: at most
// rtl::kMrEntries; rkeys must index their entry (rkey[4:0] == index, as the MRSP handler's
// tag << 8 | index does) and lengths fit 32 bits (PROTOCOL.md 5.1), else model_fatal.
class MrTableModel final : public MrTableIf {
 public:
  explicit MrTableModel(std::size_t entries);
  [[nodiscard]] std::size_t size() const override { return shadow_.size(); }
  [[nodiscard]] MrCheck lookup(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                               std::uint8_t access, std::uint32_t qpn) override;
  void program(std::size_t index, const MrEntry& entry) override;
  void invalidate(std::size_t index) override;
  [[nodiscard]] const MrEntry& entry(std::size_t index) const override { return shadow_.at(index); }

 private:
  rtl::MrTableModel model_;
  std::vector<MrEntry> shadow_;
};

// The request and write ports of the RTL block (rtl::MrTableInputs) for a lookup or a write,
// checked against the port widths (model_fatal otherwise): the model and the RTL adapter
// (naa::sim_rtl) drive the block through these. mr_lookup_port is inline: it runs once per
// lookup, and the call passed its 40-byte result through memory (issue 31); the rare error is
// out of line.
[[noreturn]] void mr_lookup_length_fatal();
[[nodiscard]] inline rtl::MrTableLookup mr_lookup_port(std::uint32_t rkey, std::uint64_t va,
                                                       std::uint64_t len, std::uint8_t access,
                                                       std::uint32_t qpn) {
  // RETH and READ lengths are 32-bit fields (PROTOCOL.md 1): nothing longer reaches the table.
  if (len > 0xFFFFFFFFU) [[unlikely]]
    mr_lookup_length_fatal();
  rtl::MrTableLookup l;
  l.valid = true;
  l.rkey = rkey;
  l.va = va;
  l.len = static_cast<std::uint32_t>(len);
  l.access = static_cast<std::uint8_t>(access & rtl::kMrAccessMask);
  l.qpn = qpn & 0xFFFFFFU;
  return l;
}
[[nodiscard]] rtl::MrTableWrite mr_write_port(std::size_t index, const MrEntry& entry);

// The sc_module: timing (mr_latency cycles per lookup, charged to the caller's process) and
// counters around an MrTableIf implementation.
class MrTable : public sc_core::sc_module {
 public:
  // impl: the implementation (BlockFactory::make_mr_table); nullptr = MrTableModel.
  MrTable(sc_core::sc_module_name name, const SimConfig& cfg,
          std::unique_ptr<MrTableIf> impl = nullptr);
  // Timed lookup: call from an SC_THREAD; waits mr_latency cycles (the model), or the cycles the
  // RTL took from request to result, after looking up (the RTL samples the request at once).
  [[nodiscard]] MrCheck check(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                              std::uint8_t access, std::uint32_t qpn);
  [[nodiscard]] MrTableIf& table() { return *impl_; }
  [[nodiscard]] std::optional<std::size_t> free_index() const;
  [[nodiscard]] std::size_t free_count() const;
  [[nodiscard]] std::size_t owned_count(std::uint32_t qpn) const;
  void invalidate_owner(std::uint32_t qpn);
  void report(std::ostream& os) const;

 private:
  const SimConfig& cfg_;
  std::unique_ptr<MrTableIf> impl_;
  CycleMeter meter_;
  std::uint64_t lookups_ = 0;
  ReasonCounters<kMrStatKeyCount> results_;
};

}  // namespace naa::sim
