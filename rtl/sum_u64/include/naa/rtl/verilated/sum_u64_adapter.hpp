// SumU64Port over any Verilated module with sum_u64's ports (rtl/sum_u64/sum_u64.sv) at W bytes per
// beat (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/verilated/stream_ports.hpp"

namespace naa::rtl::verilated {

template <class V, std::uint32_t W>
class SumU64Verilated final : public SumU64Port {
 public:
  explicit SumU64Verilated(const RtlOptions& options) : h_(options, kBlock) {}
  [[nodiscard]] std::uint32_t width() const noexcept override { return W; }

  SumU64Outputs step(const SumU64Inputs& in) override {
    V& t = h_.top();
    put_bits(t.rst_ni, in.rst_n, 1);
    put_bits(t.in_valid_i, in.in_valid, 1);
    put_beat<W>(t.in_data_i, t.in_keep_i, t.in_last_i, in.in);
    put_bits(t.out_ready_i, in.out_ready, 1);
    h_.settle();
    const SumU64Outputs out{t.in_ready_o != 0, t.out_valid_o != 0,
                            get_beat<W>(t.out_data_o, t.out_keep_o, t.out_last_o)};
    h_.rising_edge();
    return out;
  }

 private:
  Harness<V> h_;
};

}  // namespace naa::rtl::verilated
