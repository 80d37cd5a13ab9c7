// The golden model of rtl/mr_table/mr_table.sv. The bounds check is written differently from the
// RTL on purpose (overflow-safe 64-bit differences here, a stored 65-bit end there), so that the
// two are independent implementations of rtl/mr_table/README.md.
#include "naa/rtl/mr_table.hpp"

#include <string>

namespace naa::rtl {

std::string_view to_string(MrStatus s) noexcept {
  switch (s) {
    case MrStatus::ok:
      return "ok";
    case MrStatus::no_entry:
      return "no_entry";
    case MrStatus::key_mismatch:
      return "key_mismatch";
    case MrStatus::owner_mismatch:
      return "owner_mismatch";
    case MrStatus::bounds:
      return "bounds";
    case MrStatus::permission:
      return "permission";
  }
  return "invalid";
}

namespace {

constexpr std::uint32_t kQpnMask = 0xFFFFFF;

// [va, va + len) inside [base, base + length) and va + len <= 2^64, without overflow.
bool in_bounds(std::uint64_t base, std::uint32_t length, std::uint64_t va,
               std::uint32_t len) noexcept {
  if (va < base) return false;
  const std::uint64_t offset = va - base;
  if (offset > length) return false;
  if (len > length - offset) return false;
  // The access must not run past the end of the address space: va + len <= 2^64.
  return len == 0 || va <= ~std::uint64_t{0} - (len - 1U);
}

std::string entry_text(const MrTableEntry& e) {
  if (!e.valid) return "invalid";
  return "rkey " + std::to_string(e.rkey) + " base " + std::to_string(e.base) + " length " +
         std::to_string(e.length) + " access " + std::to_string(e.access) + " qpn " +
         std::to_string(e.owner_qpn);
}

}  // namespace

MrStatus MrTableModel::check(const MrTableLookup& lookup) const noexcept {
  const Entry& e = entries_[lookup.rkey & kMrIndexMask];
  if (!e.valid) return MrStatus::no_entry;
  if (e.rkey != lookup.rkey) return MrStatus::key_mismatch;
  if (e.owner_qpn != (lookup.qpn & kQpnMask)) return MrStatus::owner_mismatch;
  if (!in_bounds(e.base, e.length, lookup.va, lookup.len)) return MrStatus::bounds;
  const std::uint8_t asked = lookup.access & kMrAccessMask;
  if ((e.access & asked) != asked) return MrStatus::permission;
  return MrStatus::ok;
}

MrTableOutputs MrTableModel::step(const MrTableInputs& in) {
  if (!in.rst_n) {
    // Asynchronous reset: the registers are at their reset values for the whole cycle.
    for (Entry& e : entries_)
      e.valid = false;
    rsp_ = MrTableOutputs{};
    return rsp_;
  }
  MrTableOutputs out = rsp_;
  // The free-entry search sees the table as it is during this cycle.
  out.free_any = false;
  out.free_index = 0;
  out.free_count = 0;
  for (std::uint32_t i = 0; i < kMrEntries; ++i) {
    if (entries_[i].valid) continue;
    if (!out.free_any) out.free_index = static_cast<std::uint8_t>(i);
    out.free_any = true;
    ++out.free_count;
  }
  // The lookup and the read see the table before this cycle's write (read-before-write).
  rsp_.rsp_valid = in.lookup.valid;
  rsp_.rsp_status = in.lookup.valid ? check(in.lookup) : MrStatus::ok;
  rsp_.rd_valid = in.read.valid;
  rsp_.rd_entry = MrTableEntry{};
  if (in.read.valid && entries_[in.read.index & kMrIndexMask].valid) {
    rsp_.rd_entry = entries_[in.read.index & kMrIndexMask];
  }
  if (in.write.valid) {
    Entry& e = entries_[in.write.index & kMrIndexMask];
    e.valid = in.write.entry_valid;
    if (in.write.entry_valid) {
      e.rkey = in.write.rkey;
      e.base = in.write.base;
      e.length = in.write.length;
      e.access = in.write.access & kMrAccessMask;
      e.owner_qpn = in.write.owner_qpn & kQpnMask;
    }
  }
  return out;
}

std::optional<PortMismatch> first_mismatch(const MrTablePort& /*shape*/,
                                           const MrTableOutputs& expected,
                                           const MrTableOutputs& actual) {
  if (expected.rsp_valid != actual.rsp_valid) {
    return PortMismatch{"rsp_valid", expected.rsp_valid ? "1" : "0", actual.rsp_valid ? "1" : "0"};
  }
  if (expected.rsp_valid && expected.rsp_status != actual.rsp_status) {
    return PortMismatch{"rsp_status", std::string(to_string(expected.rsp_status)),
                        std::string(to_string(actual.rsp_status))};
  }
  if (expected.rd_valid != actual.rd_valid) {
    return PortMismatch{"rd_valid", expected.rd_valid ? "1" : "0", actual.rd_valid ? "1" : "0"};
  }
  if (expected.rd_valid && expected.rd_entry != actual.rd_entry) {
    return PortMismatch{"rd_entry", entry_text(expected.rd_entry), entry_text(actual.rd_entry)};
  }
  if (expected.free_any != actual.free_any) {
    return PortMismatch{"free_any", expected.free_any ? "1" : "0", actual.free_any ? "1" : "0"};
  }
  if (expected.free_any && expected.free_index != actual.free_index) {
    return PortMismatch{"free_index", std::to_string(expected.free_index),
                        std::to_string(actual.free_index)};
  }
  if (expected.free_count != actual.free_count) {
    return PortMismatch{"free_count", std::to_string(expected.free_count),
                        std::to_string(actual.free_count)};
  }
  return std::nullopt;
}

}  // namespace naa::rtl
