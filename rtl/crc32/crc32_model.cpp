// The golden model of rtl/crc32/crc32.sv: a byte-at-a-time table-driven CRC-32 (the RTL folds
// whole beats and power-of-two chunks through constant XOR matrices, crc32_pkg), so the two are
// independent implementations.
#include "naa/rtl/crc32.hpp"

#include <array>
#include <bit>
#include <stdexcept>
#include <string>

namespace naa::rtl {

namespace {

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k)
      c = (c & 1U) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    t[n] = c;
  }
  return t;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

std::uint32_t advance(std::uint32_t c, const StreamBeat& beat, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i)
    c = kTable[(c ^ beat.data[i]) & 0xFFU] ^ (c >> 8);
  return c;
}

std::uint32_t checked_width(std::uint32_t width) {
  if (!is_supported_width(width) || width < 4 || !std::has_single_bit(width)) {
    throw std::invalid_argument("crc32: width " + std::to_string(width) +
                                " is not a power of two in 4..64");
  }
  return width;
}

}  // namespace

Crc32Model::Crc32Model(std::uint32_t width)
    : ReduceKernelModel("crc32", checked_width(width), 4,
                        static_cast<std::uint32_t>(std::countr_zero(width)) + 1) {}

void Crc32Model::absorb(const StreamBeat& beat) {
  crc_ = advance(crc_, beat, width());
}

std::uint64_t Crc32Model::finish(const StreamBeat& beat) {
  // The low popcount(TKEEP) bytes (TKEEP is a prefix by contract).
  const auto n = static_cast<std::uint32_t>(std::popcount(beat.keep & keep_mask(width())));
  const std::uint32_t result = ~advance(crc_, beat, n);
  crc_ = ~0U;
  return result;
}

std::uint64_t crc32_call_cycles(std::uint64_t bytes, std::uint32_t width) {
  // ap_start (1), the beats (an empty packet is one), the last-beat pipeline, the result beat,
  // ap_done (1).
  const std::uint64_t beats = bytes == 0 ? 1 : (bytes + width - 1) / width;
  return 1 + beats + (static_cast<std::uint64_t>(std::countr_zero(width)) + 1) + 1 + 1;
}

}  // namespace naa::rtl
