#include "naa/sim/mr_table.hpp"

namespace naa::sim {

std::string_view to_string(MrCheck c) noexcept {
  switch (c) {
    case MrCheck::ok:
      return "ok";
    case MrCheck::bad_rkey:
      return "bad_rkey";
    case MrCheck::wrong_owner:
      return "wrong_owner";
    case MrCheck::out_of_bounds:
      return "out_of_bounds";
    case MrCheck::no_permission:
      return "no_permission";
  }
  return "unknown";
}

MrCheck MrTableModel::lookup(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                             std::uint8_t access, std::uint32_t qpn) {
  // Direct-indexed by the low 8 bits; the upper 24 bits are the unpredictable tag.
  const std::size_t index = rkey & 0xFFU;
  if (index >= entries_.size()) return MrCheck::bad_rkey;
  const MrEntry& e = entries_[index];
  if (!e.valid || e.rkey != rkey) return MrCheck::bad_rkey;
  if (e.owner_qpn != qpn) return MrCheck::wrong_owner;
  // Overflow-safe: va >= base and len <= length - (va - base).
  if (va < e.base || va - e.base > e.length || len > e.length - (va - e.base)) {
    return MrCheck::out_of_bounds;
  }
  if ((e.access & access) != access) return MrCheck::no_permission;
  return MrCheck::ok;
}

MrTable::MrTable(sc_core::sc_module_name name, const SimConfig& cfg,
                 std::unique_ptr<MrTableIf> impl)
    : sc_module(name),
      cfg_(cfg),
      impl_(impl ? std::move(impl) : std::make_unique<MrTableModel>(cfg.mr_entries)),
      meter_(cfg),
      results_({"ok", "bad_rkey", "wrong_owner", "out_of_bounds", "no_permission"}) {}

MrCheck MrTable::check(std::uint32_t rkey, std::uint64_t va, std::uint64_t len, std::uint8_t access,
                       std::uint32_t qpn) {
  ++lookups_;
  MrCheck r = MrCheck::ok;
  if (!impl_->timed()) {
    // The model: the table as it is after the fixed latency.
    meter_.spend(cfg_.mr_latency);
    r = impl_->lookup(rkey, va, len, access, qpn);
  } else {
    // RTL: the request is sampled now, the result is there after the cycles the block took.
    r = impl_->lookup(rkey, va, len, access, qpn);
    meter_.spend(impl_->last_lookup_cycles());
  }
  results_.add(static_cast<std::size_t>(r));
  return r;
}

std::optional<std::size_t> MrTable::free_index() const {
  for (std::size_t i = 0; i < impl_->size(); ++i) {
    if (!impl_->entry(i).valid) return i;
  }
  return std::nullopt;
}

std::size_t MrTable::free_count() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < impl_->size(); ++i)
    n += impl_->entry(i).valid ? 0U : 1U;
  return n;
}

std::size_t MrTable::owned_count(std::uint32_t qpn) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < impl_->size(); ++i) {
    const MrEntry& e = impl_->entry(i);
    n += (e.valid && e.owner_qpn == qpn) ? 1U : 0U;
  }
  return n;
}

void MrTable::invalidate_owner(std::uint32_t qpn) {
  for (std::size_t i = 0; i < impl_->size(); ++i) {
    const MrEntry& e = impl_->entry(i);
    if (e.valid && e.owner_qpn == qpn) impl_->invalidate(i);
  }
}

void MrTable::report(std::ostream& os) const {
  os << "mr_table.cycles=" << meter_.busy_cycles() << '\n'
     << "mr_table.lookups=" << lookups_ << '\n'
     << "mr_table.entries_used=" << impl_->size() - free_count() << '\n';
  results_.report(os, "mr_table.result.");
}

}  // namespace naa::sim
