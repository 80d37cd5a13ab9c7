// vadd_i32: out[i] = a[i] + b[i] over little-endian 32-bit lanes, wrapping (PROTOCOL.md 5.3, fn 4).
// docs/rtl/vadd_i32.md.
//
// Two input streams are joined beat by beat: a beat moves on a, on b and into the output register
// at the same edge, when both inputs are valid and the output register is free or being emptied
// (a_ready_o = b_valid_i && free, b_ready_o = a_valid_i && free; ready depends on the other
// input's valid, never on its own). The caller feeds a and b with the same beat structure; keep
// of the result is a_keep & b_keep and last is a_last | b_last, so a mismatch cannot make a packet
// run on forever. Bytes whose keep bit is 0 count as 0 in the sum and are 0 on the output.
// Latency 1 cycle, one beat per cycle. W bytes per beat, W a multiple of 4.
`default_nettype none

module vadd_i32 #(
  parameter int unsigned W = 64  // bytes per beat
) (
  input  logic           clk_i,
  input  logic           rst_ni,

  input  logic           a_valid_i,
  output logic           a_ready_o,
  input  logic [8*W-1:0] a_data_i,
  input  logic [W-1:0]   a_keep_i,
  input  logic           a_last_i,

  input  logic           b_valid_i,
  output logic           b_ready_o,
  input  logic [8*W-1:0] b_data_i,
  input  logic [W-1:0]   b_keep_i,
  input  logic           b_last_i,

  output logic           out_valid_o,
  input  logic           out_ready_i,
  output logic [8*W-1:0] out_data_o,
  output logic [W-1:0]   out_keep_o,
  output logic           out_last_o
);

  if (W < 4 || W % 4 != 0) begin : gen_w_check
    $fatal(1, "vadd_i32: W must be a positive multiple of 4, got %0d", W);
  end

  localparam int unsigned Lanes = W / 4;

  logic           free, fire;
  logic [8*W-1:0] a_masked, b_masked, sum;
  logic [W-1:0]   keep;
  logic           out_valid_d, out_valid_q;
  logic [8*W-1:0] out_data_d, out_data_q;
  logic [W-1:0]   out_keep_d, out_keep_q;
  logic           out_last_d, out_last_q;

  assign free      = !out_valid_q || out_ready_i;
  assign fire      = a_valid_i && b_valid_i && free;
  assign a_ready_o = b_valid_i && free;
  assign b_ready_o = a_valid_i && free;
  assign keep      = a_keep_i & b_keep_i;

  always_comb begin
    for (int unsigned i = 0; i < W; i++) begin
      a_masked[8*i +: 8] = a_keep_i[i] ? a_data_i[8*i +: 8] : 8'd0;
      b_masked[8*i +: 8] = b_keep_i[i] ? b_data_i[8*i +: 8] : 8'd0;
    end
    for (int unsigned l = 0; l < Lanes; l++) begin
      sum[32*l +: 32] = a_masked[32*l +: 32] + b_masked[32*l +: 32];
    end
  end

  always_comb begin
    out_valid_d = out_valid_q;
    out_data_d  = out_data_q;
    out_keep_d  = out_keep_q;
    out_last_d  = out_last_q;
    if (fire) begin
      out_valid_d = 1'b1;
      out_keep_d  = keep;
      out_last_d  = a_last_i || b_last_i;
      for (int unsigned i = 0; i < W; i++) begin
        out_data_d[8*i +: 8] = keep[i] ? sum[8*i +: 8] : 8'd0;
      end
    end else if (out_ready_i) begin
      out_valid_d = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_valid_q <= 1'b0;
    end else begin
      out_valid_q <= out_valid_d;
    end
  end

  // Datapath registers: no reset (their value is meaningful only while out_valid_o is high).
  always_ff @(posedge clk_i) begin
    out_data_q <= out_data_d;
    out_keep_q <= out_keep_d;
    out_last_q <= out_last_d;
  end

  assign out_valid_o = out_valid_q;
  assign out_data_o  = out_data_q;
  assign out_keep_o  = out_keep_q;
  assign out_last_o  = out_last_q;

endmodule

`default_nettype wire
