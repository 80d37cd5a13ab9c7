// rx_parser: structural check of a received RoCEv2 datagram, BTH .. ICRC (PROTOCOL.md 1), with
// the checks and drop reasons of naa::protocol::decode_packet. rtl/rx_parser/README.md.
//
// Input: a valid/ready stream of W bytes per beat (1 <= W <= 64). Every beat but the last is full;
// the last carries popcount(keep) bytes (keep a prefix, 0..W). Datagrams up to 65535 bytes.
// Output: one result per datagram, one cycle after its last beat is accepted, held until
// out_ready_i; in_ready_o = !out_valid_o || out_ready_i.
//
// Storage: the first 40 bytes (the longest BTH + extension headers: AtomicETH and IRN's
// RETH + IrnETH + ImmDt are 40), captured by beat position, and the last 8 bytes of the stream (pad and ICRC). The result is
// decided from these registers while it is on the output; nothing is buffered beyond them.
//
// out_reason_o carries the value of naa::protocol::Error (protocol/.../result.hpp), 0 = none.
// Fields are meaningful only when out_reason_o is 0, an extension header's fields only when its
// bit is in out_headers_o ({SackETH, IrnETH, IETH, ImmDt, AtomicAckETH, AETH, AtomicETH, RETH,
// DETH}, bit 0 = DETH, the HeaderBit values of protocol/include/naa/protocol/opcode.hpp). IRN's
// opcodes 0xC0-0xD1 and headers IrnETH and SackETH: docs/protocol.md section 8.
//
// Build-time define NAA_RX_PARSER_BROKEN: a deliberately wrong variant (the pad-byte check looks at
// the first pad byte only), used to prove that lockstep catches it.
`default_nettype none

module rx_parser #(
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
  output logic [7:0]     out_reason_o,
  output logic [15:0]    out_length_o,
  output logic [7:0]     out_opcode_o,
  output logic           out_se_o,
  output logic           out_mig_req_o,
  output logic [1:0]     out_pad_o,
  output logic [3:0]     out_tver_o,
  output logic [15:0]    out_pkey_o,
  output logic           out_fecn_o,
  output logic           out_becn_o,
  output logic [23:0]    out_dest_qpn_o,
  output logic           out_ack_req_o,
  output logic [23:0]    out_psn_o,
  output logic [8:0]     out_headers_o,
  output logic [63:0]    out_reth_va_o,
  output logic [31:0]    out_reth_rkey_o,
  output logic [31:0]    out_reth_dma_length_o,
  output logic [7:0]     out_aeth_syndrome_o,
  output logic [23:0]    out_aeth_msn_o,
  output logic [31:0]    out_immediate_o,
  output logic [63:0]    out_atomic_va_o,
  output logic [31:0]    out_atomic_rkey_o,
  output logic [63:0]    out_atomic_swap_add_o,
  output logic [63:0]    out_atomic_compare_o,
  output logic [63:0]    out_atomic_ack_original_o,
  output logic [31:0]    out_deth_qkey_o,
  output logic [23:0]    out_deth_src_qpn_o,
  output logic [31:0]    out_irn_recv_wqe_sn_o,
  output logic [31:0]    out_irn_packet_offset_o,
  output logic [7:0]     out_sack_reserved_o,
  output logic [23:0]    out_sack_psn_o,
  output logic [31:0]    out_sack_bitmap_o,
  output logic [15:0]    out_payload_offset_o,
  output logic [15:0]    out_payload_length_o
);

  if (W < 1 || W > 64) begin : gen_w_check
    $fatal(1, "rx_parser: W must be in 1..64, got %0d", W);
  end

  localparam int unsigned HdrBytes = 40;
  localparam int unsigned HdrBeats = (HdrBytes + W - 1) / W;
  localparam int unsigned BeatW = $clog2(HdrBeats + 1);
  localparam int unsigned CountW = $clog2(W + 1);

  // naa::protocol::Error values (protocol/include/naa/protocol/result.hpp).
  localparam logic [7:0] ErrNone = 8'd0;
  localparam logic [7:0] ErrTooShort = 8'd1;
  localparam logic [7:0] ErrTooLong = 8'd2;
  localparam logic [7:0] ErrBadTver = 8'd3;
  localparam logic [7:0] ErrBadPad = 8'd4;
  localparam logic [7:0] ErrUnknownOpcode = 8'd5;
  localparam logic [7:0] ErrLengthMismatch = 8'd6;

  // Extension header bits (HeaderBit of protocol/include/naa/protocol/opcode.hpp).
  localparam logic [8:0] HasDeth = 9'h001;
  localparam logic [8:0] HasReth = 9'h002;
  localparam logic [8:0] HasAtomicEth = 9'h004;
  localparam logic [8:0] HasAeth = 9'h008;
  localparam logic [8:0] HasAtomicAckEth = 9'h010;
  localparam logic [8:0] HasImmDt = 9'h020;
  localparam logic [8:0] HasIeth = 9'h040;
  localparam logic [8:0] HasIrnEth = 9'h080;   // IRN (docs/protocol.md 8): before ImmDt
  localparam logic [8:0] HasSackEth = 9'h100;  // IRN: after the AETH

  typedef enum logic [1:0] {
    PayNone = 2'd0,       // no payload (ACK, READ request, atomics)
    PayFullMtu = 2'd1,    // FIRST/MIDDLE: non-empty, pad 0
    PayUpToMtu = 2'd2,    // LAST/ONLY
    PayReserved16 = 2'd3  // CNP: 16 reserved bytes
  } payload_e;

  // ---------------------------------------------------------------------------------------------
  // Input side: capture the header bytes by beat position, keep the last 8 bytes, count bytes.
  // ---------------------------------------------------------------------------------------------
  logic                 result_q;            // a result is on the output
  logic [BeatW-1:0]     beat_q;              // beats of the current datagram so far (saturating)
  logic [15:0]          len_q;               // bytes of the current datagram so far
  logic [15:0]          res_len_q;           // bytes of the datagram whose result is out
  logic [8*HdrBytes-1:0] hdr_q;              // byte j = hdr_q[8*j +: 8] (one variable for
                                             // the simulator; flat: Yosys reads no 2-D packed array)
  logic [63:0]          tail_q;              // the last 8 bytes of the stream, byte 0 oldest
  logic                 in_fire;
  logic                 known_q;             // the opcode's decoded entry (opcode_info)
  logic [8:0]           headers_q;
  logic [1:0]           payload_q;
  logic [7:0]           hdr_size_q;          // header_size(headers_q)
  logic [7:0]           need_q;              // hdr_size_q + 4 (the ICRC)

  // The opcode table (PROTOCOL.md 1, IBTA vol. 1 table 35): {known, headers, payload}.
  function automatic logic [11:0] opcode_info(logic [7:0] opcode);
    logic       known;
    logic [8:0] headers;
    logic [1:0] payload;
    known   = 1'b1;
    headers = '0;
    payload = PayUpToMtu;
    unique case (opcode)
      8'h00, 8'h01, 8'h07, 8'h0E: payload = PayFullMtu;  // SEND/WRITE/READ RESP middle, SEND first
      8'h02, 8'h04, 8'h08: ;                              // SEND last/only, WRITE last
      8'h03, 8'h05, 8'h09: headers = HasImmDt;            // ... with immediate
      8'h06: begin headers = HasReth; payload = PayFullMtu; end  // WRITE first
      8'h0A: headers = HasReth;                                   // WRITE only
      8'h0B: headers = HasReth | HasImmDt;                        // WRITE only with immediate
      8'h0C: begin headers = HasReth; payload = PayNone; end      // READ request
      8'h0D: begin headers = HasAeth; payload = PayFullMtu; end   // READ response first
      8'h0F, 8'h10: headers = HasAeth;                            // READ response last/only
      8'h11: begin headers = HasAeth; payload = PayNone; end      // ACK
      8'h12: begin headers = HasAeth | HasAtomicAckEth; payload = PayNone; end  // ATOMIC ACK
      8'h13, 8'h14: begin headers = HasAtomicEth; payload = PayNone; end     // CmpSwap, FetchAdd
      8'h16, 8'h17: headers = HasIeth;                            // SEND with invalidate
      8'h64: headers = HasDeth;                                   // UD SEND only
      8'h65: headers = HasDeth | HasImmDt;                        // UD SEND only with immediate
      8'h81: payload = PayReserved16;                             // CNP
      // IRN (docs/protocol.md 8): IrnETH on SENDs and WRITE-with-immediate, RETH on every WRITE.
      8'hC0, 8'hC1: begin headers = HasIrnEth; payload = PayFullMtu; end  // SEND first/middle
      8'hC2, 8'hC4: headers = HasIrnEth;                                  // SEND last/only
      8'hC3, 8'hC5: headers = HasIrnEth | HasImmDt;                       // ... with immediate
      8'hC6, 8'hC7: begin headers = HasReth; payload = PayFullMtu; end    // WRITE first/middle
      8'hC8, 8'hCA: headers = HasReth;                                    // WRITE last/only
      8'hC9, 8'hCB: headers = HasReth | HasIrnEth | HasImmDt;  // WRITE last/only with immediate
      8'hCC: begin headers = HasAeth | HasSackEth; payload = PayNone; end  // IRN ACK
      8'hCD: begin headers = HasReth | HasIrnEth; payload = PayNone; end  // IRN READ request
      8'hCE, 8'hCF: begin headers = HasIrnEth; payload = PayFullMtu; end  // IRN READ resp first/mid
      8'hD0, 8'hD1: headers = HasIrnEth;                                  // IRN READ resp last/only
      default: known = 1'b0;
    endcase
    opcode_info = {known, headers, payload};
  endfunction

  // The end of the data in a beat: bit j is set for j = popcount(keep) alone, keep being a
  // contiguous prefix (docs/rtl/README.md "Streams"). The byte count and the tail are then ORs
  // of ANDs over this one-hot vector, shallow in logic, where a population count is a deep adder
  // tree (docs/rtl/synthesis.md).
  function automatic logic [W:0] keep_edge(logic [W-1:0] keep);
    keep_edge = {keep, 1'b1} & ~{1'b0, keep};  // bit j: keep[j-1] && !keep[j]
  endfunction
  function automatic logic [CountW-1:0] edge_count(logic [W:0] edge_at);
    edge_count = '0;
    for (int unsigned j = 1; j <= W; j++) begin
      if (edge_at[j]) edge_count = edge_count | CountW'(j);
    end
  endfunction

  // BTH + extension headers of an opcode with these header bits.
  function automatic logic [7:0] header_size(logic [8:0] headers);
    header_size = 8'd12 + ((headers & HasDeth) != 0 ? 8'd8 : 8'd0)
                        + ((headers & HasReth) != 0 ? 8'd16 : 8'd0)
                        + ((headers & HasAtomicEth) != 0 ? 8'd28 : 8'd0)
                        + ((headers & HasAeth) != 0 ? 8'd4 : 8'd0)
                        + ((headers & HasAtomicAckEth) != 0 ? 8'd8 : 8'd0)
                        + ((headers & HasSackEth) != 0 ? 8'd8 : 8'd0)
                        + ((headers & HasIrnEth) != 0 ? 8'd8 : 8'd0)
                        + ((headers & (HasImmDt | HasIeth)) != 0 ? 8'd4 : 8'd0);
  endfunction

  assign in_ready_o = !result_q || out_ready_i;
  assign in_fire    = in_valid_i && in_ready_o;

  // Everything below is computed in the always_ff blocks (not in always_comb next-state
  // signals), so Verilator evaluates it once per cycle, at the edge (issue 14 item 5).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      result_q <= 1'b0;
      beat_q   <= '0;
      len_q    <= '0;
    end else begin
      if (result_q && out_ready_i) result_q <= 1'b0;
      if (in_fire) begin
        if (in_last_i) begin
          result_q <= 1'b1;
          beat_q   <= '0;
          len_q    <= '0;
        end else begin
          if (beat_q != BeatW'(HdrBeats)) beat_q <= beat_q + 1'b1;
          len_q <= len_q + 16'(edge_count(keep_edge(in_keep_i)));
        end
      end
    end
  end

  // Datapath registers: no reset (meaningful only under out_valid_o, after a whole datagram).
  always_ff @(posedge clk_i) begin
    if (in_fire) begin : fire
      logic [CountW-1:0]  count;
      logic [W:0]         edge_at;
      logic [11:0]        info;
      logic [8*W+63:0]    cat;       // {beat, previous tail}
      logic [63:0]        tail;
      edge_at = keep_edge(in_keep_i);
      count   = edge_count(edge_at);
      if (beat_q == '0) begin
        info = opcode_info(in_data_i[7:0]);
        {known_q, headers_q, payload_q} <= info;
        hdr_size_q <= header_size(info[10:2]);
        need_q     <= header_size(info[10:2]) + 8'd4;
      end
      if (beat_q < BeatW'(HdrBeats)) begin
        for (int unsigned j = 0; j < HdrBytes; j++) begin
          if (beat_q == BeatW'(j / W)) hdr_q[8*j +: 8] <= in_data_i[8*(j % W) +: 8];
        end
      end
      // The last 8 bytes after this beat: bytes count .. count+7 of {beat, previous tail} (a
      // full beat, the common case, by a constant shift; else an AND-OR over the one-hot end
      // position, not a shifter behind a population count: docs/rtl/synthesis.md).
      cat = {in_data_i, tail_q};
      if (edge_at[W]) begin
        tail = cat[8*W +: 64];
      end else begin
        tail = '0;
        for (int unsigned t = 0; t < 8; t++) begin
          for (int unsigned j = 0; j < W; j++) begin
            tail[8*t +: 8] = tail[8*t +: 8] | (cat[8*(j+t) +: 8] & {8{edge_at[j]}});
          end
        end
      end
      tail_q <= tail;
      if (in_last_i) res_len_q <= len_q + 16'(count);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Output side: decide from the registers (PROTOCOL.md 1; decode_packet's order of checks).
  // ---------------------------------------------------------------------------------------------
  // known, headers and payload are decoded from the opcode as it arrives with the first beat and
  // registered (docs/rtl/synthesis.md: decoded from hdr_q on the output side, the opcode table,
  // the header sizes and the length checks were 12 LUT levels in one cycle).
  logic       known;
  logic [8:0] headers;
  logic [1:0] payload;  // a payload_e (Yosys reads no cast to an enum type)

  assign known   = known_q;
  assign headers = headers_q;
  assign payload = payload_q;

  logic [7:0]  hdr_size;     // BTH + extension headers
  logic [7:0]  imm_offset;   // where ImmDt / IETH sits
  logic [7:0]  irn_offset;   // where IrnETH sits
  logic [16:0] need;         // hdr_size + ICRC
  logic [16:0] body;         // payload + pad (when the length covers need)
  logic [1:0]  pad;
  logic        pad_bytes_ok;
  logic [7:0]  reason;

  assign pad = hdr_q[8*1 + 5 : 8*1 + 4];
  // Wire order (docs/protocol.md 8): [DETH] [RETH | AtomicETH | AETH] [AtomicAckETH | SackETH]
  // [IrnETH] [ImmDt | IETH]. Only DETH, RETH and IrnETH ever precede an ImmDt / IETH, and only
  // RETH an IrnETH.
  always_comb begin
    irn_offset = 8'd12 + ((headers & HasReth) != 0 ? 8'd16 : 8'd0);
    imm_offset = 8'd12 + ((headers & HasDeth) != 0 ? 8'd8 : 8'd0)
                       + ((headers & HasReth) != 0 ? 8'd16 : 8'd0)
                       + ((headers & HasIrnEth) != 0 ? 8'd8 : 8'd0);
  end
  assign hdr_size = hdr_size_q;
  assign need     = 17'(need_q);
  assign body = {1'b0, res_len_q} - need;

  // The pad bytes are the pad bytes before the ICRC: tail bytes 3, 2, 1 (byte 7 is the last).
`ifdef NAA_RX_PARSER_BROKEN
  // Deliberate bug: only the first pad byte is checked.
  assign pad_bytes_ok = (pad == 2'd0) || (tail_q[8*(4 - 32'(pad)) +: 8] == 8'd0);
`else
  assign pad_bytes_ok = (pad < 2'd1 || tail_q[31:24] == 8'd0) &&
                        (pad < 2'd2 || tail_q[23:16] == 8'd0) &&
                        (pad < 2'd3 || tail_q[15:8] == 8'd0);
`endif

  always_comb begin
    if (res_len_q < 16'd16) begin
      reason = ErrTooShort;
    end else if (hdr_q[8*1 + 3 : 8*1 + 0] != 4'd0) begin
      reason = ErrBadTver;
    end else if (!known) begin
      reason = ErrUnknownOpcode;
    end else if ({1'b0, res_len_q} < need) begin
      reason = ErrTooShort;
    end else if (17'(pad) > body || body[1:0] != 2'd0 || !pad_bytes_ok) begin
      reason = ErrBadPad;
    end else begin
      unique case (payload)
        PayNone: reason = (body != '0) ? ErrTooLong : ErrNone;
        PayFullMtu: begin
          if (pad != 2'd0) reason = ErrBadPad;
          else if (body == '0) reason = ErrLengthMismatch;
          else reason = ErrNone;
        end
        PayReserved16: reason = (body != 17'd16) ? ErrLengthMismatch : ErrNone;
        default: reason = ErrNone;
      endcase
    end
  end

  // Big-endian fields of the header bytes h: byte `at` is the most significant. (The header is
  // an argument and the result is assigned to the function's name: Yosys evaluates a call with
  // constant arguments as a constant function and reads no `return`, docs/rtl/synthesis.md.)
  function automatic logic [31:0] be32(logic [8*HdrBytes-1:0] h, int unsigned at);
    be32 = {h[8*at +: 8], h[8*(at+1) +: 8], h[8*(at+2) +: 8], h[8*(at+3) +: 8]};
  endfunction
  function automatic logic [63:0] be64(logic [8*HdrBytes-1:0] h, int unsigned at);
    be64 = {be32(h, at), be32(h, at + 4)};
  endfunction
  function automatic logic [23:0] be24(logic [8*HdrBytes-1:0] h, int unsigned at);
    be24 = {h[8*at +: 8], h[8*(at+1) +: 8], h[8*(at+2) +: 8]};
  endfunction

  assign out_valid_o    = result_q;
  assign out_reason_o   = reason;
  assign out_length_o   = res_len_q;
  assign out_opcode_o   = hdr_q[8*0 +: 8];
  assign out_se_o       = hdr_q[8*1 + 7];
  assign out_mig_req_o  = hdr_q[8*1 + 6];
  assign out_pad_o      = pad;
  assign out_tver_o     = hdr_q[8*1 + 3 : 8*1 + 0];
  assign out_pkey_o     = {hdr_q[8*2 +: 8], hdr_q[8*3 +: 8]};
  assign out_fecn_o     = hdr_q[8*4 + 7];
  assign out_becn_o     = hdr_q[8*4 + 6];
  assign out_dest_qpn_o = be24(hdr_q, 5);
  assign out_ack_req_o  = hdr_q[8*8 + 7];
  assign out_psn_o      = be24(hdr_q, 9);
  assign out_headers_o  = headers;
  // RETH, AtomicETH, AETH and DETH all start right after the BTH (no opcode has two of them);
  // AtomicAckETH and SackETH follow the AETH.
  assign out_reth_va_o             = be64(hdr_q, 12);
  assign out_reth_rkey_o           = be32(hdr_q, 20);
  assign out_reth_dma_length_o     = be32(hdr_q, 24);
  assign out_aeth_syndrome_o       = hdr_q[8*12 +: 8];
  assign out_aeth_msn_o            = be24(hdr_q, 13);
  assign out_atomic_va_o           = be64(hdr_q, 12);
  assign out_atomic_rkey_o         = be32(hdr_q, 20);
  assign out_atomic_swap_add_o     = be64(hdr_q, 24);
  assign out_atomic_compare_o      = be64(hdr_q, 32);
  assign out_atomic_ack_original_o = be64(hdr_q, 16);
  assign out_deth_qkey_o           = be32(hdr_q, 12);
  assign out_deth_src_qpn_o        = be24(hdr_q, 17);
  assign out_sack_reserved_o       = hdr_q[8*16 +: 8];
  assign out_sack_psn_o            = be24(hdr_q, 17);
  assign out_sack_bitmap_o         = be32(hdr_q, 20);
  always_comb begin
    unique case (imm_offset)
      8'd20: out_immediate_o = be32(hdr_q, 20);
      8'd28: out_immediate_o = be32(hdr_q, 28);
      8'd36: out_immediate_o = be32(hdr_q, 36);
      default: out_immediate_o = be32(hdr_q, 12);
    endcase
  end
  // IrnETH: right after the BTH on a SEND, after the RETH on a WRITE.
  assign out_irn_recv_wqe_sn_o   = irn_offset == 8'd28 ? be32(hdr_q, 28) : be32(hdr_q, 12);
  assign out_irn_packet_offset_o = irn_offset == 8'd28 ? be32(hdr_q, 32) : be32(hdr_q, 16);
  assign out_payload_offset_o = 16'(hdr_size);
  assign out_payload_length_o = 16'(body) - 16'(pad);

  // The valid/ready rules on both ports.
  naa_stream_assert #(.PayloadBits(9 * W + 1), .Port("rx_parser.in")) u_in_assert (
    .clk_i, .rst_ni, .valid_i(in_valid_i), .ready_i(in_ready_o),
    .payload_i({in_data_i, in_keep_i, in_last_i})
  );
  naa_stream_assert #(.PayloadBits(24), .Port("rx_parser.out")) u_out_assert (
    .clk_i, .rst_ni, .valid_i(out_valid_o), .ready_i(out_ready_i),
    .payload_i({out_reason_o, out_length_o})
  );

endmodule

`default_nettype wire
