// crc32: the kernel crc32 of PROTOCOL.md 5.3 (fn 6): out0 = zlib CRC-32 of in0, 4 bytes
// little-endian (reflected polynomial 0xEDB88320, init 0xFFFFFFFF, final xor 0xFFFFFFFF: the
// same CRC as the ICRC of PROTOCOL.md 2). rtl/crc32/README.md.
//
// Kernel ports (docs/rtl/kernel-shell.md): ap_ctrl_hs, src = in0 as one packet, dst = one beat
// with the CRC in bytes 0..3 (TKEEP = 0xF, TLAST = 1), ap_return = 0. The stream FSM is the one
// crc32 and sum_u64 share (rtl/prim/naa_reduce_stream.sv).
//
// Timing (issue 24: at most 8 LUT levels at W = 64, docs/rtl/synthesis.md): every beat but the
// last is full (the kernel contract), so a beat folds into the register through one constant
// XOR matrix of 8W + 32 inputs (crc32_pkg::fold, about 4 LUT levels). The last beat, n bytes
// with n any of 0..W, goes through a pipeline of Log2W + 1 stages instead of the chain of
// matrices it needs in one cycle: stage s folds W >> s bytes when bit Log2W - s of n is set (the
// binary digits of n, largest first). The CRC appears Log2W + 1 cycles after the last beat is
// taken and is on dst the cycle after.
//
// Build-time define NAA_CRC32_BROKEN: a deliberately wrong variant (the one-byte stage of the
// last-beat pipeline is skipped), which the kernel testbench must catch.
`default_nettype none

module crc32 #(
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

  if (W < 4 || W > 64 || (W & (W - 1)) != 0) begin : gen_w_check
    $fatal(1, "crc32: W must be a power of two in 4..64 (crc32_pkg folds up to 64 bytes), got %0d",
           W);
  end

  localparam int unsigned Log2W = $clog2(W);
  localparam logic [31:0] CrcInit = 32'hFFFFFFFF;

  logic           clear, take;
  logic [31:0]    crc_q;       // running register over the packet's full beats

  // The last beat's pipeline: stage s holds the register, the bytes still to fold (low first) and
  // the byte count; stage 0 (tail0_*) is loaded when the last beat is taken, stage s = 1..Log2W
  // is gen_tail[s] below, stage Log2W holds the CRC. One set of variables per stage, written by
  // its own process (Yosys reads no arrays written from several processes), not slices of flat
  // vectors written in a loop: Verilator 5.006 gave such a vector a shadow copy of every stage
  // (3,584 bits at W = 64) that it zeroed, filled and wrote back at every edge (issue 31).
  localparam int unsigned NBits = Log2W + 1;
  logic [Log2W:0]   tail_valid_q;
  logic [31:0]      tail0_crc_q;
  logic [8*W-1:0]   tail0_rest_q;
  logic [NBits-1:0] tail0_n_q;
  logic [31:0]      tail_crc;  // stage Log2W's register: the raw CRC

  naa_reduce_stream #(.W(W), .ResultBytes(4)) u_stream (
    .ap_clk, .ap_rst_n, .ap_start, .ap_done, .ap_idle, .ap_ready,
    .src_TVALID, .src_TLAST, .src_TREADY,
    .dst_TDATA, .dst_TKEEP, .dst_TLAST, .dst_TVALID, .dst_TREADY,
    .clear_o(clear), .take_o(take),
    .result_valid_i(tail_valid_q[Log2W]), .result_i(~tail_crc)
  );

  assign ap_return = 32'd0;  // crc32 cannot fail once called (the engine checked the regions)

  // The pipeline's valid bits (reset: a call cut short leaves none behind).
  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      tail_valid_q <= '0;
    end else begin
      tail_valid_q <= {tail_valid_q[Log2W-1:0], take && src_TLAST};
    end
  end

  // Datapath registers: no reset. crc_q is loaded with CrcInit by the call's clear (and after
  // each packet's last beat) before a beat reads it; the pipeline's registers are written with
  // the packet they describe. The beat's fold and byte count are computed here, in the clocked
  // process, and not by continuous assignments from the ports: Verilator evaluates an
  // assignment from an input on every eval() (twice per cycle, and again after crc_q changes),
  // this only at the edge that takes a beat (issue 31; the same logic for synthesis).
  //
  // Stage 0: the first chunk (W bytes) is the whole beat, folded already when n = W (stages
  // 1..Log2W: gen_tail below).
  always_ff @(posedge ap_clk) begin
    if (take) begin : beat
      logic [31:0]    full_fold;  // crc_q advanced over the whole beat
      logic [Log2W:0] count;      // the bytes of the beat (TKEEP is a prefix)
      full_fold = crc32_pkg::fold(Log2W, crc_q, 512'(src_TDATA));
      if (src_TLAST) begin
        count = ($bits(count))'($countones(src_TKEEP));
        crc_q        <= CrcInit;
        tail0_crc_q  <= count[Log2W] ? full_fold : crc_q;
        tail0_rest_q <= src_TDATA;
        tail0_n_q    <= count;
      end else begin
        crc_q <= full_fold;
      end
    end
    if (clear) crc_q <= CrcInit;
  end

  // Stages 1..Log2W: stage s folds the next W >> s bytes if bit Log2W - s of n is set; each is one
  // constant matrix, and each moves only when the stage before it holds the last beat.
  for (genvar s = 1; s <= Log2W; s++) begin : gen_tail
    logic [31:0]      stage_crc_q;   // this stage's register, bytes and byte count
    logic [8*W-1:0]   stage_rest_q;
    logic [NBits-1:0] stage_n_q;
    logic [31:0]      prev_crc;  // the stage before
    logic [8*W-1:0]   prev_rest;
    logic [NBits-1:0] prev_n;
    if (s == 1) begin : gen_from_first
      assign prev_crc  = tail0_crc_q;
      assign prev_rest = tail0_rest_q;
      assign prev_n    = tail0_n_q;
    end else begin : gen_from_stage
      assign prev_crc  = gen_tail[s-1].stage_crc_q;
      assign prev_rest = gen_tail[s-1].stage_rest_q;
      assign prev_n    = gen_tail[s-1].stage_n_q;
    end
    always_ff @(posedge ap_clk) begin
      if (tail_valid_q[s-1]) begin
        stage_n_q <= prev_n;
`ifdef NAA_CRC32_BROKEN
        // Deliberate bug: the last stage (one byte) is skipped, so packets of an odd length end
        // one byte short.
        if (prev_n[Log2W - s] && s != Log2W) begin
`else
        if (prev_n[Log2W - s]) begin
`endif
          stage_crc_q  <= crc32_pkg::fold(Log2W - s, prev_crc, 512'(prev_rest));
          stage_rest_q <= prev_rest >> (8 << (Log2W - s));
        end else begin
          stage_crc_q  <= prev_crc;
          stage_rest_q <= prev_rest;
        end
      end
    end
  end
  assign tail_crc = gen_tail[Log2W].stage_crc_q;

endmodule

`default_nettype wire
