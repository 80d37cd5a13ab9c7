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

// The adapter of a block with one input stream and one output stream and no other ports
// (crc32, sum_u64: rst_ni, in_*, out_ready_i -> in_ready_o, out_*): Port::Inputs carries rst_n,
// in_valid, in, out_ready; Port::Outputs is {in_ready, out_valid, out}. A block's adapter header
// names it with an alias template (docs/rtl/plug-in-your-rtl.md).
template <class Port, class V, std::uint32_t W>
class SingleStreamVerilated final : public Port {
 public:
  explicit SingleStreamVerilated(const RtlOptions& options) : h_(options, Port::kBlock) {}
  [[nodiscard]] std::uint32_t width() const noexcept override { return W; }

  typename Port::Outputs step(const typename Port::Inputs& in) override {
    V& t = h_.top();
    put_bits(t.rst_ni, in.rst_n, 1);
    put_bits(t.in_valid_i, in.in_valid, 1);
    put_beat<W>(t.in_data_i, t.in_keep_i, t.in_last_i, in.in);
    put_bits(t.out_ready_i, in.out_ready, 1);
    h_.settle();
    const typename Port::Outputs out{t.in_ready_o != 0, t.out_valid_o != 0,
                                     get_beat<W>(t.out_data_o, t.out_keep_o, t.out_last_o)};
    h_.rising_edge();
    return out;
  }

 private:
  Harness<V> h_;
};

}  // namespace naa::rtl::verilated
