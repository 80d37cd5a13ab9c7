// xor_const: dst = src XOR user[7:0], byte by byte, one packet in and one out per call. A kernel
// for naa-sim in plain Verilog-2005 (IEEE 1364-2005: no SystemVerilog), with exactly the kernel
// ports of docs/rtl/kernel-shell.md: what Vitis HLS generates for ap_ctrl_hs with an
// hls::stream<ap_axiu<8W,0,0,0>> src and dst, a scalar `user` and an int return.
//
// Behaviour, cycle by cycle (the C++ model xor_const_model.cpp is the same):
// - Idle: ap_idle = 1; ap_ready = ap_start: the call is accepted in the cycle it is offered and
//   user[7:0] is latched then.
// - Run: one output register; src_TREADY = the register is free or being emptied, until the
//   packet's last beat is taken. A beat per cycle, latency one cycle. TKEEP and TLAST pass
//   through; bytes outside TKEEP are 0.
// - Done: the cycle after the last dst beat is taken: ap_done = 1 for one cycle, ap_return = 0.
`default_nettype none

module xor_const #(
  parameter BYTES = 64  // bytes per beat: naa_add_kernel WIDTH
) (
  input  wire               ap_clk,
  input  wire               ap_rst_n,
  input  wire               ap_start,
  output wire               ap_done,
  output wire               ap_idle,
  output wire               ap_ready,
  output wire [31:0]        ap_return,
  input  wire [23:0]        user,

  input  wire [8*BYTES-1:0] src_TDATA,
  input  wire [BYTES-1:0]   src_TKEEP,
  input  wire               src_TLAST,
  input  wire               src_TVALID,
  output wire               src_TREADY,

  output reg  [8*BYTES-1:0] dst_TDATA,
  output reg  [BYTES-1:0]   dst_TKEEP,
  output reg                dst_TLAST,
  output reg                dst_TVALID,
  input  wire               dst_TREADY
);

  localparam [1:0] ST_IDLE = 2'd0, ST_RUN = 2'd1, ST_DONE = 2'd2;

  reg  [1:0]         state;
  reg                took_last;  // the packet's last beat is in: src_TREADY stays low
  reg  [7:0]         key;        // user[7:0] of the running call
  reg  [8*BYTES-1:0] mixed;
  wire               take;
  wire               finish;
  integer            i;

  assign ap_idle    = (state == ST_IDLE);
  assign ap_ready   = (state == ST_IDLE) && ap_start;
  assign ap_done    = (state == ST_DONE);
  assign ap_return  = 32'd0;
  assign src_TREADY = (state == ST_RUN) && !took_last && (!dst_TVALID || dst_TREADY);
  assign take       = src_TVALID && src_TREADY;
  assign finish     = dst_TVALID && dst_TREADY && dst_TLAST;

  always @(*) begin
    for (i = 0; i < BYTES; i = i + 1)
      mixed[8*i +: 8] = src_TKEEP[i] ? (src_TDATA[8*i +: 8] ^ key) : 8'd0;
  end

  // Control: reset (asynchronous, active low) for the state and the handshakes.
  always @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      state      <= ST_IDLE;
      took_last  <= 1'b0;
      dst_TVALID <= 1'b0;
    end else begin
      case (state)
        ST_IDLE: if (ap_start) state <= ST_RUN;
        ST_RUN:  if (finish) state <= ST_DONE;
        default: state <= ST_IDLE;
      endcase
      if (ap_ready) took_last <= 1'b0;
      else if (take && src_TLAST) took_last <= 1'b1;
      if (take) dst_TVALID <= 1'b1;
      else if (dst_TREADY) dst_TVALID <= 1'b0;
    end
  end

  // Datapath: no reset (meaningful only under dst_TVALID, and key only while a call runs).
  always @(posedge ap_clk) begin
    if (ap_ready) key <= user[7:0];
    if (take) begin
      dst_TDATA <= mixed;
      dst_TKEEP <= src_TKEEP;
      dst_TLAST <= src_TLAST;
    end
  end

endmodule

`default_nettype wire
