// crc32_serial: the bit-serial reference of the proofs in docs/rtl/formal.md. The raw zlib CRC-32
// register (reflected polynomial 0xEDB88320, PROTOCOL.md 2; no init, no final xor) after the N
// bytes of data, byte 0 (bits [7:0]) first, each byte fed in one bit at a time, low bit first:
// the textbook shift register, written independently of gen_crc32_pkg.py and of the matrices it
// checks. The polynomial AND is written as an AND with a mask (not a mux), so that after constant
// propagation the circuit is XOR gates only, which the linearity check of the proofs needs.
//
// NAA_FORMAL_BROKEN_REFERENCE: the unreflected polynomial 0x04C11DB7 instead, a classic CRC-32
// mistake; every proof against this reference must fail (scripts/formal.sh runs it).
`default_nettype none

module crc32_serial #(
  parameter int unsigned N = 1  // bytes
) (
  input  logic [31:0]    crc_i,
  input  logic [8*N-1:0] data_i,
  output logic [31:0]    crc_o
);
`ifdef NAA_FORMAL_BROKEN_REFERENCE
  localparam logic [31:0] Poly = 32'h04C11DB7;
`else
  localparam logic [31:0] Poly = 32'hEDB88320;
`endif

  always_comb begin
    logic [31:0] r;
    r = crc_i;
    for (int unsigned i = 0; i < N; i++) begin
      for (int unsigned b = 0; b < 8; b++) begin
        r = (r >> 1) ^ ({32{r[0] ^ data_i[8*i+b]}} & Poly);
      end
    end
    crc_o = r;
  end

endmodule

`default_nettype wire
