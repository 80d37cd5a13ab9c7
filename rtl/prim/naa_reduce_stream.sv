// naa_reduce_stream: the stream FSM of a kernel that reduces one src packet to one dst beat
// (crc32, sum_u64: docs/rtl/kernel-shell.md "Built-in kernels"). It owns the ap_ctrl_hs handshake
// (naa_kernel_ctrl), src_TREADY and the dst register; the kernel owns its accumulator:
// - clear_o: the call is accepted at this edge (the accumulator restarts);
// - take_o: a src beat moves at this edge (src_TLAST tells the accumulator it is the last);
// - result_valid_i / result_i: the accumulator's result, one cycle, any number of cycles after
//   the last beat was taken (its pipeline's latency). The result beat then waits on dst (ResultBytes
//   bytes little-endian, TKEEP = ResultBytes ones, TLAST = 1); the call ends when it is taken.
// src_TREADY is high while the call runs until its last beat is taken.
`default_nettype none

module naa_reduce_stream #(
  parameter int unsigned W           = 64,  // bytes per beat
  parameter int unsigned ResultBytes = 4    // the result's bytes (<= W)
) (
  input  logic                       ap_clk,
  input  logic                       ap_rst_n,
  input  logic                       ap_start,
  output logic                       ap_done,
  output logic                       ap_idle,
  output logic                       ap_ready,

  input  logic                       src_TVALID,
  input  logic                       src_TLAST,
  output logic                       src_TREADY,

  output logic [8*W-1:0]             dst_TDATA,
  output logic [W-1:0]               dst_TKEEP,
  output logic                       dst_TLAST,
  output logic                       dst_TVALID,
  input  logic                       dst_TREADY,

  output logic                       clear_o,
  output logic                       take_o,
  input  logic                       result_valid_i,
  input  logic [8*ResultBytes-1:0]   result_i
);

  logic run, took_last_q, dst_valid_q;
  logic [8*ResultBytes-1:0] result_q;

  naa_kernel_ctrl u_ctrl (
    .clk_i(ap_clk), .rst_ni(ap_rst_n), .ap_start, .ap_ready, .ap_idle, .ap_done,
    .load_o(clear_o), .run_o(run), .finish_i(dst_TVALID && dst_TREADY)
  );

  assign src_TREADY = run && !took_last_q;
  assign take_o     = src_TVALID && src_TREADY;

  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      took_last_q <= 1'b0;
      dst_valid_q <= 1'b0;
    end else begin
      if (clear_o) begin
        took_last_q <= 1'b0;
      end else if (take_o && src_TLAST) begin
        took_last_q <= 1'b1;
      end
      if (result_valid_i) begin
        dst_valid_q <= 1'b1;
      end else if (dst_TREADY) begin
        dst_valid_q <= 1'b0;
      end
    end
  end

  // Datapath register: no reset (meaningful only while dst_TVALID is high).
  always_ff @(posedge ap_clk) begin
    if (result_valid_i) result_q <= result_i;
  end

  assign dst_TVALID = dst_valid_q;
  assign dst_TDATA  = {{(8*W-8*ResultBytes){1'b0}}, result_q};
  assign dst_TKEEP  = {{(W-ResultBytes){1'b0}}, {ResultBytes{1'b1}}};
  assign dst_TLAST  = 1'b1;

endmodule

`default_nettype wire
