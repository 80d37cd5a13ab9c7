// Packing of StreamBeat into the <prefix>_{data,keep,last}_{i,o} ports of a Verilated kernel.
#pragma once

#include "naa/rtl/stream.hpp"
#include "naa/rtl/verilated/harness.hpp"

namespace naa::rtl::verilated {

template <std::uint32_t W, class Data, class Keep, class Last>
void put_beat(Data& data, Keep& keep, Last& last, const StreamBeat& beat) {
  static_assert(W >= 1 && W <= kMaxStreamBytes, "beat wider than the C++ port structs carry");
  put_bytes(data, beat.data.data(), W);
  put_bits(keep, beat.keep, W);
  put_bits(last, beat.last, 1);
}

template <std::uint32_t W, class Data, class Keep, class Last>
StreamBeat get_beat(const Data& data, const Keep& keep, const Last& last) {
  static_assert(W >= 1 && W <= kMaxStreamBytes, "beat wider than the C++ port structs carry");
  StreamBeat beat;
  get_bytes(data, beat.data.data(), W);
  beat.keep = static_cast<std::uint64_t>(keep) & keep_mask(W);
  beat.last = last != 0;
  return beat;
}

}  // namespace naa::rtl::verilated
