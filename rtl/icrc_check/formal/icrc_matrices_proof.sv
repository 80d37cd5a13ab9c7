// icrc_matrices_proof: the XOR matrices icrc_check is built from (rtl/icrc_check/
// icrc_matrices_pkg.sv, used as in rtl/icrc_check/icrc_check.sv) against the bit-serial CRC-32
// (rtl/crc32/formal/crc32_serial.sv), for every input (docs/rtl/formal.md "CRC matrices").
// Kind selects the claim, P its size:
//   0 step:         zeros_fold(P, c) ^ beat_crc(d placed in the top P bytes of 64) = P bytes d
//                   folded into c: the step icrc_check takes for every beat at W = P;
//   1 header:       header_fold(P, h) = the ICRC seed (init 0xFFFFFFFF, 8 bytes 0xFF), then the
//                   28 bytes h, then P zero bytes (the first beat's start at W = P);
//   2 unfold_low:   folding 4 + P zero bytes into unfold_low(P, c) gives c back (P in 0..7);
//   3 unfold_high:  folding 8P zero bytes into unfold_high(P, c) gives c back (P in 0..8).
// Zero-byte folding is invertible, so 2 and 3 show that unfold_* are its exact inverses, which
// the result stage relies on (4 + pad bytes taken back off: unfold_high(pad / 8,
// unfold_low(pad % 8, .))).
//
// The method is crc32_fold_proof.sv's: both sides are checked to be XOR/XNOR/NOT gates only
// (affine over GF(2)) and are then compared on x = 0 and on every unit vector x = 1 << k.
//
// NAA_FORMAL_BROKEN_MATRIX: one matrix entry flipped in the side under proof; every claim must
// fail on it.
`default_nettype none

package icrc_matrices_proof_pkg;
  function automatic int unsigned in_bits(int unsigned kind, int unsigned p);
    in_bits = kind == 0 ? 32 + 8 * p : kind == 1 ? 224 : 32;
  endfunction
endpackage

// The side under proof: the package functions as icrc_check calls them.
module icrc_matrices_impl #(
  parameter int unsigned Kind = 0,
  parameter int unsigned P = 8,
  parameter int unsigned InW = icrc_matrices_proof_pkg::in_bits(Kind, P)
) (
  input  logic [InW-1:0] x_i,
  output logic [31:0]    y_o
);
  logic [31:0] y;
  if (Kind == 0) begin : gen_step
    // icrc_check.sv: placed[8*(64-W) +: 8*W] = data; zeros_fold(W, crc_q) ^ beat_crc(placed).
    logic [8*64-1:0] placed;
    always_comb begin
      placed = '0;
      placed[8*(64-P) +: 8*P] = x_i[32 +: 8*P];
    end
    assign y = icrc_matrices_pkg::zeros_fold(P, x_i[31:0]) ^ icrc_matrices_pkg::beat_crc(placed);
  end else if (Kind == 1) begin : gen_header
    assign y = icrc_matrices_pkg::header_fold(P, x_i);
  end else if (Kind == 2) begin : gen_unfold_low
    logic [31:0] back;
    assign back = icrc_matrices_pkg::unfold_low(3'(P), x_i);
    crc32_serial #(.N(4 + P)) u_zeros (.crc_i(back), .data_i('0), .crc_o(y));
  end else begin : gen_unfold_high
    logic [31:0] back;
    assign back = icrc_matrices_pkg::unfold_high(4'(P), x_i);
    if (P == 0) begin : gen_none
      assign y = back;
    end else begin : gen_zeros
      crc32_serial #(.N(8 * P)) u_zeros (.crc_i(back), .data_i('0), .crc_o(y));
    end
  end
  always_comb begin
    y_o = y;
`ifdef NAA_FORMAL_BROKEN_MATRIX
    y_o[0] = y_o[0] ^ x_i[InW-1];
`endif
  end
endmodule

// The reference, bit-serial.
module icrc_matrices_spec #(
  parameter int unsigned Kind = 0,
  parameter int unsigned P = 8,
  parameter int unsigned InW = icrc_matrices_proof_pkg::in_bits(Kind, P)
) (
  input  logic [InW-1:0] x_i,
  output logic [31:0]    y_o
);
  if (Kind == 0) begin : gen_step
    crc32_serial #(.N(P)) u_serial (.crc_i(x_i[31:0]), .data_i(x_i[32 +: 8*P]), .crc_o(y_o));
  end else if (Kind == 1) begin : gen_header
    logic [31:0] seed, hdr;
    crc32_serial #(.N(8)) u_seed (.crc_i(32'hFFFFFFFF), .data_i({8{8'hFF}}), .crc_o(seed));
    crc32_serial #(.N(28)) u_hdr (.crc_i(seed), .data_i(x_i), .crc_o(hdr));
    crc32_serial #(.N(P)) u_zeros (.crc_i(hdr), .data_i('0), .crc_o(y_o));
  end else begin : gen_identity
    assign y_o = x_i;
  end
endmodule

// Both sides on the basis vector k (or on zero): diff_o = 1 iff they differ there.
module icrc_matrices_proof #(
  parameter int unsigned Kind = 0,
  parameter int unsigned P = 8
) (
  input  logic [9:0] k_i,
  input  logic       zero_i,
  output logic       diff_o
);
  localparam int unsigned InW = icrc_matrices_proof_pkg::in_bits(Kind, P);
  logic [InW-1:0] x;
  logic [31:0]    y_impl, y_spec;
  assign x = zero_i ? '0 : InW'(1) << k_i;
  icrc_matrices_impl #(.Kind(Kind), .P(P)) u_impl (.x_i(x), .y_o(y_impl));
  icrc_matrices_spec #(.Kind(Kind), .P(P)) u_spec (.x_i(x), .y_o(y_spec));
  assign diff_o = (zero_i || 32'(k_i) < InW) && y_impl != y_spec;
endmodule

// Claims 2 and 3 for every size in one SAT problem (each is small): bit b of diff_o is
// unfold_low(b) for b in 0..7, bit 8 + a is unfold_high(a) for a in 0..8.
module icrc_unfold_proof (
  input  logic [9:0]  k_i,
  input  logic        zero_i,
  output logic [16:0] diff_o
);
  logic [31:0] x;
  assign x = zero_i ? '0 : 32'(1) << k_i;
  for (genvar i = 0; i < 17; i++) begin : gen_claim
    localparam int unsigned Kind = i < 8 ? 2 : 3;
    localparam int unsigned P = i < 8 ? i : i - 8;
    logic [31:0] y_impl, y_spec;
    icrc_matrices_impl #(.Kind(Kind), .P(P)) u_impl (.x_i(x), .y_o(y_impl));
    icrc_matrices_spec #(.Kind(Kind), .P(P)) u_spec (.x_i(x), .y_o(y_spec));
    assign diff_o[i] = (zero_i || k_i < 10'd32) && y_impl != y_spec;
  end
endmodule

`default_nettype wire
