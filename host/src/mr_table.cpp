#include "mr_table.hpp"

#include <cstring>

#include "naa/host/error.hpp"

namespace naa::host::detail {

std::error_code MrTable::add(void* addr, std::size_t length, Access access, MemoryRegion& out) {
  if (addr == nullptr && length != 0) return Errc::invalid_argument;
  const auto base = reinterpret_cast<std::uintptr_t>(addr);  // NOLINT: VAs are integers on the wire
  if (base + length < base) return Errc::invalid_argument;
  std::uint32_t key = 0;
  do {
    key = static_cast<std::uint32_t>(rng_());
  } while (key == 0 || entries_.contains(key));
  entries_.emplace(key, Entry{base, length, access, 0});
  out = MemoryRegion{addr, length, key, key, access};
  return {};
}

std::error_code MrTable::remove(std::uint32_t lkey) {
  return entries_.erase(lkey) == 1 ? std::error_code{} : make_error_code(Errc::invalid_argument);
}

namespace {
bool inside(std::uint64_t base, std::uint64_t length, std::uint64_t addr, std::uint64_t n) {
  return addr >= base && n <= length && addr - base <= length - n;
}
std::uint8_t* as_pointer(std::uint64_t addr) {
  return reinterpret_cast<std::uint8_t*>(static_cast<std::uintptr_t>(addr));  // NOLINT
}
}  // namespace

std::uint8_t* MrTable::local(std::uint32_t lkey, std::uint64_t addr, std::uint64_t length,
                             bool need_write) const noexcept {
  auto it = entries_.find(lkey);
  if (it == entries_.end()) return nullptr;
  const Entry& e = it->second;
  if (need_write && !has_access(e.access, Access::local_write)) return nullptr;
  if (!inside(e.base, e.length, addr, length)) return nullptr;
  return as_pointer(addr);
}

std::uint8_t* MrTable::remote(std::uint32_t rkey, std::uint64_t va, std::uint64_t length,
                              Access needed) const noexcept {
  auto it = entries_.find(rkey);
  if (it == entries_.end()) return nullptr;
  const Entry& e = it->second;
  if (!has_access(e.access, needed)) return nullptr;
  if (!inside(e.base, e.length, va, length)) return nullptr;
  return as_pointer(va);
}

void MrTable::count_written(std::uint32_t key, std::uint64_t bytes) noexcept {
  auto it = entries_.find(key);
  if (it != entries_.end()) it->second.written += bytes;
}

std::uint64_t MrTable::written(std::uint32_t key) const noexcept {
  auto it = entries_.find(key);
  return it == entries_.end() ? 0 : it->second.written;
}

}  // namespace naa::host::detail
