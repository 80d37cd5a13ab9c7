// MrTablePort over any Verilated module with mr_table's ports (rtl/mr_table/mr_table.sv): the
// normal and the broken variant here, your own table too (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/verilated/harness.hpp"

namespace naa::rtl::verilated {

template <class V>
class MrTableVerilated final : public MrTablePort {
 public:
  explicit MrTableVerilated(const RtlOptions& options) : h_(options, kBlock) {}

  MrTableOutputs step(const MrTableInputs& in) override {
    V& t = h_.top();
    put_bits(t.rst_ni, in.rst_n, 1);
    put_bits(t.wr_valid_i, in.write.valid, 1);
    put_bits(t.wr_index_i, in.write.index, 5);
    put_bits(t.wr_entry_valid_i, in.write.entry_valid, 1);
    put_bits(t.wr_rkey_i, in.write.rkey, 32);
    put_bits(t.wr_base_i, in.write.base, 64);
    put_bits(t.wr_length_i, in.write.length, 32);
    put_bits(t.wr_access_i, in.write.access, 3);
    put_bits(t.wr_owner_qpn_i, in.write.owner_qpn, 24);
    put_bits(t.lk_valid_i, in.lookup.valid, 1);
    put_bits(t.lk_rkey_i, in.lookup.rkey, 32);
    put_bits(t.lk_va_i, in.lookup.va, 64);
    put_bits(t.lk_len_i, in.lookup.len, 32);
    put_bits(t.lk_access_i, in.lookup.access, 3);
    put_bits(t.lk_qpn_i, in.lookup.qpn, 24);
    put_bits(t.rd_valid_i, in.read.valid, 1);
    put_bits(t.rd_index_i, in.read.index, 5);
    h_.settle();
    MrTableOutputs out;
    out.rsp_valid = t.rsp_valid_o != 0;
    out.rsp_status = static_cast<MrStatus>(t.rsp_status_o);
    out.rd_valid = t.rd_valid_o != 0;
    out.rd_entry.valid = t.rd_entry_valid_o != 0;
    out.rd_entry.rkey = t.rd_rkey_o;
    out.rd_entry.base = t.rd_base_o;
    out.rd_entry.length = t.rd_length_o;
    out.rd_entry.access = t.rd_access_o;
    out.rd_entry.owner_qpn = t.rd_owner_qpn_o;
    out.free_any = t.free_any_o != 0;
    out.free_index = t.free_index_o;
    out.free_count = t.free_count_o;
    h_.rising_edge();
    return out;
  }

 private:
  Harness<V> h_;
};

}  // namespace naa::rtl::verilated
