// naa_stream_assert: the valid/ready rules of one stream port (docs/rtl/README.md "Streams"),
// checked in simulation (blocks are Verilated with --assert, cmake/NaaVerilator.cmake):
// - a valid that rises stays high, with the payload unchanged, until the beat moves (valid && ready
//   at an edge);
// - valid and ready are known (never X or Z) after reset. Verilator is two-state, so there
//   this check cannot fail; a four-state simulator runs it as written.
// Every block instantiates one per stream port, inputs (the caller's promise) and outputs (the
// block's) alike. A valid-only port (no back-pressure) ties ready_i high: only the known-value
// check applies. The checks start with the first reset. Nothing here is synthesised: the body is
// simulation-only (`ifndef SYNTHESIS`, defined by scripts/synth.sh, docs/rtl/synthesis.md), so a
// synthesis tool sees a module with inputs only and no logic. Port is untyped (a string value)
// because Yosys does not read `parameter string`.
`default_nettype none

module naa_stream_assert #(
  parameter int unsigned PayloadBits = 1,
  parameter              Port        = "stream"  // named in the failure message
) (
  input logic                   clk_i,
  input logic                   rst_ni,
  input logic                   valid_i,
  input logic                   ready_i,
  input logic [PayloadBits-1:0] payload_i
);

`ifndef SYNTHESIS
  // Armed by the first reset: before it, the block's flops hold their random initial values
  // (--x-initial unique) and nothing is promised. Simulation-only state, hence the initializer.
  logic                   armed_q = 1'b0;
  logic                   waiting_q;  // valid && !ready at the last edge: the beat is still owed
  // The payload that waited at the last edge, copied only then (it is read only while waiting_q):
  // a copy of the whole payload (737 bits on icrc_check's input) at every edge cost Verilator
  // more than the block's own logic (issue 31). Checker state, not design: no toggle coverage.
  /*verilator coverage_off*/
  logic [PayloadBits-1:0] payload_q;
  /*verilator coverage_on*/

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      armed_q   <= 1'b1;
      waiting_q <= 1'b0;
    end else begin
      waiting_q <= valid_i && !ready_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (valid_i && !ready_i) payload_q <= payload_i;
  end

  // Immediate assertions at the edge: the sampled values are those of the cycle the edge ends.
  always @(posedge clk_i) begin
    if (rst_ni && armed_q) begin
      assert (!$isunknown({valid_i, ready_i}))
      else $error("naa_stream_assert %s: valid or ready unknown after reset", Port);
      if (waiting_q) begin
        assert (valid_i)
        else $error("naa_stream_assert %s: valid dropped before ready", Port);
        assert (!valid_i || payload_i == payload_q)
        else $error("naa_stream_assert %s: payload changed while valid waited for ready", Port);
      end
    end
  end
`endif  // SYNTHESIS

endmodule

`default_nettype wire
