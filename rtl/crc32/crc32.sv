// crc32: zlib CRC-32 of each packet of a stream (PROTOCOL.md 5.3, fn 6; the same CRC as the ICRC
// of PROTOCOL.md 2: reflected polynomial 0xEDB88320, init 0xFFFFFFFF, final xor 0xFFFFFFFF).
// rtl/crc32/README.md.
//
// Input: a valid/ready stream of W bytes per beat (W a power of two, at least 4). keep must be a
// prefix (bytes 0..n-1 of a beat are in the packet); the block uses the low popcount(keep) bytes.
// Any beat may be partial, a beat with keep = 0 adds no bytes (a lone keep = 0, last = 1 beat is
// the empty packet, CRC 0).
// Output: one beat per packet, one cycle after its last input beat is accepted: the CRC
// little-endian in bytes 0..3 (keep = 0xF, last = 1, other bytes 0). While the result waits for
// out_ready_i no input is accepted unless it is taken in the same cycle
// (in_ready_o = state is Accumulate || out_ready_i).
//
// A beat of n bytes is folded in as a chain of power-of-two chunks (the binary digits of n, largest
// first), each a fixed XOR network, so no byte-wise mux chain W deep is needed.
`default_nettype none

module crc32 #(
  parameter int unsigned W = 64  // bytes per beat
) (
  input  logic           clk_i,
  input  logic           rst_ni,

  input  logic           in_valid_i,
  output logic           in_ready_o,
  input  logic [8*W-1:0] in_data_i,
  input  logic [W-1:0]   in_keep_i,
  input  logic           in_last_i,

  output logic           out_valid_o,
  input  logic           out_ready_i,
  output logic [8*W-1:0] out_data_o,
  output logic [W-1:0]   out_keep_o,
  output logic           out_last_o
);

  if (W < 4 || (W & (W - 1)) != 0) begin : gen_w_check
    $fatal(1, "crc32: W must be a power of two of at least 4, got %0d", W);
  end

  localparam int unsigned Log2W = $clog2(W);
  localparam logic [31:0] Poly = 32'hEDB88320;
  localparam logic [31:0] CrcInit = 32'hFFFFFFFF;

  typedef enum logic {
    StAccumulate = 1'b0,  // taking beats of a packet
    StResult = 1'b1       // the CRC of the last packet waits on the output
  } state_e;

  function automatic logic [31:0] crc32_byte(logic [31:0] crc, logic [7:0] data);
    logic [31:0] c;
    c = crc ^ {24'd0, data};
    for (int unsigned bit_idx = 0; bit_idx < 8; bit_idx++) begin
      c = c[0] ? ((c >> 1) ^ Poly) : (c >> 1);
    end
    return c;
  endfunction

  state_e         state_d, state_q;
  logic [31:0]    crc_d, crc_q;        // running CRC of the current packet (before final xor)
  logic [31:0]    result_d, result_q;  // final CRC of the last packet
  logic [Log2W:0] count;
  logic [31:0]    crc_beat;
  logic [8*W-1:0] rest;
  logic           in_fire;

  assign in_ready_o = (state_q == StAccumulate) || out_ready_i;
  assign in_fire    = in_valid_i && in_ready_o;
  assign count      = ($bits(count))'($countones(in_keep_i));

  // crc_beat = crc_q advanced over the low `count` bytes of the beat.
  always_comb begin
    crc_beat = crc_q;
    rest     = in_data_i;
    for (int unsigned s = 0; s <= Log2W; s++) begin
      if (count[Log2W - s]) begin
        for (int unsigned i = 0; i < (1 << (Log2W - s)); i++) begin
          crc_beat = crc32_byte(crc_beat, rest[8*i +: 8]);
        end
        rest = rest >> (8 << (Log2W - s));
      end
    end
  end

  always_comb begin
    state_d  = state_q;
    crc_d    = crc_q;
    result_d = result_q;
    unique case (state_q)
      StAccumulate: ;
      StResult: begin
        if (out_ready_i) state_d = StAccumulate;
      end
      default: state_d = StAccumulate;
    endcase
    if (in_fire) begin
      if (in_last_i) begin
        result_d = ~crc_beat;
        crc_d    = CrcInit;
        state_d  = StResult;
      end else begin
        crc_d = crc_beat;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StAccumulate;
      crc_q   <= CrcInit;
    end else begin
      state_q <= state_d;
      crc_q   <= crc_d;
    end
  end

  // Datapath register: no reset (meaningful only while out_valid_o is high).
  always_ff @(posedge clk_i) begin
    result_q <= result_d;
  end

  assign out_valid_o = (state_q == StResult);
  assign out_data_o  = {{(8*W-32){1'b0}}, result_q};
  assign out_keep_o  = {{(W-4){1'b0}}, 4'hF};
  assign out_last_o  = 1'b1;

  // The valid/ready rules on both stream ports.
  naa_stream_assert #(.PayloadBits(9 * W + 1), .Port("crc32.in")) u_in_assert (
    .clk_i, .rst_ni, .valid_i(in_valid_i), .ready_i(in_ready_o),
    .payload_i({in_data_i, in_keep_i, in_last_i})
  );
  naa_stream_assert #(.PayloadBits(9 * W + 1), .Port("crc32.out")) u_out_assert (
    .clk_i, .rst_ni, .valid_i(out_valid_o), .ready_i(out_ready_i),
    .payload_i({out_data_o, out_keep_o, out_last_o})
  );

endmodule

`default_nettype wire
