// Fuzz targets (testbench/fuzz, docs/reliability.md). Each target is a function
// `int naa_fuzz_<name>(const std::uint8_t*, std::size_t)`; fuzz_main.cpp turns one into a libFuzzer
// LLVMFuzzerTestOneInput (clang build, scripts/fuzz.sh), and the regression test replays the files
// under testbench/fuzz/regressions/<name>/ through the same functions in the normal build.
// A target reports a broken property with NAA_FUZZ_CHECK, which aborts (a libFuzzer crash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define NAA_FUZZ_CHECK(cond)                                                                \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)

namespace naa::fuzz {
int packet(const std::uint8_t* data, std::size_t size);
int cm_mad(const std::uint8_t* data, std::size_t size);
int mrsp(const std::uint8_t* data, std::size_t size);
int naa_rx(const std::uint8_t* data, std::size_t size);
int host_rx(const std::uint8_t* data, std::size_t size);
}  // namespace naa::fuzz
