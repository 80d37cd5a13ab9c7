// vadd_i32: out[i] = a[i] + b[i] over little-endian 32-bit lanes, wrapping (PROTOCOL.md 5.3, fn 4).
// rtl/vadd_i32/README.md.
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
  logic [8*W-1:0] a_masked, b_masked, sum, out_data;
  logic [W-1:0]   keep;

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
    for (int unsigned i = 0; i < W; i++) begin
      out_data[8*i +: 8] = keep[i] ? sum[8*i +: 8] : 8'd0;
    end
  end

  // The output register stage (rtl/prim/naa_stream_reg.sv): free is its ready_o.
  naa_stream_reg #(.W(W), .Port("vadd_i32.out")) u_out_reg (
    .clk_i, .rst_ni,
    .ready_o(free), .load_i(fire), .data_i(out_data), .keep_i(keep),
    .last_i(a_last_i || b_last_i),
    .out_valid_o, .out_ready_i, .out_data_o, .out_keep_o, .out_last_o
  );

  // The valid/ready rules on both input ports (the out port is checked in naa_stream_reg).
  naa_stream_assert #(.PayloadBits(9 * W + 1), .Port("vadd_i32.a")) u_a_assert (
    .clk_i, .rst_ni, .valid_i(a_valid_i), .ready_i(a_ready_o),
    .payload_i({a_data_i, a_keep_i, a_last_i})
  );
  naa_stream_assert #(.PayloadBits(9 * W + 1), .Port("vadd_i32.b")) u_b_assert (
    .clk_i, .rst_ni, .valid_i(b_valid_i), .ready_i(b_ready_o),
    .payload_i({b_data_i, b_keep_i, b_last_i})
  );

endmodule

`default_nettype wire
