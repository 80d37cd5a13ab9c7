// MrTable (ARCHITECTURE.md "The NAA model"; PROTOCOL.md 5.1 and 7): 32 global entries {valid,
// rkey, base, length, access, owner QP}, direct-indexed by the low 8 bits of the rkey, so a
// lookup is one cycle in hardware. Every remote access the Transport performs is checked here.
//
// The block has a narrow contract (MrTableIf) so that Verilated RTL (rtl/sv/mr_table.sv) can sit
// behind it: program/invalidate from the MRSP handler, lookup from the Transport.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <systemc>

#include "naa/sim/common.hpp"

namespace naa::sim {

enum MrAccess : std::uint8_t {
  kMrRemoteRead = 1U << 0,
  kMrRemoteWrite = 1U << 1,
};

struct MrEntry {
  bool valid = false;
  std::uint32_t rkey = 0;
  std::uint64_t base = 0;
  std::uint64_t length = 0;
  std::uint8_t access = 0;  // MrAccess bits
  std::uint32_t owner_qpn = 0;
};

enum class MrCheck : std::uint8_t {
  ok = 0,
  bad_rkey,       // index out of range, entry invalid, or the tag bits differ
  wrong_owner,    // the region belongs to another connection
  out_of_bounds,  // [va, va+len) not inside [base, base+length)
  no_permission,  // access not granted
};
inline constexpr std::size_t kMrCheckCount = 5;
[[nodiscard]] std::string_view to_string(MrCheck c) noexcept;

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
  [[nodiscard]] virtual const MrEntry& entry(std::size_t index) const = 0;
};

// The C++ model of the table.
class MrTableModel final : public MrTableIf {
 public:
  explicit MrTableModel(std::size_t entries) : entries_(entries) {}
  [[nodiscard]] std::size_t size() const override { return entries_.size(); }
  [[nodiscard]] MrCheck lookup(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                               std::uint8_t access, std::uint32_t qpn) override;
  void program(std::size_t index, const MrEntry& entry) override { entries_.at(index) = entry; }
  void invalidate(std::size_t index) override { entries_.at(index) = MrEntry{}; }
  [[nodiscard]] const MrEntry& entry(std::size_t index) const override {
    return entries_.at(index);
  }

 private:
  std::vector<MrEntry> entries_;
};

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
  ReasonCounters<kMrCheckCount> results_;
};

}  // namespace naa::sim
