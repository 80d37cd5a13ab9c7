// add_const: adds a byte constant (mod 256) to every byte of a stream (PROTOCOL.md 5.3, kernels
// add1 and add2: the kernel engine drives addend_i = 1 for fn 1 and 2 for fn 2).
// docs/rtl/add_const.md.
//
// Streams are valid/ready (a beat moves at an edge where valid && ready), W bytes per beat,
// byte i in bits [8i+7:8i], keep[i] = byte i belongs to the packet, last on the final beat.
// One register stage: latency 1 cycle, one beat per cycle. in_ready_o = !out_valid_o ||
// out_ready_i (a combinational path from out_ready_i). addend_i is sampled with each beat.
// Output bytes whose keep bit is 0 are 0, so the block never forwards bytes outside the packet.
`default_nettype none

module add_const #(
  parameter int unsigned W = 64  // bytes per beat
) (
  input  logic           clk_i,
  input  logic           rst_ni,

  input  logic           in_valid_i,
  output logic           in_ready_o,
  input  logic [8*W-1:0] in_data_i,
  input  logic [W-1:0]   in_keep_i,
  input  logic           in_last_i,
  input  logic [7:0]     addend_i,

  output logic           out_valid_o,
  input  logic           out_ready_i,
  output logic [8*W-1:0] out_data_o,
  output logic [W-1:0]   out_keep_o,
  output logic           out_last_o
);

  if (W < 1) begin : gen_w_check
    $fatal(1, "add_const: W must be at least 1, got %0d", W);
  end

  logic           in_fire;
  logic           out_valid_d, out_valid_q;
  logic [8*W-1:0] out_data_d, out_data_q;
  logic [W-1:0]   out_keep_d, out_keep_q;
  logic           out_last_d, out_last_q;

  assign in_ready_o = !out_valid_q || out_ready_i;
  assign in_fire    = in_valid_i && in_ready_o;

  always_comb begin
    out_valid_d = out_valid_q;
    out_data_d  = out_data_q;
    out_keep_d  = out_keep_q;
    out_last_d  = out_last_q;
    if (in_fire) begin
      out_valid_d = 1'b1;
      out_keep_d  = in_keep_i;
      out_last_d  = in_last_i;
      for (int unsigned i = 0; i < W; i++) begin
        out_data_d[8*i +: 8] = in_keep_i[i] ? in_data_i[8*i +: 8] + addend_i : 8'd0;
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
