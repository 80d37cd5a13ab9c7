// sum_u64: the 64-bit sum of each packet of a stream read as little-endian uint32 elements
// (PROTOCOL.md 5.3, fn 5: out0 = sum of in0's uint32 elements; trailing bytes that do not fill an
// element are ignored). rtl/sum_u64/README.md.
//
// Input: a valid/ready stream of W bytes per beat (W a multiple of 4, 8..64). Lane i of a beat
// (bytes 4i..4i+3) is added when its four keep bits are all set; a partial lane adds nothing, so
// a packet of full beats and a partial last beat sums exactly the kernel's elements. A beat with
// keep = 0 adds nothing (a lone keep = 0, last = 1 beat is the empty packet, sum 0).
// Output: one beat per packet, one cycle after its last input beat is accepted: the sum
// little-endian in bytes 0..7 (keep = 0xFF, last = 1, other bytes 0). While the result waits for
// out_ready_i no input is accepted unless it is taken in the same cycle
// (in_ready_o = state is Accumulate || out_ready_i).
//
// Build-time define NAA_SUM_U64_BROKEN: a deliberately wrong variant (the carry out of bit 31 of
// the accumulator is dropped), used to prove that lockstep catches it.
`default_nettype none

module sum_u64 #(
  parameter int unsigned W = 64  // bytes per beat
) (
  input  logic           clk_i,
  input  logic           rst_ni,

  input  logic           in_valid_i,
  output logic           in_ready_o,
  input  logic [8*W-1:0] in_data_i,
  input  logic [W-1:0]   in_keep_i,
  input  logic           in_last_i,

  output logic           out_valid_o,
  input  logic           out_ready_i,
  output logic [8*W-1:0] out_data_o,
  output logic [W-1:0]   out_keep_o,
  output logic           out_last_o
);

  if (W < 8 || W > 64 || (W % 4) != 0) begin : gen_w_check
    $fatal(1, "sum_u64: W must be a multiple of 4 in 8..64 (the 8-byte sum is one beat), got %0d",
           W);
  end

  localparam int unsigned Lanes = W / 4;

  typedef enum logic {
    StAccumulate = 1'b0,  // taking beats of a packet
    StResult = 1'b1       // the sum of the last packet waits on the output
  } state_e;

  state_e      state_d, state_q;
  logic [63:0] sum_q;     // running sum of the current packet
  logic [63:0] result_q;  // sum of the last packet
  logic [63:0] beat_sum;  // the whole lanes of the input beat (at most 16 x (2^32 - 1) < 2^36)
  logic [63:0] sum_next;
  logic        in_fire;

  assign in_ready_o = (state_q == StAccumulate) || out_ready_i;
  assign in_fire    = in_valid_i && in_ready_o;

  always_comb begin
    beat_sum = '0;
    for (int unsigned i = 0; i < Lanes; i++) begin
      if (&in_keep_i[4*i +: 4]) beat_sum = beat_sum + 64'(in_data_i[32*i +: 32]);
    end
  end

`ifdef NAA_SUM_U64_BROKEN
  // Deliberate bug: the low word wraps, its carry never reaches bit 32.
  assign sum_next = {sum_q[63:32] + beat_sum[63:32], sum_q[31:0] + beat_sum[31:0]};
`else
  assign sum_next = sum_q + beat_sum;
`endif

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StAccumulate: ;
      StResult: begin
        if (out_ready_i) state_d = StAccumulate;
      end
      default: state_d = StAccumulate;
    endcase
    if (in_fire && in_last_i) state_d = StResult;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StAccumulate;
      sum_q   <= '0;
    end else begin
      state_q <= state_d;
      if (in_fire) sum_q <= in_last_i ? '0 : sum_next;
    end
  end

  // Datapath register: no reset (meaningful only while out_valid_o is high).
  always_ff @(posedge clk_i) begin
    if (in_fire && in_last_i) result_q <= sum_next;
  end
  assign out_valid_o = (state_q == StResult);
  assign out_data_o  = {{(8*W-64){1'b0}}, result_q};
  assign out_keep_o  = {{(W-8){1'b0}}, 8'hFF};
  assign out_last_o  = 1'b1;

  // The valid/ready rules on both stream ports.
  naa_stream_assert #(.PayloadBits(9 * W + 1), .Port("sum_u64.in")) u_in_assert (
    .clk_i, .rst_ni, .valid_i(in_valid_i), .ready_i(in_ready_o),
    .payload_i({in_data_i, in_keep_i, in_last_i})
  );
  naa_stream_assert #(.PayloadBits(9 * W + 1), .Port("sum_u64.out")) u_out_assert (
    .clk_i, .rst_ni, .valid_i(out_valid_o), .ready_i(out_ready_i),
    .payload_i({out_data_o, out_keep_o, out_last_o})
  );

endmodule

`default_nettype wire
