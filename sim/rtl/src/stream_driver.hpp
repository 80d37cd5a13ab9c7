// Drivers that run one kernel call through a kernel block's port (rtl::AddConstPort, VaddI32Port,
// Crc32Port, SumU64Port: the cycle model, the Verilated RTL or a lockstep pair) and count its
// cycles. The bytes go in as packets of W-byte beats (prefix keep, last on a packet's final beat),
// back to back at one beat per cycle, with the output always ready: the block is clocked only while
// the call has work. Cycles: from the cycle the first beat is offered to the cycle the last output
// beat is taken, both included (N beats through a 1-cycle block: N + 1).
//
// No SystemC here: plain functions over a port, so that testbench/rtl can check them against the
// kernels of sim/src/kernels.cpp directly.
#pragma once

#include <cstdint>
#include <span>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/crc32.hpp"
#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/vadd_i32.hpp"

namespace naa::sim::rtl_driver {

struct StreamRun {
  std::uint64_t cycles = 0;
  // The block moved nothing for kStallCycles cycles in a row (an RTL bug): the run was abandoned
  // and the outputs are incomplete.
  bool stalled = false;
};
inline constexpr std::uint64_t kStallCycles = 1000;

// Adds `addend` to every byte of every packet, in place (kernels add1 and add2). Empty packets
// are skipped; no packet at all costs 0 cycles.
[[nodiscard]] StreamRun run_add_const(rtl::AddConstPort& port,
                                      std::span<const std::span<std::uint8_t>> packets,
                                      std::uint8_t addend);

// out[0, n) = a + b over int32 lanes, n = a.size() (a multiple of 4; b and out at least n).
[[nodiscard]] StreamRun run_vadd_i32(rtl::VaddI32Port& port, std::span<const std::uint8_t> a,
                                     std::span<const std::uint8_t> b, std::span<std::uint8_t> out);

// *crc = zlib CRC-32 of `in` (an empty input is one beat with keep 0).
[[nodiscard]] StreamRun run_crc32(rtl::Crc32Port& port, std::span<const std::uint8_t> in,
                                  std::uint32_t* crc);

// *sum = 64-bit sum of `in` read as little-endian uint32 elements, trailing bytes ignored (an
// empty input is one beat with keep 0).
[[nodiscard]] StreamRun run_sum_u64(rtl::SumU64Port& port, std::span<const std::uint8_t> in,
                                    std::uint64_t* sum);

}  // namespace naa::sim::rtl_driver
