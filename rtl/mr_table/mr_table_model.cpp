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
  const MrTableOutputs out = rsp_;
  // The lookup reads the table before this cycle's write (read-before-write).
  rsp_.rsp_valid = in.lookup.valid;
  rsp_.rsp_status = in.lookup.valid ? check(in.lookup) : MrStatus::ok;
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
  return std::nullopt;
}

}  // namespace naa::rtl
