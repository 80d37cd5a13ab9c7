// The host's own memory-region table: what protects host memory from bad remote accesses
// (PROTOCOL.md 3: R_Key, bounds or permission failure -> NAK 0x62, nothing written).
//
// Not thread-safe: the endpoint serialises every access under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <system_error>
#include <unordered_map>

#include "naa/host/transport.hpp"

namespace naa::host::detail {

class MrTable {
 public:
  explicit MrTable(std::uint64_t seed) : rng_(seed) {}

  // lkey == rkey, as in Linux rxe. Keys are never 0 (MRSP uses rkey 0 for "no host memory").
  std::error_code add(void* addr, std::size_t length, Access access, MemoryRegion& out);
  std::error_code remove(std::uint32_t lkey);

  // The local bytes [addr, addr + length) of lkey's region, or nullptr if they are not all inside
  // it, or (need_write) the region lacks local write access.
  [[nodiscard]] std::uint8_t* local(std::uint32_t lkey, std::uint64_t addr, std::uint64_t length,
                                    bool need_write) const noexcept;
  // The bytes a remote access names, or nullptr for an unknown rkey, out of bounds or missing
  // permission (-> NAK 0x62).
  [[nodiscard]] std::uint8_t* remote(std::uint32_t rkey, std::uint64_t va, std::uint64_t length,
                                     Access needed) const noexcept;

  void count_written(std::uint32_t key, std::uint64_t bytes) noexcept;
  [[nodiscard]] std::uint64_t written(std::uint32_t key) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    std::uint64_t base = 0;
    std::uint64_t length = 0;
    Access access = Access::none;
    std::uint64_t written = 0;
  };
  std::unordered_map<std::uint32_t, Entry> entries_;
  std::mt19937_64 rng_;
};

}  // namespace naa::host::detail
