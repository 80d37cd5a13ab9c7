// crc32_sva: crc32's port contract as concurrent assertions, and its covers (rtl/crc32/README.md;
// docs/rtl/README.md "Assertions"): the kernel contract every built-in keeps
// (rtl/kernel_shell/naa_kernel_sva.sv) with crc32's shape: one src packet, a reduction whose result
// beat (4 bytes, the CRC) is on dst log2(W) + 2 cycles after the last src beat is taken (README
// "Timing"), ap_return = 0. Bound to every crc32 instance by the `bind` at the end (simulation and
// lint only, never synthesis). Test rtl_sva (testbench/rtl/test_sva_kernels.cpp) makes every
// assertion fire on a trace that breaks it.
`default_nettype none

module crc32_sva #(
  parameter int unsigned W = 64
) (
  input wire           ap_clk,
  input wire           ap_rst_n,
  input wire           ap_start,
  input wire           ap_done,
  input wire           ap_idle,
  input wire           ap_ready,
  input wire [31:0]    ap_return,
  input wire [23:0]    user,
  input wire [8*W-1:0] src_TDATA,
  input wire [W-1:0]   src_TKEEP,
  input wire           src_TLAST,
  input wire           src_TVALID,
  input wire           src_TREADY,
  input wire [8*W-1:0] dst_TDATA,
  input wire [W-1:0]   dst_TKEEP,
  input wire           dst_TLAST,
  input wire           dst_TVALID,
  input wire           dst_TREADY
);

  naa_kernel_sva #(.W(W), .SrcPackets(1), .ResultLatency($clog2(W) + 2), .ResultBytes(4),
                   .ReturnsZero(1'b1)) u_kernel_sva (.*);

endmodule

bind crc32 crc32_sva #(.W(W)) u_crc32_sva (.*);

`default_nettype wire
