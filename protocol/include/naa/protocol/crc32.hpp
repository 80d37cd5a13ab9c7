// CRC-32 as in zlib (reflected polynomial 0xEDB88320): PCLMULQDQ folding where the CPU has it
// (checked at run time), slicing-by-16 tables otherwise; plus the GF(2) "shift by n
// zero bytes" operator that zlib's crc32_combine uses. The ICRC (PROTOCOL.md 2) is this CRC.
#pragma once

#include <cstddef>
#include <cstdint>

#include "naa/protocol/bytes.hpp"

namespace naa::protocol {

// zlib semantics: crc32(data) of an empty input is 0; crc32(b, crc32(a)) == crc32(a || b).
[[nodiscard]] std::uint32_t crc32(ByteView data, std::uint32_t crc = 0) noexcept;

// Raw register update without the pre/post inversion: linear over GF(2) in (register, data).
[[nodiscard]] std::uint32_t crc32_raw_update(std::uint32_t reg, ByteView data) noexcept;
// The same over `head` then `data` without joining them: crc32_raw_update(crc32_raw_update(reg,
// head), data), in one pass of carry-less folds when head is whole 16-byte blocks (the ICRC's
// masked pseudo-header and BTH, then the rest of the datagram where it lies; issue 31).
[[nodiscard]] std::uint32_t crc32_raw_update(std::uint32_t reg, ByteView head,
                                             ByteView data) noexcept;

// The raw register after feeding `zero_bytes` zero bytes into `reg`: reg * x^(8n) mod P.
// O(log n) 32x32 matrix squarings, as in zlib's crc32_combine.
[[nodiscard]] std::uint32_t crc32_shift(std::uint32_t reg, std::size_t zero_bytes) noexcept;

}  // namespace naa::protocol

namespace naa::protocol {

// The linear operator "feed n zero bytes" as a 32x32 GF(2) matrix (column i = image of bit i), for
// applying the same shift to many registers (ICRC IPv4-ID recovery, PROTOCOL.md 2).
class Crc32ShiftOperator {
 public:
  [[nodiscard]] static Crc32ShiftOperator for_zero_bytes(std::size_t zero_bytes) noexcept;
  [[nodiscard]] std::uint32_t apply(std::uint32_t reg) const noexcept;

 private:
  std::uint32_t columns_[32] = {};
};

}  // namespace naa::protocol

namespace naa::protocol::detail {

// For tests and benchmarks: the portable table path, whatever the CPU, and whether
// crc32_raw_update() uses carry-less multiplication on this CPU.
[[nodiscard]] std::uint32_t crc32_raw_update_portable(std::uint32_t reg, ByteView data) noexcept;
[[nodiscard]] bool crc32_has_clmul() noexcept;

}  // namespace naa::protocol::detail
