// IcrcCheckPort over any Verilated module with icrc_check's ports (rtl/icrc_check/icrc_check.sv)
// at W bytes per beat: the normal and the broken variant (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include "naa/rtl/icrc_check.hpp"
#include "naa/rtl/verilated/stream_ports.hpp"

namespace naa::rtl::verilated {

template <class V, std::uint32_t W>
class IcrcCheckVerilated final : public IcrcCheckPort {
 public:
  explicit IcrcCheckVerilated(const RtlOptions& options) : h_(options, kBlock) {}
  [[nodiscard]] std::uint32_t width() const noexcept override { return W; }

  IcrcCheckOutputs step(const IcrcCheckInputs& in) override {
    V& t = h_.top();
    put_bits(t.rst_ni, in.rst_n, 1);
    put_bits(t.in_valid_i, in.in_valid, 1);
    put_beat<W>(t.in_data_i, t.in_keep_i, t.in_last_i, in.in);
    put_bytes(t.in_ip_udp_i, in.ip_udp.data(), kIpUdpHeaderBytes);
    put_bits(t.out_ready_i, in.out_ready, 1);
    h_.settle();
    IcrcCheckOutputs o;
    o.in_ready = t.in_ready_o != 0;
    o.out_valid = t.out_valid_o != 0;
    o.out.ok = t.out_ok_o != 0;
    o.out.short_datagram = t.out_short_o != 0;
    o.out.icrc = t.out_icrc_o;
    o.out.received = t.out_received_o;
    h_.rising_edge();
    return o;
  }

 private:
  Harness<V> h_;
};

}  // namespace naa::rtl::verilated
