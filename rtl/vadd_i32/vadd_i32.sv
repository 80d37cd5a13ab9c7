// vadd_i32: the kernel vadd_i32 of PROTOCOL.md 5.3 (fn 4): out0[i] = in0[i] + in1[i] over
// little-endian 32-bit lanes, wrapping; n = in0's size rounded down to whole lanes.
// rtl/vadd_i32/README.md.
//
// Kernel ports (docs/rtl/kernel-shell.md): ap_ctrl_hs (rtl/prim/naa_kernel_ctrl.sv), src = in0
// then in1, a packet each (the contract puts the inputs on one stream, in MRSP order), dst = out0
// as one packet of n bytes (an empty packet, one beat with TKEEP = 0, when n = 0).
// in0 is kept in an on-chip buffer of MaxBytes bytes (a beat per entry, written while in0
// streams in, read back one entry ahead while in1 streams in); an in0 larger than the buffer is
// consumed and refused: ap_return = 0x10 (PROTOCOL.md 5.2 kernel-specific code) and out0 empty.
// Phases of a call: A takes in0 (a beat per cycle), one cycle reads the buffer's first entry, B
// takes in1 and gives out0 through one register stage (rtl/prim/naa_stream_reg.sv). in1 beats past
// n are taken and dropped; the call ends when in1's last beat is taken and out0's last beat is.
//
// Build-time define NAA_VADD_I32_BROKEN: a deliberately wrong variant (out0's last beat is always
// full), which the kernel testbench must catch.
`default_nettype none

module vadd_i32 #(
  parameter int unsigned W        = 64,       // bytes per beat
  parameter int unsigned MaxBytes = 1048576   // the in0 buffer (a multiple of W)
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

  if (W < 4 || W % 4 != 0 || W > 64) begin : gen_w_check
    $fatal(1, "vadd_i32: W must be a multiple of 4 in 4..64, got %0d", W);
  end
  if (MaxBytes < W || MaxBytes % W != 0) begin : gen_max_check
    $fatal(1, "vadd_i32: MaxBytes must be a positive multiple of W, got %0d", MaxBytes);
  end

  localparam int unsigned Lanes    = W / 4;
  localparam int unsigned Depth    = MaxBytes / W;
  localparam int unsigned AddrBits = Depth > 1 ? $clog2(Depth) : 1;
  localparam logic [31:0] RcTooBig = 32'h10;

  typedef enum logic [1:0] {
    PhA    = 2'd0,  // taking in0 into the buffer
    PhRead = 2'd1,  // reading the buffer's first entry
    PhB    = 2'd2   // taking in1, giving out0
  } phase_e;

  logic           load, run, reg_ready, take, finish;
  phase_e         phase_q;
  logic [31:0]    beats_a_q;    // in0 beats taken
  logic [31:0]    bytes_a_q;    // in0 bytes taken
  logic           too_big_q;    // in0 did not fit the buffer (set in PhRead)
  logic [31:0]    rem_q;        // out0 bytes from the next in1 beat on (set in PhRead)
  logic           rd_en;        // the buffer's read port reads rd_addr_q into a_q at this edge
  logic [AddrBits-1:0] rd_addr_q;
  logic [8*W-1:0] a_q;          // the buffer entry of the next in1 beat
  logic           out_done_q;   // out0's last beat has been loaded
  logic           out_sent_q;   // ... and taken
  logic           took_last_q;  // in1's last beat has been taken
  logic           give;         // this in1 beat makes an out0 beat
  logic           give_last;
  logic [W-1:0]   give_keep;
  logic [8*W-1:0] sum;
  logic [6:0]     count;        // bytes of the src beat (TKEEP is a prefix)

  logic [8*W-1:0] buffer_q [Depth];

  naa_kernel_ctrl u_ctrl (
    .clk_i(ap_clk), .rst_ni(ap_rst_n), .ap_start, .ap_ready, .ap_idle, .ap_done,
    .load_o(load), .run_o(run), .finish_i(finish)
  );

  assign ap_return  = too_big_q ? RcTooBig : 32'd0;
  assign src_TREADY = run && (phase_q == PhA || (phase_q == PhB && reg_ready && !took_last_q));
  assign take       = src_TVALID && src_TREADY;
  assign count      = 7'($countones(src_TKEEP));
  assign give       = take && phase_q == PhB && !out_done_q;
  assign give_last  = rem_q <= W || src_TLAST;
  assign rd_en      = phase_q == PhRead || (take && phase_q == PhB);
  assign finish     = run && (out_sent_q || (dst_TVALID && dst_TREADY && dst_TLAST))
                          && (took_last_q || (take && phase_q == PhB && src_TLAST));

  always_comb begin
    for (int unsigned i = 0; i < W; i++) begin
`ifdef NAA_VADD_I32_BROKEN
      // Deliberate bug: out0's last beat is always full, so an out0 that does not end on a beat
      // boundary comes back too long.
      give_keep[i] = 1'b1;
`else
      give_keep[i] = 32'(i) < rem_q;
`endif
    end
    for (int unsigned l = 0; l < Lanes; l++) begin
      sum[32*l +: 32] = a_q[32*l +: 32] + src_TDATA[32*l +: 32];
    end
  end

  // The call's state: set up when the call is accepted, no reset (every output it drives is
  // qualified by the call running or ap_done, naa_kernel_ctrl, which reset does clear).
  always_ff @(posedge ap_clk) begin
    if (load) begin
      phase_q     <= PhA;
      beats_a_q   <= '0;
      bytes_a_q   <= '0;
      too_big_q   <= 1'b0;
      rem_q       <= '0;
      rd_addr_q   <= '0;
      out_done_q  <= 1'b0;
      out_sent_q  <= 1'b0;
      took_last_q <= 1'b0;
    end else begin
      if (take && phase_q == PhA) begin
        // Saturates above Depth: "too big" needs only to stay too big.
        if (beats_a_q <= Depth) beats_a_q <= beats_a_q + 32'd1;
        bytes_a_q <= bytes_a_q + 32'(count);
        if (src_TLAST) phase_q <= PhRead;
      end
      // in0 is complete: out0's length, registered (it feeds TKEEP, docs/rtl/synthesis.md).
      if (phase_q == PhRead) begin
        phase_q   <= PhB;
        too_big_q <= beats_a_q > Depth;
        rem_q     <= beats_a_q > Depth ? 32'd0 : {bytes_a_q[31:2], 2'b00};
      end
      if (rd_en) rd_addr_q <= rd_addr_q + AddrBits'(1);
      if (take && phase_q == PhB) begin
        rem_q <= rem_q - W;  // wraps once out0 is done; then unused
        if (src_TLAST) took_last_q <= 1'b1;
      end
      if (give && give_last) out_done_q <= 1'b1;
      if (dst_TVALID && dst_TREADY && dst_TLAST) out_sent_q <= 1'b1;
    end
  end

  // The buffer: written in phase A, read one entry ahead in phase B; one write port and one
  // synchronous read port, so synthesis maps it to block RAM.
  always_ff @(posedge ap_clk) begin
    if (take && phase_q == PhA && beats_a_q < Depth) begin
      buffer_q[beats_a_q[AddrBits-1:0]] <= src_TDATA;
    end
    if (rd_en) a_q <= buffer_q[rd_addr_q];
  end

  naa_stream_reg #(.W(W)) u_out_reg (
    .clk_i(ap_clk), .rst_ni(ap_rst_n),
    .ready_o(reg_ready), .load_i(give), .data_i(sum), .keep_i(give_keep), .last_i(give_last),
    .out_valid_o(dst_TVALID), .out_ready_i(dst_TREADY), .out_data_o(dst_TDATA),
    .out_keep_o(dst_TKEEP), .out_last_o(dst_TLAST)
  );

endmodule

`default_nettype wire
