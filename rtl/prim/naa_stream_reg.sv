// naa_stream_reg: the output register stage of a stream block (add_const, vadd_i32): one beat of
// storage, latency 1 cycle, one beat per cycle. The block computes a beat combinationally from its
// inputs and loads it with load_i in a cycle where ready_o is high (the beat moves in at that
// edge); the register then offers it on out_* until out_ready_i. ready_o = !out_valid_o ||
// out_ready_i (a combinational path from out_ready_i): a full register takes the next beat in the
// cycle it empties. Checks its out port with naa_stream_assert.
`default_nettype none

module naa_stream_reg #(
  parameter int unsigned W    = 64,    // bytes per beat
  parameter              Port = "out"  // the output port's name in assertion messages (a string;
                                       // untyped: Yosys does not read `parameter string`)
) (
  input  logic           clk_i,
  input  logic           rst_ni,

  output logic           ready_o,  // a beat may be loaded this cycle
  input  logic           load_i,   // load data/keep/last at this edge (only while ready_o)
  input  logic [8*W-1:0] data_i,
  input  logic [W-1:0]   keep_i,
  input  logic           last_i,

  output logic           out_valid_o,
  input  logic           out_ready_i,
  output logic [8*W-1:0] out_data_o,
  output logic [W-1:0]   out_keep_o,
  output logic           out_last_o
);

  logic           out_valid_d, out_valid_q;
  logic [8*W-1:0] out_data_q;
  logic [W-1:0]   out_keep_q;
  logic           out_last_q;

  assign ready_o = !out_valid_q || out_ready_i;

  always_comb begin
    out_valid_d = out_valid_q;
    if (load_i) begin
      out_valid_d = 1'b1;
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
    if (load_i) begin
      out_data_q <= data_i;
      out_keep_q <= keep_i;
      out_last_q <= last_i;
    end
  end

  assign out_valid_o = out_valid_q;
  assign out_data_o  = out_data_q;
  assign out_keep_o  = out_keep_q;
  assign out_last_o  = out_last_q;

`ifndef SYNTHESIS
  // The caller's contract, checked from the first reset on (before it the flops are random).
  // Simulation-only (docs/rtl/synthesis.md).
  logic armed_q = 1'b0;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      armed_q <= 1'b1;
    end
  end
  always @(posedge clk_i) begin
    if (rst_ni && armed_q) begin
      assert (!load_i || ready_o)
      else $error("naa_stream_reg %s: loaded while full and not being emptied", Port);
    end
  end

  naa_stream_assert #(.PayloadBits(9 * W + 1), .Port(Port)) u_out_assert (
    .clk_i, .rst_ni, .valid_i(out_valid_o), .ready_i(out_ready_i),
    .payload_i({out_data_o, out_keep_o, out_last_o})
  );
`endif  // SYNTHESIS

endmodule

`default_nettype wire
