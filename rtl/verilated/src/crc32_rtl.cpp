#include "naa/rtl/crc32_rtl.hpp"

#include <array>

#include "Vcrc32_w16.h"
#include "Vcrc32_w64.h"
#include "naa/rtl/verilated/crc32_adapter.hpp"

namespace naa::rtl {
namespace {

constexpr std::array<std::uint32_t, 2> kWidths{16, 64};

}  // namespace

std::span<const std::uint32_t> crc32_rtl_widths() noexcept {
  return kWidths;
}

std::unique_ptr<Crc32Port> make_crc32_rtl(std::uint32_t width, const RtlOptions& options) {
  switch (width) {
    case 16:
      return std::make_unique<verilated::Crc32Verilated<Vcrc32_w16, 16>>(options);
    case 64:
      return std::make_unique<verilated::Crc32Verilated<Vcrc32_w64, 64>>(options);
    default:
      return nullptr;
  }
}

}  // namespace naa::rtl
