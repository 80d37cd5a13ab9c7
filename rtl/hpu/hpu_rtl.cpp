#include "naa/rtl/hpu_rtl.hpp"

#include "Vhpu.h"
#include "naa/rtl/verilated/hpu_adapter.hpp"

namespace naa::rtl {

std::unique_ptr<HpuPort> make_hpu_rtl(const RtlOptions& options) {
  return std::make_unique<verilated::HpuVerilated<Vhpu>>(options);
}

}  // namespace naa::rtl
