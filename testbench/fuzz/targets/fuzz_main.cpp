// libFuzzer entry point for one target, chosen at compile time (NAA_FUZZ_TARGET=packet, ...).
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return naa::fuzz::NAA_FUZZ_TARGET(data, size);
}
