// The built-in streaming handlers written in C (spin/builtins: add1, add2, sum_u64, crc32,
// unpack_strided at their function codes), built for riscv32 with naa_add_handler and embedded
// in the simulator (sim/embed_handler_images.cmake). The Naa runs them on the HPU cores by
// default (SimConfig::builtin_handlers_in_c); the C++ classes of handlers.cpp stay as the oracles
// they are compared with (docs/spin.md "The built-ins in C").
#pragma once

#include <cstdint>
#include <span>

namespace naa::sim {

struct BuiltinHandlerImage {
  const char* name;
  std::span<const std::uint8_t> bytes;  // the ELF file
};

// Empty if this build had no clang and lld for riscv32 (then the C++ built-ins serve).
[[nodiscard]] std::span<const BuiltinHandlerImage> builtin_handler_images();

}  // namespace naa::sim
