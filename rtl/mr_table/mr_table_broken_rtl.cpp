#include "naa/rtl/mr_table_broken_rtl.hpp"

#include "Vmr_table_broken.h"
#include "naa/rtl/verilated/mr_table_adapter.hpp"

namespace naa::rtl {

std::unique_ptr<MrTablePort> make_mr_table_broken_rtl(const RtlOptions& options) {
  return std::make_unique<verilated::MrTableVerilated<Vmr_table_broken>>(options);
}

}  // namespace naa::rtl
