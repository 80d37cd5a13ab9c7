#include "naa/rtl/hpu_broken_rtl.hpp"

#include "Vhpu_broken.h"
#include "naa/rtl/verilated/hpu_adapter.hpp"

namespace naa::rtl {

std::unique_ptr<HpuPort> make_hpu_broken_rtl(const RtlOptions& options) {
  return std::make_unique<verilated::HpuVerilated<Vhpu_broken>>(options);
}

}  // namespace naa::rtl
