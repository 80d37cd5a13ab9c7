// RxParserPort over any Verilated module with rx_parser's ports (rtl/rx_parser/rx_parser.sv) at W
// bytes per beat: the normal and the broken variant (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include "naa/rtl/rx_parser.hpp"
#include "naa/rtl/verilated/stream_ports.hpp"

namespace naa::rtl::verilated {

template <class V, std::uint32_t W>
class RxParserVerilated final : public RxParserPort {
 public:
  explicit RxParserVerilated(const RtlOptions& options) : h_(options, kBlock) {}
  [[nodiscard]] std::uint32_t width() const noexcept override { return W; }

  RxParserOutputs step(const RxParserInputs& in) override {
    V& t = h_.top();
    put_bits(t.rst_ni, in.rst_n, 1);
    put_bits(t.in_valid_i, in.in_valid, 1);
    put_beat<W>(t.in_data_i, t.in_keep_i, t.in_last_i, in.in);
    put_bits(t.out_ready_i, in.out_ready, 1);
    h_.settle();
    RxParserOutputs o;
    o.in_ready = t.in_ready_o != 0;
    o.out_valid = t.out_valid_o != 0;
    // The result is don't-care while !out_valid (rx_parser.hpp): read it only when valid, it is
    // 36 ports every cycle otherwise.
    if (o.out_valid) read_result(t, o.out);
    h_.rising_edge();
    return o;
  }

 private:
  static void read_result(const V& t, RxParsed& p) {
    p.reason = static_cast<RxDropReason>(t.out_reason_o);
    p.length = t.out_length_o;
    p.opcode = t.out_opcode_o;
    p.solicited_event = t.out_se_o != 0;
    p.mig_req = t.out_mig_req_o != 0;
    p.pad_count = t.out_pad_o;
    p.tver = t.out_tver_o;
    p.pkey = t.out_pkey_o;
    p.fecn = t.out_fecn_o != 0;
    p.becn = t.out_becn_o != 0;
    p.dest_qpn = t.out_dest_qpn_o;
    p.ack_req = t.out_ack_req_o != 0;
    p.psn = t.out_psn_o;
    p.headers = t.out_headers_o;
    p.reth_va = t.out_reth_va_o;
    p.reth_rkey = t.out_reth_rkey_o;
    p.reth_dma_length = t.out_reth_dma_length_o;
    p.aeth_syndrome = t.out_aeth_syndrome_o;
    p.aeth_msn = t.out_aeth_msn_o;
    p.immediate = t.out_immediate_o;
    p.atomic_va = t.out_atomic_va_o;
    p.atomic_rkey = t.out_atomic_rkey_o;
    p.atomic_swap_add = t.out_atomic_swap_add_o;
    p.atomic_compare = t.out_atomic_compare_o;
    p.atomic_ack_original = t.out_atomic_ack_original_o;
    p.deth_qkey = t.out_deth_qkey_o;
    p.deth_src_qpn = t.out_deth_src_qpn_o;
    p.irn_recv_wqe_sn = t.out_irn_recv_wqe_sn_o;
    p.irn_packet_offset = t.out_irn_packet_offset_o;
    p.sack_reserved = t.out_sack_reserved_o;
    p.sack_psn = t.out_sack_psn_o;
    p.sack_bitmap = t.out_sack_bitmap_o;
    p.payload_offset = t.out_payload_offset_o;
    p.payload_length = t.out_payload_length_o;
  }

  Harness<V> h_;
};

}  // namespace naa::rtl::verilated
