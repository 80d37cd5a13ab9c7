// vadd_i32_sva: vadd_i32's port contract as concurrent assertions, and its covers
// (rtl/vadd_i32/README.md; docs/rtl/README.md "Assertions"). The kernel contract every built-in
// keeps is rtl/kernel_shell/naa_kernel_sva.sv, instantiated here with two src packets (in0, in1);
// this adds vadd_i32's own (README "Behaviour", "Timing"): each in1 beat taken while out0 is not
// complete is on dst the next cycle (one register stage), no dst beat otherwise; ap_return is 0, or
// 0x10 exactly when in0 is larger than the buffer (MaxBytes), and then out0 is empty. Bound to
// every vadd_i32 instance by the `bind` at the end (simulation and lint only, never synthesis).
// Test rtl_sva (testbench/rtl/test_sva_kernels.cpp) makes every assertion fire on a trace that
// breaks it.
`default_nettype none

module vadd_i32_sva #(
  parameter int unsigned W        = 64,
  parameter int unsigned MaxBytes = 1048576
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

  localparam logic [31:0] RcTooBig = 32'h10;

  naa_kernel_sva #(.W(W), .SrcPackets(2)) u_kernel_sva (.*);

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

  // --- Monitors: which src packet a beat belongs to, in0's bytes, out0's bytes and end.
  logic        load, take, give, dst_wait, take_in1, out_closed;
  logic [6:0]  src_count, dst_count;  // bytes of a beat (a 33-bit cast of $countones came out
                                      // wrong in Verilator 5.006)
  assign src_count = 7'($countones(src_TKEEP));
  assign dst_count = 7'($countones(dst_TKEEP));
  logic [31:0] in0_bytes, dst_bytes;   // in0 beyond 4 GiB: not a case of the tests
  logic        in1_q;       // in0's last beat was taken in this call
  logic        out_last_q;  // out0's last beat has been on dst in this call
  logic [31:0] in0_bytes_q, dst_bytes_q;
  assign load       = ap_start && ap_ready;
  assign take       = src_TVALID && src_TREADY;
  assign give       = dst_TVALID && dst_TREADY;
  assign dst_wait   = dst_TVALID && !dst_TREADY;
  assign take_in1   = take && in1_q;
  assign out_closed = out_last_q || (dst_TVALID && dst_TLAST);
  assign in0_bytes  = in0_bytes_q + 32'(src_count);
  assign dst_bytes  = dst_bytes_q + 32'(dst_count);
  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      in1_q       <= 1'b0;
      out_last_q  <= 1'b0;
      in0_bytes_q <= '0;
      dst_bytes_q <= '0;
    end else if (load) begin
      in1_q       <= 1'b0;
      out_last_q  <= 1'b0;
      in0_bytes_q <= '0;
      dst_bytes_q <= '0;
    end else begin
      if (take && !in1_q) begin
        in0_bytes_q <= in0_bytes;
        if (src_TLAST) in1_q <= 1'b1;
      end
      if (give) dst_bytes_q <= dst_bytes;
      if (dst_TVALID && dst_TLAST) out_last_q <= 1'b1;
    end
  end

  a_out0_latency: assert property (@(posedge ap_clk) disable iff (!ok1)
      take_in1 && !out_closed |=> dst_TVALID)
    else $error("vadd_i32_sva a_out0_latency: an in1 beat is not on dst the next cycle");
  a_no_spurious: assert property (@(posedge ap_clk) disable iff (!ok1)
      !(take_in1 && !out_closed) && !dst_wait |=> !dst_TVALID)
    else $error("vadd_i32_sva a_no_spurious: a dst beat without an in1 beat");
  a_return: assert property (@(posedge ap_clk) disable iff (!ok0)
      ap_done |-> (ap_return == RcTooBig) == (in0_bytes_q > 32'(MaxBytes))
                  && (ap_return == 32'd0 || ap_return == RcTooBig))
    else $error("vadd_i32_sva a_return: ap_return is not 0x10 exactly for an in0 over MaxBytes");
  a_refused_empty: assert property (@(posedge ap_clk) disable iff (!ok0)
      ap_done && ap_return == RcTooBig |-> dst_bytes_q == '0)
    else $error("vadd_i32_sva a_refused_empty: out0 of a refused call is not empty");

  c_src_waits: cover property (@(posedge ap_clk) disable iff (!ok0)
      src_TVALID && !src_TREADY && !ap_idle);                   // in1 held back by dst
  c_in1_dropped: cover property (@(posedge ap_clk) disable iff (!ok0)
      take_in1 && out_closed);                                  // in1 longer than out0
  c_out0_empty: cover property (@(posedge ap_clk) disable iff (!ok0)
      dst_TVALID && dst_TLAST && dst_TKEEP == '0);
  c_in0_max: cover property (@(posedge ap_clk) disable iff (!ok0)
      take && !in1_q && src_TLAST && in0_bytes == 32'(MaxBytes));  // a full buffer
  c_refused: cover property (@(posedge ap_clk) disable iff (!ok0)
      ap_done && ap_return == RcTooBig);                        // in0 over MaxBytes

endmodule

bind vadd_i32 vadd_i32_sva #(.W(W), .MaxBytes(MaxBytes)) u_vadd_i32_sva (.*);

`default_nettype wire
