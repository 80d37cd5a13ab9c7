// MrTablePort over any Verilated module with mr_table's ports (rtl/mr_table/mr_table.sv): the
// normal and the broken variant here, your own table too (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include <cassert>
#include <cstdint>

#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/verilated/harness.hpp"

namespace naa::rtl::verilated {

template <class V>
class MrTableVerilated final : public MrTablePort {
 public:
  explicit MrTableVerilated(const RtlOptions& options) : h_(options, kBlock) {}

  MrTableOutputs step(const MrTableInputs& in) override {
    return MrTableVerilated::step_changed(in, kMrInputAll, kMrOutputAll);
  }

  // Only the changed groups' ports are written: the others hold the previous cycle's values,
  // which the caller promises equal `in`'s (checked in builds with assertions); only the wanted
  // outputs are read. In naa-sim's lookup the request cycle writes the lookup port (its valid
  // bit alone when the fields repeat the last request's) and reads nothing, the idle cycle after
  // it writes the valid bit and reads the response: 1 to 6 of 17 input ports and 2 of 12
  // outputs per cycle (issue 31).
  MrTableOutputs step_changed(const MrTableInputs& in, std::uint8_t changed,
                              std::uint8_t wanted) override {
#ifndef NDEBUG
    assert((changed_groups(last_, in) & ~changed) == 0 && "step_changed: a group not in changed");
    last_ = in;
#endif
    V& t = h_.top();
    if (changed & kMrInputReset) put_bits(t.rst_ni, in.rst_n, 1);
    if (changed & kMrInputWrite) {
      put_bits(t.wr_valid_i, in.write.valid, 1);
      put_bits(t.wr_index_i, in.write.index, 5);
      put_bits(t.wr_entry_valid_i, in.write.entry_valid, 1);
      put_bits(t.wr_rkey_i, in.write.rkey, 32);
      put_bits(t.wr_base_i, in.write.base, 64);
      put_bits(t.wr_length_i, in.write.length, 32);
      put_bits(t.wr_access_i, in.write.access, 3);
      put_bits(t.wr_owner_qpn_i, in.write.owner_qpn, 24);
    }
    if (changed & kMrInputLookupValid) put_bits(t.lk_valid_i, in.lookup.valid, 1);
    if (changed & kMrInputLookupFields) {
      put_bits(t.lk_rkey_i, in.lookup.rkey, 32);
      put_bits(t.lk_va_i, in.lookup.va, 64);
      put_bits(t.lk_len_i, in.lookup.len, 32);
      put_bits(t.lk_access_i, in.lookup.access, 3);
      put_bits(t.lk_qpn_i, in.lookup.qpn, 24);
    }
    if (changed & kMrInputRead) {
      put_bits(t.rd_valid_i, in.read.valid, 1);
      put_bits(t.rd_index_i, in.read.index, 5);
    }
    h_.settle();
    MrTableOutputs out;
    if (wanted & kMrOutputResponse) {
      out.rsp_valid = t.rsp_valid_o != 0;
      out.rsp_status = static_cast<MrStatus>(t.rsp_status_o);
    }
    if (wanted & kMrOutputRead) {
      out.rd_valid = t.rd_valid_o != 0;
      out.rd_entry.valid = t.rd_entry_valid_o != 0;
      out.rd_entry.rkey = t.rd_rkey_o;
      out.rd_entry.base = t.rd_base_o;
      out.rd_entry.length = t.rd_length_o;
      out.rd_entry.access = t.rd_access_o;
      out.rd_entry.owner_qpn = t.rd_owner_qpn_o;
    }
    if (wanted & kMrOutputSearch) {
      out.free_any = t.free_any_o != 0;
      out.free_index = t.free_index_o;
      out.free_count = t.free_count_o;
    }
    h_.rising_edge();
    return out;
  }

 private:
  Harness<V> h_;
#ifndef NDEBUG
  MrTableInputs last_;  // the ports' values (step_changed's precondition is checked against it)
#endif
};

}  // namespace naa::rtl::verilated
