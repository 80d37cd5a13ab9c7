// mr_table port contract, C++ cycle model and lockstep pair (rtl/mr_table/README.md; the RTL is
// rtl/mr_table/mr_table.sv). 32 entries {valid, rkey, base, length, access, owner QPN},
// direct-indexed by rkey[4:0]; one lookup per cycle; the result appears one cycle after the
// request.
//
// One step() is one clock cycle: the inputs are what the caller drives during the cycle, the
// returned outputs are the block's outputs during that same cycle (before the rising edge that
// ends it). Fields wider than their RTL port are truncated to the port width (noted per field).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "naa/rtl/lockstep.hpp"

namespace naa::rtl {

inline constexpr std::uint32_t kMrEntries = 32;
inline constexpr std::uint32_t kMrIndexMask = kMrEntries - 1;  // index = rkey & kMrIndexMask
inline constexpr std::uint32_t kMrLookupLatency = 1;           // cycles from request to result

// Access bits (mr_table_pkg::AccessRemote*): a lookup asks for a subset of the entry's bits.
inline constexpr std::uint8_t kMrAccessRemoteRead = 1U << 0;
inline constexpr std::uint8_t kMrAccessRemoteWrite = 1U << 1;
inline constexpr std::uint8_t kMrAccessRemoteAtomic = 1U << 2;
inline constexpr std::uint8_t kMrAccessMask = 0x7;

// Lookup result (mr_table_pkg::mr_status_e, same values). Checked in this order; the first
// failing check is reported.
enum class MrStatus : std::uint8_t {
  ok = 0,
  no_entry = 1,        // entry rkey[4:0] is not valid
  key_mismatch = 2,    // valid, but its rkey differs (stale or guessed key)
  owner_mismatch = 3,  // the region belongs to another QP
  bounds = 4,          // [va, va+len) not inside [base, base+length), or va+len > 2^64
  permission = 5,      // an asked access bit is not granted
};
[[nodiscard]] std::string_view to_string(MrStatus s) noexcept;

// Write port: program (entry_valid) or invalidate (!entry_valid) entry `index` at the edge.
struct MrTableWrite {
  bool valid = false;
  std::uint8_t index = 0;  // 5 bits; must equal rkey & kMrIndexMask for the entry to be found
  bool entry_valid = false;
  std::uint32_t rkey = 0;
  std::uint64_t base = 0;
  std::uint32_t length = 0;     // bytes; 32 bits (MRSP size and RETH length are 32 bits)
  std::uint8_t access = 0;      // 3 bits, kMrAccess*
  std::uint32_t owner_qpn = 0;  // 24 bits
  friend bool operator==(const MrTableWrite&, const MrTableWrite&) = default;
};

// Lookup port. A zero-length access is checked like any other; skipping the check for
// zero-length RDMA operations (PROTOCOL.md 3) is the caller's job.
struct MrTableLookup {
  bool valid = false;
  std::uint32_t rkey = 0;
  std::uint64_t va = 0;
  std::uint32_t len = 0;
  std::uint8_t access = 0;  // 3 bits, kMrAccess*
  std::uint32_t qpn = 0;    // 24 bits
  friend bool operator==(const MrTableLookup&, const MrTableLookup&) = default;
};

// Read port: entry `index` (the MRSP handler's entry reads; rtl/mr_table/README.md).
struct MrTableRead {
  bool valid = false;
  std::uint8_t index = 0;  // 5 bits
  friend bool operator==(const MrTableRead&, const MrTableRead&) = default;
};

struct MrTableInputs {
  bool rst_n = true;  // active-low reset (asynchronous in the RTL: outputs are reset values
                      // during a cycle with rst_n low)
  MrTableWrite write;
  MrTableLookup lookup;
  MrTableRead read;
  friend bool operator==(const MrTableInputs&, const MrTableInputs&) = default;
};

// The groups of MrTableInputs, bits of the `changed` mask of MrTablePort::step_changed().
inline constexpr std::uint8_t kMrInputReset = 1U << 0;         // rst_n
inline constexpr std::uint8_t kMrInputWrite = 1U << 1;         // write.*
inline constexpr std::uint8_t kMrInputLookupValid = 1U << 2;   // lookup.valid
inline constexpr std::uint8_t kMrInputLookupFields = 1U << 3;  // lookup.* but valid
inline constexpr std::uint8_t kMrInputRead = 1U << 4;          // read.*
inline constexpr std::uint8_t kMrInputLookup = kMrInputLookupValid | kMrInputLookupFields;
inline constexpr std::uint8_t kMrInputAll = 0x1F;

// The groups in which `in` differs from `last`; a caller that keeps its inputs between cycles
// usually knows them without comparing.
[[nodiscard]] inline std::uint8_t changed_groups(const MrTableInputs& last,
                                                 const MrTableInputs& in) noexcept {
  std::uint8_t changed = 0;
  if (in.rst_n != last.rst_n) changed |= kMrInputReset;
  if (!(in.write == last.write)) changed |= kMrInputWrite;
  if (in.lookup.valid != last.lookup.valid) changed |= kMrInputLookupValid;
  MrTableLookup fields = in.lookup;
  fields.valid = last.lookup.valid;
  if (!(fields == last.lookup)) changed |= kMrInputLookupFields;
  if (!(in.read == last.read)) changed |= kMrInputRead;
  return changed;
}

// An entry as the read port returns it: all fields 0 for an invalid entry.
struct MrTableEntry {
  bool valid = false;
  std::uint32_t rkey = 0;
  std::uint64_t base = 0;
  std::uint32_t length = 0;
  std::uint8_t access = 0;
  std::uint32_t owner_qpn = 0;
  friend bool operator==(const MrTableEntry&, const MrTableEntry&) = default;
};

// The result of the lookup presented on the previous cycle. A lookup sees the table as it was
// before a write presented in the same cycle. rsp_status is MrStatus::ok when !rsp_valid.
// rd_valid / rd_entry: the result of the read presented on the previous cycle (read-before-write,
// like a lookup). free_*: the table during this cycle (before this cycle's write): whether an
// entry is invalid, the lowest invalid index (0 if none), how many are invalid.
struct MrTableOutputs {
  bool rsp_valid = false;
  MrStatus rsp_status = MrStatus::ok;
  bool rd_valid = false;
  MrTableEntry rd_entry;
  bool free_any = true;
  std::uint8_t free_index = 0;
  std::uint8_t free_count = kMrEntries;
};

// The groups of MrTableOutputs, bits of the `wanted` mask of MrTablePort::step_changed().
inline constexpr std::uint8_t kMrOutputResponse = 1U << 0;  // rsp_valid, rsp_status
inline constexpr std::uint8_t kMrOutputRead = 1U << 1;      // rd_valid, rd_entry
inline constexpr std::uint8_t kMrOutputSearch = 1U << 2;    // free_any, free_index, free_count
inline constexpr std::uint8_t kMrOutputAll = 0x7;

// The interface a model, a Verilated RTL adapter and a lockstep pair all implement.
// Concurrency: an instance (model, RTL or lockstep) is used by one thread at a time; distinct
// instances are independent (each Verilated instance owns its VerilatedContext), except the
// blocks of one shared RtlSession, which are used by one thread at a time together.
class MrTablePort {
 public:
  using Inputs = MrTableInputs;
  using Outputs = MrTableOutputs;
  static constexpr std::string_view kBlock = "mr_table";

  virtual ~MrTablePort() = default;
  // One clock cycle. Never throws.
  virtual MrTableOutputs step(const MrTableInputs& in) = 0;
  // The same cycle as step(in), with two cost hints from a caller that keeps its inputs
  // between cycles (issue 31). `changed` (kMrInput* bits): the input groups that may differ from
  // the previous cycle's inputs; the others must equal them. `wanted` (kMrOutput* bits): the
  // output groups the caller reads; the others are unspecified in the result (their defaults
  // or this cycle's values). `in` is the whole input, as for step(). The Verilated adapter
  // writes only the changed groups' ports (the others still hold the same values, so its ports
  // and waveform are those of step(in)) and reads only the wanted outputs; a model or a lockstep
  // pair ignores both and runs step(in), so lockstep compares every output as always.
  virtual MrTableOutputs step_changed(const MrTableInputs& in, std::uint8_t changed,
                                      std::uint8_t wanted) {
    (void)changed;
    (void)wanted;
    return step(in);
  }
};

// The golden cycle model.
class MrTableModel final : public MrTablePort {
 public:
  MrTableOutputs step(const MrTableInputs& in) override;

  // The combinational check against the current table (no state change); for tests and for
  // callers that want the answer without the port timing.
  [[nodiscard]] MrStatus check(const MrTableLookup& lookup) const noexcept;

 private:
  using Entry = MrTableEntry;
  std::array<Entry, kMrEntries> entries_{};
  MrTableOutputs rsp_{};
};

// First differing port of one cycle, or nullopt. rsp_status is compared only when rsp_valid, the
// read entry only when rd_valid.
[[nodiscard]] std::optional<PortMismatch> first_mismatch(const MrTablePort& shape,
                                                         const MrTableOutputs& expected,
                                                         const MrTableOutputs& actual);

// Model and RTL in lockstep, behind the same port.
class MrTableLockstep final : public MrTablePort {
 public:
  MrTableLockstep(std::unique_ptr<MrTablePort> model, std::unique_ptr<MrTablePort> rtl,
                  LockstepChecker::Handler on_divergence = {})
      : pair_(std::move(model), std::move(rtl), std::move(on_divergence)) {}
  MrTableOutputs step(const MrTableInputs& in) override { return pair_.step(in); }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return pair_.checker(); }

 private:
  LockstepPair<MrTablePort> pair_;
};

}  // namespace naa::rtl
