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
  // the byte count; stage 0 is loaded when the last beat is taken, stage Log2W holds the CRC.
  // Stage s is slice s of flat vectors (Yosys reads no arrays written from several processes).
  localparam int unsigned NBits = Log2W + 1;
  logic [Log2W:0]            tail_valid_q;
  logic [32*(Log2W+1)-1:0]   tail_crc_q;
  logic [8*W*(Log2W+1)-1:0]  tail_rest_q;
  logic [NBits*(Log2W+1)-1:0] tail_n_q;

  naa_reduce_stream #(.W(W), .ResultBytes(4)) u_stream (
    .ap_clk, .ap_rst_n, .ap_start, .ap_done, .ap_idle, .ap_ready,
    .src_TVALID, .src_TLAST, .src_TREADY,
    .dst_TDATA, .dst_TKEEP, .dst_TLAST, .dst_TVALID, .dst_TREADY,
    .clear_o(clear), .take_o(take),
    .result_valid_i(tail_valid_q[Log2W]), .result_i(~tail_crc_q[32*Log2W +: 32])
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
  // Stage 0: the first chunk (W bytes) is the whole beat, folded already when n = W. Stage s
  // (1..Log2W): folds the next W >> s bytes if bit Log2W - s of n is set. One process for all
  // stages (one driver per variable); the loop unrolls, so each stage is one constant matrix.
  always_ff @(posedge ap_clk) begin
    if (take) begin : beat
      logic [31:0]    full_fold;  // crc_q advanced over the whole beat
      logic [Log2W:0] count;      // the bytes of the beat (TKEEP is a prefix)
      full_fold = crc32_pkg::fold(Log2W, crc_q, 512'(src_TDATA));
      if (src_TLAST) begin
        count = ($bits(count))'($countones(src_TKEEP));
        crc_q                 <= CrcInit;
        tail_crc_q[0 +: 32]   <= count[Log2W] ? full_fold : crc_q;
        tail_rest_q[0 +: 8*W] <= src_TDATA;
        tail_n_q[0 +: NBits]  <= count;
      end else begin
        crc_q <= full_fold;
      end
    end
    if (clear) crc_q <= CrcInit;
    for (int unsigned s = 1; s <= Log2W; s++) begin
      if (tail_valid_q[s-1]) begin
        tail_n_q[NBits*s +: NBits] <= tail_n_q[NBits*(s-1) +: NBits];
`ifdef NAA_CRC32_BROKEN
        // Deliberate bug: the last stage (one byte) is skipped, so packets of an odd length end
        // one byte short.
        if (tail_n_q[NBits*(s-1) + Log2W - s] && s != Log2W) begin
`else
        if (tail_n_q[NBits*(s-1) + Log2W - s]) begin
`endif
          tail_crc_q[32*s +: 32] <= crc32_pkg::fold(Log2W - s, tail_crc_q[32*(s-1) +: 32],
                                                    512'(tail_rest_q[8*W*(s-1) +: 8*W]));
          tail_rest_q[8*W*s +: 8*W] <= tail_rest_q[8*W*(s-1) +: 8*W] >> (8 << (Log2W - s));
        end else begin
          tail_crc_q[32*s +: 32]    <= tail_crc_q[32*(s-1) +: 32];
          tail_rest_q[8*W*s +: 8*W] <= tail_rest_q[8*W*(s-1) +: 8*W];
        end
      end
    end
  end

endmodule

`default_nettype wire
