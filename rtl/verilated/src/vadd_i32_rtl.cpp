#include "naa/rtl/vadd_i32_rtl.hpp"

#include <array>

#include "Vvadd_i32_w16.h"
#include "Vvadd_i32_w64.h"
#include "naa/rtl/verilated/vadd_i32_adapter.hpp"

namespace naa::rtl {
namespace {

constexpr std::array<std::uint32_t, 2> kWidths{16, 64};

}  // namespace

std::span<const std::uint32_t> vadd_i32_rtl_widths() noexcept {
  return kWidths;
}

std::unique_ptr<VaddI32Port> make_vadd_i32_rtl(std::uint32_t width, const RtlOptions& options) {
  switch (width) {
    case 16:
      return std::make_unique<verilated::VaddI32Verilated<Vvadd_i32_w16, 16>>(options);
    case 64:
      return std::make_unique<verilated::VaddI32Verilated<Vvadd_i32_w64, 64>>(options);
    default:
      return nullptr;
  }
}

}  // namespace naa::rtl
