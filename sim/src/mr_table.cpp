#include "naa/sim/mr_table.hpp"

#include <string>

namespace naa::sim {

void mr_lookup_length_fatal() {
  model_fatal("mr_table", "lookup length beyond the 32-bit port");
}

rtl::MrTableWrite mr_write_port(std::size_t index, const MrEntry& e) {
  if (index >= rtl::kMrEntries) {
    model_fatal("mr_table", "entry " + std::to_string(index) + " beyond the 32-entry table");
  }
  rtl::MrTableWrite w;
  w.valid = true;
  w.index = static_cast<std::uint8_t>(index);
  w.entry_valid = e.valid;
  if (e.valid) {
    // MRSP sizes are 32-bit (PROTOCOL.md 5.1); rkeys are tag << 8 | index with index < 32, so
    // rkey[4:0] indexing finds the entry.
    if (e.length > 0xFFFFFFFFU) model_fatal("mr_table", "region length beyond the 32-bit port");
    if ((e.rkey & rtl::kMrIndexMask) != index) {
      model_fatal("mr_table", "rkey " + std::to_string(e.rkey) + " does not index entry " +
                                  std::to_string(index));
    }
    w.rkey = e.rkey;
    w.base = e.base;
    w.length = static_cast<std::uint32_t>(e.length);
    w.access = static_cast<std::uint8_t>(e.access & rtl::kMrAccessMask);
    w.owner_qpn = e.owner_qpn & 0xFFFFFFU;
  }
  return w;
}

MrTableModel::MrTableModel(std::size_t entries) : shadow_(entries) {
  if (entries == 0 || entries > rtl::kMrEntries) {
    model_fatal("mr_table", "MR entries must be 1.." + std::to_string(rtl::kMrEntries) +
                                " (the RTL block's table), not " + std::to_string(entries));
  }
  // The model starts at its reset values; one reset cycle keeps it on the port contract.
  rtl::MrTableInputs reset;
  reset.rst_n = false;
  (void)model_.step(reset);
}

MrCheck MrTableModel::lookup(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                             std::uint8_t access, std::uint32_t qpn) {
  return model_.check(mr_lookup_port(rkey, va, len, access, qpn));
}

void MrTableModel::program(std::size_t index, const MrEntry& entry) {
  rtl::MrTableInputs in;
  in.write = mr_write_port(index, entry);
  shadow_.at(index) = entry;
  (void)model_.step(in);
}

void MrTableModel::invalidate(std::size_t index) {
  rtl::MrTableInputs in;
  in.write = mr_write_port(index, MrEntry{});
  shadow_.at(index) = MrEntry{};
  (void)model_.step(in);
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
  results_.add(stat_index(r));
  return r;
}

std::optional<std::size_t> MrTableIf::free_index() const {
  for (std::size_t i = 0; i < size(); ++i) {
    if (!entry(i).valid) return i;
  }
  return std::nullopt;
}

std::size_t MrTableIf::free_count() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < size(); ++i)
    n += entry(i).valid ? 0U : 1U;
  return n;
}

std::optional<std::size_t> MrTable::free_index() const {
  return impl_->free_index();
}

std::size_t MrTable::free_count() const {
  return impl_->free_count();
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
