// add_const: adds the byte user[7:0] (mod 256) to every byte of a packet: kernels add1 and add2
// of PROTOCOL.md 5.3 (naa-sim calls it with user = 1 for add1 and 2 for add2, once per region, in
// place: docs/rtl/kernel-shell.md "Regions"). rtl/add_const/README.md.
//
// Kernel ports (docs/rtl/kernel-shell.md): ap_ctrl_hs (rtl/prim/naa_kernel_ctrl.sv), src = one
// packet, dst = the same packet with the constant added (TKEEP and TLAST as on src), ap_return =
// 0. One register stage (rtl/prim/naa_stream_reg.sv): a beat per cycle, latency 1 cycle;
// src_TREADY = the register is free or being emptied, until the packet's last beat is taken.
// user[7:0] is latched when the call is accepted. Output bytes outside TKEEP are 0.
//
// Build-time define NAA_ADD_CONST_BROKEN: a deliberately wrong variant (the constant of the first
// call sticks), which the kernel testbench must catch.
`default_nettype none

module add_const #(
  parameter int unsigned W = 64  // bytes per beat
) (
  input  logic           ap_clk,
  input  logic           ap_rst_n,
  input  logic           ap_start,
  output logic           ap_done,
  output logic           ap_idle,
  output logic           ap_ready,
  output logic [31:0]    ap_return,
  input  logic [23:0]    user,

  input  logic [8*W-1:0] src_TDATA,
  input  logic [W-1:0]   src_TKEEP,
  input  logic           src_TLAST,
  input  logic           src_TVALID,
  output logic           src_TREADY,

  output logic [8*W-1:0] dst_TDATA,
  output logic [W-1:0]   dst_TKEEP,
  output logic           dst_TLAST,
  output logic           dst_TVALID,
  input  logic           dst_TREADY
);

  if (W < 1) begin : gen_w_check
    $fatal(1, "add_const: W must be at least 1, got %0d", W);
  end

  logic           load, run, reg_ready, took_last_q, take;
  logic [7:0]     addend_q;
  logic [8*W-1:0] sum;

  naa_kernel_ctrl u_ctrl (
    .clk_i(ap_clk), .rst_ni(ap_rst_n), .ap_start, .ap_ready, .ap_idle, .ap_done,
    .load_o(load), .run_o(run), .finish_i(dst_TVALID && dst_TREADY && dst_TLAST)
  );

  assign ap_return  = 32'd0;
  assign src_TREADY = run && reg_ready && !took_last_q;
  assign take       = src_TVALID && src_TREADY;

  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      took_last_q <= 1'b0;
    end else if (load) begin
      took_last_q <= 1'b0;
    end else if (take && src_TLAST) begin
      took_last_q <= 1'b1;
    end
  end

  // The call's scalar argument: no reset (meaningful only while the call runs).
`ifdef NAA_ADD_CONST_BROKEN
  // Deliberate bug: the addend is latched only while it is still 0 (after power-up), so every
  // call adds the first call's constant.
  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      addend_q <= 8'd0;
    end else if (load && addend_q == 8'd0) begin
      addend_q <= user[7:0];
    end
  end
`else
  always_ff @(posedge ap_clk) begin
    if (load) addend_q <= user[7:0];
  end
`endif

  always_comb begin
    for (int unsigned i = 0; i < W; i++) begin
      sum[8*i +: 8] = src_TKEEP[i] ? src_TDATA[8*i +: 8] + addend_q : 8'd0;
    end
  end

  naa_stream_reg #(.W(W)) u_out_reg (
    .clk_i(ap_clk), .rst_ni(ap_rst_n),
    .ready_o(reg_ready), .load_i(take), .data_i(sum), .keep_i(src_TKEEP), .last_i(src_TLAST),
    .out_valid_o(dst_TVALID), .out_ready_i(dst_TREADY), .out_data_o(dst_TDATA),
    .out_keep_o(dst_TKEEP), .out_last_o(dst_TLAST)
  );

endmodule

`default_nettype wire
