// HpuPort over any Verilated module with hpu's ports (rtl/hpu/hpu.sv): the normal and the broken
// variant here, your own core too (docs/rtl/plug-in-your-rtl.md).
#pragma once

#include "naa/rtl/hpu.hpp"
#include "naa/rtl/verilated/harness.hpp"

namespace naa::rtl::verilated {

template <class V>
class HpuVerilated final : public HpuPort {
 public:
  explicit HpuVerilated(const RtlOptions& options) : h_(options, kBlock) {}

  HpuOutputs step(const HpuInputs& in) override {
    V& t = h_.top();
    put_bits(t.rst_ni, in.rst_n, 1);
    put_bits(t.start_i, in.start, 1);
    put_bits(t.entry_i, in.entry, 32);
    put_bits(t.sp_i, in.sp, 32);
    put_bits(t.a0_i, in.args[0], 32);
    put_bits(t.a1_i, in.args[1], 32);
    put_bits(t.a2_i, in.args[2], 32);
    put_bits(t.mem_rvalid_i, in.mem_rvalid, 1);
    put_bits(t.mem_err_i, in.mem_err, 1);
    put_bits(t.mem_rdata_i, in.mem_rdata, 32);
    h_.settle();
    HpuOutputs out;
    out.busy = t.busy_o != 0;
    out.done = t.done_o != 0;
    out.ret = t.ret_o;
    out.trap = t.trap_o != 0;
    out.trap_cause = static_cast<HpuTrap>(t.trap_cause_o);
    out.trap_pc = t.trap_pc_o;
    out.mem_req = t.mem_req_o != 0;
    out.mem_fetch = t.mem_fetch_o != 0;
    out.mem_we = t.mem_we_o != 0;
    out.mem_be = static_cast<std::uint8_t>(t.mem_be_o);
    out.mem_addr = t.mem_addr_o;
    out.mem_wdata = t.mem_wdata_o;
    h_.rising_edge();
    return out;
  }

 private:
  Harness<V> h_;
};

}  // namespace naa::rtl::verilated
