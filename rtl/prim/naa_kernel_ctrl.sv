// naa_kernel_ctrl: the ap_ctrl_hs block-level handshake the built-in kernels share
// (docs/rtl/kernel-shell.md "Control"): Idle -(ap_start)-> Run -(finish_i)-> Done -> Idle.
// - Idle: ap_idle = 1; ap_ready = ap_start (the call is accepted in the cycle it is offered,
//   and the kernel latches its scalar inputs then: load_o).
// - Run: run_o = 1, the kernel moves beats; finish_i ends it (its last dst beat is taken).
// - Done: ap_done = 1 for one cycle; the kernel drives ap_return in that cycle.
`default_nettype none

module naa_kernel_ctrl (
  input  wire  clk_i,     // ap_clk
  input  wire  rst_ni,    // ap_rst_n
  input  wire  ap_start,
  output logic ap_ready,
  output logic ap_idle,
  output logic ap_done,
  output logic load_o,    // the call is accepted at this edge (Idle && ap_start)
  output logic run_o,     // the call runs this cycle
  input  wire  finish_i   // the call's work is over at this edge (only while run_o)
);

  typedef enum logic [1:0] {
    StIdle = 2'd0,
    StRun  = 2'd1,
    StDone = 2'd2
  } state_e;

  state_e state_d, state_q;

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:  if (ap_start) state_d = StRun;
      StRun:   if (finish_i) state_d = StDone;
      default: state_d = StIdle;  // StDone and the unused encoding
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
    end else begin
      state_q <= state_d;
    end
  end

  assign ap_idle  = (state_q == StIdle);
  assign ap_ready = (state_q == StIdle) && ap_start;
  assign load_o   = ap_ready;
  assign run_o    = (state_q == StRun);
  assign ap_done  = (state_q == StDone);

endmodule

`default_nettype wire
