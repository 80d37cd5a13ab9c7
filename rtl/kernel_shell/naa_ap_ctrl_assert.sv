// naa_ap_ctrl_assert: the ap_ctrl_hs rules (Vitis HLS UG1399 "Block-Level Control Protocols",
// docs/rtl/kernel-shell.md "Control") at a kernel's control ports, checked in simulation:
// - the caller holds ap_start until ap_ready (an ap_start that rises is not withdrawn);
// - ap_done is a one-cycle pulse and never comes with ap_idle.
// Instantiated by the kernel shell (naa_kernel_shell.sv.in) under `ifndef SYNTHESIS. Checks
// start with the first reset (before it the flops hold random initial values).
`default_nettype none

module naa_ap_ctrl_assert #(
  parameter string Kernel = "kernel"  // named in the failure message
) (
  input wire clk_i,
  input wire rst_ni,
  input wire ap_start_i,
  input wire ap_ready_i,
  input wire ap_idle_i,
  input wire ap_done_i
);

  logic armed_q = 1'b0;  // simulation-only state, hence the initializer
  logic start_owed_q;    // ap_start without ap_ready at the last edge
  logic done_q;          // ap_done at the last edge

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      armed_q      <= 1'b1;
      start_owed_q <= 1'b0;
      done_q       <= 1'b0;
    end else begin
      start_owed_q <= ap_start_i && !ap_ready_i;
      done_q       <= ap_done_i;
    end
  end

  always @(posedge clk_i) begin
    if (rst_ni && armed_q) begin
      assert (!start_owed_q || ap_start_i)
      else $error("naa_ap_ctrl_assert %s: ap_start dropped before ap_ready", Kernel);
      assert (!(done_q && ap_done_i))
      else $error("naa_ap_ctrl_assert %s: ap_done high two cycles in a row", Kernel);
      assert (!(ap_done_i && ap_idle_i))
      else $error("naa_ap_ctrl_assert %s: ap_done together with ap_idle", Kernel);
    end
  end

endmodule

`default_nettype wire
