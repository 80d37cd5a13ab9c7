// Crc32Port over any Verilated module with crc32's ports (rtl/crc32/crc32.sv) at W bytes per beat
// (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include "naa/rtl/crc32.hpp"
#include "naa/rtl/verilated/stream_ports.hpp"

namespace naa::rtl::verilated {

template <class V, std::uint32_t W>
using Crc32Verilated = SingleStreamVerilated<Crc32Port, V, W>;

}  // namespace naa::rtl::verilated
