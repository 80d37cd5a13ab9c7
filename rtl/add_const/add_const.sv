// add_const: adds a byte constant (mod 256) to every byte of a stream (PROTOCOL.md 5.3, kernels
// add1 and add2: the kernel engine drives addend_i = 1 for fn 1 and 2 for fn 2).
// rtl/add_const/README.md.
//
// Streams are valid/ready (a beat moves at an edge where valid && ready), W bytes per beat,
// byte i in bits [8i+7:8i], keep[i] = byte i belongs to the packet, last on the final beat.
// One register stage (naa_stream_reg): latency 1 cycle, one beat per cycle. in_ready_o = !out_valid_o ||
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
  logic [8*W-1:0] sum;

  assign in_fire = in_valid_i && in_ready_o;

  always_comb begin
    for (int unsigned i = 0; i < W; i++) begin
      sum[8*i +: 8] = in_keep_i[i] ? in_data_i[8*i +: 8] + addend_i : 8'd0;
    end
  end

  // The output register stage (rtl/prim/naa_stream_reg.sv): in_ready_o is its ready_o.
  naa_stream_reg #(.W(W), .Port("add_const.out")) u_out_reg (
    .clk_i, .rst_ni,
    .ready_o(in_ready_o), .load_i(in_fire), .data_i(sum), .keep_i(in_keep_i), .last_i(in_last_i),
    .out_valid_o, .out_ready_i, .out_data_o, .out_keep_o, .out_last_o
  );

  // The valid/ready rules on the input port (the out port is checked in naa_stream_reg).
  naa_stream_assert #(.PayloadBits(9 * W + 9), .Port("add_const.in")) u_in_assert (
    .clk_i, .rst_ni, .valid_i(in_valid_i), .ready_i(in_ready_o),
    .payload_i({in_data_i, in_keep_i, in_last_i, addend_i})
  );

endmodule

`default_nettype wire
