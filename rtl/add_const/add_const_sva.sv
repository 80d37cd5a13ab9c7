// add_const_sva: add_const's port contract as concurrent assertions, and its covers
// (rtl/add_const/README.md; docs/rtl/README.md "Assertions"). The kernel contract every built-in
// keeps is rtl/kernel_shell/naa_kernel_sva.sv, instantiated here; this adds add_const's own: one
// register stage, so a src beat taken is on dst in the next cycle with its TKEEP and TLAST (README
// "Behaviour", "Timing"), and no dst beat otherwise. Bound to every add_const instance by the
// `bind` at the end (simulation and lint only, never synthesis). Test rtl_sva
// (testbench/rtl/test_sva_kernels.cpp) makes every assertion fire on a trace that breaks it.
`default_nettype none

module add_const_sva #(
  parameter int unsigned W = 64
) (
  input wire           ap_clk,
  input wire           ap_rst_n,
  input wire           ap_start,
  input wire           ap_done,
  input wire           ap_idle,
  input wire           ap_ready,
  input wire [31:0]    ap_return,
  input wire [23:0]    user,
  input wire [8*W-1:0] src_TDATA,
  input wire [W-1:0]   src_TKEEP,
  input wire           src_TLAST,
  input wire           src_TVALID,
  input wire           src_TREADY,
  input wire [8*W-1:0] dst_TDATA,
  input wire [W-1:0]   dst_TKEEP,
  input wire           dst_TLAST,
  input wire           dst_TVALID,
  input wire           dst_TREADY
);

  naa_kernel_sva #(.W(W), .SrcPackets(1), .ReturnsZero(1'b1)) u_kernel_sva (.*);

  // Reset: as in naa_kernel_sva (ok0: one cycle, ok1: `|=>`; nets of their own).
  logic armed_q = 1'b0;  // simulation-only state, hence the initializers
  logic live_q = 1'b0;
  logic ok0, ok1;
  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      armed_q <= 1'b1;
      live_q  <= 1'b0;
    end else begin
      live_q <= armed_q;
    end
  end
  assign ok0 = ap_rst_n && armed_q;
  assign ok1 = ap_rst_n && live_q;

  logic take, dst_wait;
  assign take     = src_TVALID && src_TREADY;
  assign dst_wait = dst_TVALID && !dst_TREADY;

  a_beat_latency: assert property (@(posedge ap_clk) disable iff (!ok1)
      take |=> dst_TVALID && dst_TKEEP == $past(src_TKEEP) && dst_TLAST == $past(src_TLAST))
    else $error("add_const_sva a_beat_latency: a src beat is not on dst the next cycle");
  a_no_spurious: assert property (@(posedge ap_clk) disable iff (!ok1)
      !take && !dst_wait |=> !dst_TVALID)
    else $error("add_const_sva a_no_spurious: a dst beat without a src beat");

  c_src_waits: cover property (@(posedge ap_clk) disable iff (!ok0)
      src_TVALID && !src_TREADY && !ap_idle);                   // src held back by dst
  c_src_last_waits: cover property (@(posedge ap_clk) disable iff (!ok0)
      src_TVALID && src_TLAST && !src_TREADY && !ap_idle);

endmodule

bind add_const add_const_sva #(.W(W)) u_add_const_sva (.*);

`default_nettype wire
