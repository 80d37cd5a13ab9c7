// sum_u64: the kernel sum_u64 of PROTOCOL.md 5.3 (fn 5): out0 = the 64-bit sum of in0 read as
// little-endian uint32 elements (trailing bytes that do not fill an element are ignored), 8 bytes
// little-endian. rtl/sum_u64/README.md.
//
// Kernel ports (docs/rtl/kernel-shell.md): ap_ctrl_hs, src = in0 as one packet, dst = one beat
// with the sum in bytes 0..7 (TKEEP = 0xFF, TLAST = 1), ap_return = 0. The stream FSM is the one
// crc32 and sum_u64 share (rtl/prim/naa_reduce_stream.sv).
//
// Lane i of a beat (bytes 4i..4i+3) counts when its four TKEEP bits are set, so the partial last
// beat adds exactly its whole elements. Timing (issue 24: at most 8 LUT levels at W = 64,
// docs/rtl/synthesis.md): the beat's lanes are added in a pipeline, two adder levels per stage:
// stage 1 sums groups of four lanes, stage 2 the (up to) four group sums, stage 3 adds that into
// the 64-bit accumulator. The sum of a packet appears 3 cycles after its last beat is taken and is
// on dst the cycle after.
//
// Build-time define NAA_SUM_U64_BROKEN: a deliberately wrong variant (the carry out of bit 31 of
// the accumulator is dropped), used to prove that the testbench and lockstep catch it.
`default_nettype none

module sum_u64 #(
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

  if (W < 8 || W > 64 || (W % 4) != 0) begin : gen_w_check
    $fatal(1, "sum_u64: W must be a multiple of 4 in 8..64 (the 8-byte sum is one beat), got %0d",
           W);
  end

  localparam int unsigned Lanes  = W / 4;
  localparam int unsigned Groups = (Lanes + 3) / 4;  // 1..4

  logic        clear, take;
  // Group g in bits [34g +: 34], four lanes each (< 2^34); flat vectors because Yosys reads no
  // whole-array assignment (docs/rtl/synthesis.md).
  logic [34*Groups-1:0] group_sum;
  logic [34*Groups-1:0] group_q;
  logic        s1_valid_q, s1_last_q;
  logic [35:0] beat_sum;            // the whole beat (< 2^36)
  logic [35:0] beat_q;
  logic        s2_valid_q, s2_last_q;
  logic [63:0] acc_q;               // the packet's beats before the one in stage 2
  logic [63:0] acc_next;
  logic [63:0] result_q;
  logic        result_valid_q;

  naa_reduce_stream #(.W(W), .ResultBytes(8)) u_stream (
    .ap_clk, .ap_rst_n, .ap_start, .ap_done, .ap_idle, .ap_ready,
    .src_TVALID, .src_TLAST, .src_TREADY,
    .dst_TDATA, .dst_TKEEP, .dst_TLAST, .dst_TVALID, .dst_TREADY,
    .clear_o(clear), .take_o(take),
    .result_valid_i(result_valid_q), .result_i(result_q)
  );

  assign ap_return = 32'd0;  // sum_u64 cannot fail once called (the engine checked the regions)

  // Stage 1: each group of four lanes, a lane counting only when all its bytes are in the packet.
  always_comb begin
    for (int unsigned g = 0; g < Groups; g++) begin
      group_sum[34*g +: 34] = '0;
      for (int unsigned k = 0; k < 4; k++) begin
        if (4 * g + k < Lanes && &src_TKEEP[4*(4*g+k) +: 4]) begin
          group_sum[34*g +: 34] = group_sum[34*g +: 34] + 34'(src_TDATA[32*(4*g+k) +: 32]);
        end
      end
    end
  end

  // Stage 2: the group sums.
  always_comb begin
    beat_sum = '0;
    for (int unsigned g = 0; g < Groups; g++) begin
      beat_sum = beat_sum + 36'(group_q[34*g +: 34]);
    end
  end

`ifdef NAA_SUM_U64_BROKEN
  // Deliberate bug: the low word wraps, its carry never reaches bit 32.
  assign acc_next = {acc_q[63:32] + 32'(beat_q[35:32]), acc_q[31:0] + beat_q[31:0]};
`else
  assign acc_next = acc_q + 64'(beat_q);
`endif

  // Valid bits and the accumulator (reset: a call cut short leaves nothing in flight).
  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      s1_valid_q     <= 1'b0;
      s2_valid_q     <= 1'b0;
      result_valid_q <= 1'b0;
      acc_q          <= '0;
    end else begin
      s1_valid_q     <= take;
      s2_valid_q     <= s1_valid_q;
      result_valid_q <= s2_valid_q && s2_last_q;
      if (clear || (s2_valid_q && s2_last_q)) begin
        acc_q <= '0;
      end else if (s2_valid_q) begin
        acc_q <= acc_next;
      end
    end
  end

  // Datapath registers: no reset (each is meaningful only with its valid bit).
  always_ff @(posedge ap_clk) begin
    if (take) begin
      group_q   <= group_sum;
      s1_last_q <= src_TLAST;
    end
    if (s1_valid_q) begin
      beat_q    <= beat_sum;
      s2_last_q <= s1_last_q;
    end
    if (s2_valid_q && s2_last_q) result_q <= acc_next;
  end

endmodule

`default_nettype wire
