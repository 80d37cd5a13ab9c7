#include "naa/rtl/mr_table_rtl.hpp"

#include "Vmr_table.h"
#include "naa/rtl/verilated/mr_table_adapter.hpp"

namespace naa::rtl {

std::unique_ptr<MrTablePort> make_mr_table_rtl(const RtlOptions& options) {
  return std::make_unique<verilated::MrTableVerilated<Vmr_table>>(options);
}

}  // namespace naa::rtl
