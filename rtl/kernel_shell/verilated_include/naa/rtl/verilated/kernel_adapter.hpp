// KernelPort over a Verilated kernel shell (rtl/kernel_shell/naa_kernel_shell.sv.in) at W bytes
// per beat: the adapter of every kernel, built-in or plug-in (docs/rtl/kernel-shell.md). Include
// it only from code compiled against a naa_verilate() target of the shell.
#pragma once

#include <string>
#include <string_view>

#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/verilated/stream_ports.hpp"

namespace naa::rtl::verilated {

template <class V, std::uint32_t W>
class KernelVerilated final : public KernelPort {
 public:
  // options.name: the kernel's name in reports and the instance name in the waveform (its top
  // module; the factories set it).
  explicit KernelVerilated(const RtlOptions& options)
      : block_(options.name.empty() ? std::string("kernel") : options.name), h_(options, block_) {}
  [[nodiscard]] std::string_view block() const noexcept override { return block_; }
  [[nodiscard]] std::uint32_t width() const noexcept override { return W; }

  KernelOutputs step(const KernelInputs& in) override {
    V& t = h_.top();
    put_bits(t.rst_ni, in.rst_n, 1);
    put_bits(t.ap_start_i, in.ap_start, 1);
    put_bits(t.user_i, in.user, 24);
    put_bits(t.src_valid_i, in.src_valid, 1);
    put_beat<W>(t.src_data_i, t.src_keep_i, t.src_last_i, in.src);
    put_bits(t.dst_ready_i, in.dst_ready, 1);
    h_.settle();
    KernelOutputs o;
    o.ap_ready = t.ap_ready_o != 0;
    o.ap_idle = t.ap_idle_o != 0;
    o.ap_done = t.ap_done_o != 0;
    o.ap_return = static_cast<std::uint32_t>(t.ap_return_o);
    o.src_ready = t.src_ready_o != 0;
    o.dst_valid = t.dst_valid_o != 0;
    o.dst = get_beat<W>(t.dst_data_o, t.dst_keep_o, t.dst_last_o);
    h_.rising_edge();
    return o;
  }

 private:
  std::string block_;
  Harness<V> h_;
};

}  // namespace naa::rtl::verilated
