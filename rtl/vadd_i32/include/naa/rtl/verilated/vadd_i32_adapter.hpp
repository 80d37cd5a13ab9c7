// VaddI32Port over any Verilated module with vadd_i32's ports (rtl/vadd_i32/vadd_i32.sv) at W bytes
// per beat (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include "naa/rtl/vadd_i32.hpp"
#include "naa/rtl/verilated/stream_ports.hpp"

namespace naa::rtl::verilated {

template <class V, std::uint32_t W>
class VaddI32Verilated final : public VaddI32Port {
 public:
  explicit VaddI32Verilated(const RtlOptions& options) : h_(options, kBlock) {}
  [[nodiscard]] std::uint32_t width() const noexcept override { return W; }

  VaddI32Outputs step(const VaddI32Inputs& in) override {
    V& t = h_.top();
    put_bits(t.rst_ni, in.rst_n, 1);
    put_bits(t.a_valid_i, in.a_valid, 1);
    put_beat<W>(t.a_data_i, t.a_keep_i, t.a_last_i, in.a);
    put_bits(t.b_valid_i, in.b_valid, 1);
    put_beat<W>(t.b_data_i, t.b_keep_i, t.b_last_i, in.b);
    put_bits(t.out_ready_i, in.out_ready, 1);
    h_.settle();
    const VaddI32Outputs out{t.a_ready_o != 0, t.b_ready_o != 0, t.out_valid_o != 0,
                             get_beat<W>(t.out_data_o, t.out_keep_o, t.out_last_o)};
    h_.rising_edge();
    return out;
  }

 private:
  Harness<V> h_;
};

}  // namespace naa::rtl::verilated
