// SumU64Port over any Verilated module with sum_u64's ports (rtl/sum_u64/sum_u64.sv) at W bytes per
// beat (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/verilated/stream_ports.hpp"

namespace naa::rtl::verilated {

template <class V, std::uint32_t W>
using SumU64Verilated = SingleStreamVerilated<SumU64Port, V, W>;

}  // namespace naa::rtl::verilated
