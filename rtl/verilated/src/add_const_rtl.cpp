#include "naa/rtl/add_const_rtl.hpp"

#include <array>

#include "Vadd_const_w1.h"
#include "Vadd_const_w16.h"
#include "Vadd_const_w64.h"
#include "naa/rtl/verilated/add_const_adapter.hpp"

namespace naa::rtl {
namespace {

constexpr std::array<std::uint32_t, 3> kWidths{1, 16, 64};

}  // namespace

std::span<const std::uint32_t> add_const_rtl_widths() noexcept {
  return kWidths;
}

std::unique_ptr<AddConstPort> make_add_const_rtl(std::uint32_t width, const RtlOptions& options) {
  switch (width) {
    case 1:
      return std::make_unique<verilated::AddConstVerilated<Vadd_const_w1, 1>>(options);
    case 16:
      return std::make_unique<verilated::AddConstVerilated<Vadd_const_w16, 16>>(options);
    case 64:
      return std::make_unique<verilated::AddConstVerilated<Vadd_const_w64, 64>>(options);
    default:
      return nullptr;
  }
}

}  // namespace naa::rtl
