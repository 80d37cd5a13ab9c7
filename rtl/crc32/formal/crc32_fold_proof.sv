// crc32_fold_proof: crc32_pkg::fold(K, crc, data), the XOR matrix crc32 folds 2^K bytes with
// (rtl/crc32/crc32.sv: a whole beat, and each stage of the last-beat pipeline), equals 2^K bytes
// of the bit-serial CRC-32 (crc32_serial.sv), for every register and every data
// (docs/rtl/formal.md "CRC matrices").
//
// Why not a plain miter: both sides are XOR networks, and a miter of two differently shaped XOR
// networks is a parity problem, exponential for the SAT solver's resolution (measured: 2 bytes
// already take over 100 s). Both sides are linear over GF(2) instead, which scripts/formal.sh
// checks on the netlist (after constant propagation, crc32_fold_impl and crc32_fold_spec are XOR
// gates only), and two linear maps are equal iff they agree on every unit vector. So the SAT
// problem below feeds both sides x = 1 << k (or x = 0, which also covers an affine constant) for
// a free k and proves diff_o = 0: a handful of case splits on k instead of parity reasoning.
//
// NAA_FORMAL_BROKEN_MATRIX: one matrix entry flipped (output bit 0 also takes the last data bit),
// the smallest possible error in a generated package; the proof must fail on it.
// NAA_FORMAL_NONLINEAR: output bit 0 also takes the AND of two data bits. That term is 0 on every
// unit vector, so the basis comparison alone would pass: the linearity check must reject it.
`default_nettype none

// The side under proof: the package function crc32.sv calls, on x = {data, crc}.
module crc32_fold_impl #(
  parameter int unsigned Log2N = 0
) (
  input  logic [32+8*(1<<Log2N)-1:0] x_i,
  output logic [31:0]                y_o
);
  localparam int unsigned N = 1 << Log2N;
  always_comb begin
    y_o = crc32_pkg::fold(Log2N, x_i[31:0], 512'(x_i[32 +: 8*N]));
`ifdef NAA_FORMAL_BROKEN_MATRIX
    y_o[0] = y_o[0] ^ x_i[32+8*N-1];
`endif
`ifdef NAA_FORMAL_NONLINEAR
    y_o[0] = y_o[0] ^ (x_i[32] & x_i[33]);
`endif
  end
endmodule

// The reference: N bytes of the bit-serial CRC.
module crc32_fold_spec #(
  parameter int unsigned Log2N = 0
) (
  input  logic [32+8*(1<<Log2N)-1:0] x_i,
  output logic [31:0]                y_o
);
  localparam int unsigned N = 1 << Log2N;
  crc32_serial #(.N(N)) u_serial (.crc_i(x_i[31:0]), .data_i(x_i[32 +: 8*N]), .crc_o(y_o));
endmodule

// Both sides on the basis vector k (or on zero): diff_o = 1 iff they differ there.
module crc32_fold_proof #(
  parameter int unsigned Log2N = 0
) (
  input  logic [9:0] k_i,
  input  logic       zero_i,
  output logic       diff_o
);
  localparam int unsigned InW = 32 + 8 * (1 << Log2N);
  logic [InW-1:0] x;
  logic [31:0]    y_impl, y_spec;
  assign x = zero_i ? '0 : InW'(1) << k_i;
  crc32_fold_impl #(.Log2N(Log2N)) u_impl (.x_i(x), .y_o(y_impl));
  crc32_fold_spec #(.Log2N(Log2N)) u_spec (.x_i(x), .y_o(y_spec));
  assign diff_o = (zero_i || 32'(k_i) < InW) && y_impl != y_spec;
endmodule

`default_nettype wire
