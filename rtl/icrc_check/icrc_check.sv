// icrc_check: the RoCEv2 ICRC of a received datagram (PROTOCOL.md 2; IBTA annex A17.3.3).
// rtl/icrc_check/README.md.
//
// ICRC = zlib CRC-32 over 8 bytes of 0xFF || IPv4 header || UDP header || BTH .. pad, with IPv4
// TOS (byte 1), TTL (byte 8) and header checksum (bytes 10-11), the UDP checksum (bytes 6-7) and
// BTH byte 4 (FECN, BECN, resv6) replaced by ones; sent least-significant byte first.
//
// Input: a valid/ready stream of W bytes per beat (W a power of two, 1..64): the datagram BTH ..
// ICRC; every beat but the last is full, the last carries popcount(keep) bytes (keep a prefix).
// in_ip_udp_i: the 20-byte IPv4 header and the 8-byte UDP header as on the wire (byte 0 in bits
// [7:0]; the caller recovers the IPv4 ID, PROTOCOL.md 2), sampled with the first beat.
// Output: one result per datagram, two cycles after its last beat is accepted (latency 2), held
// until out_ready_i. out_short_o: fewer than 16 bytes (no BTH and ICRC; decode_packet's
// too_short), then out_ok_o is 0 and the values are don't-care.
//
// Structure (two stages, for timing: docs/rtl/synthesis.md): the CRC is linear, so
// - every beat is folded whole in one cycle: crc_q = zeros_fold(W, crc_q) ^ beat_crc(beat), the
//   first beat from the masked pseudo-header (header_fold) instead of crc_q; the last beat's bytes
//   past popcount(keep) are zeros, so its register is the datagram's advanced by k = W - n zero
//   bytes. No beat needs its byte count, and none has to wait to learn whether it holds ICRC
//   bytes (every byte is folded in, ICRC included);
// - the cycle after the last beat, the result stage takes the k zero bytes and the 4 ICRC bytes
//   back off (unfold_low / unfold_high by k mod 8 and k / 8): the register before the ICRC word
//   w is then unfold(crc) ^ w, whose complement is the computed ICRC.
// The matrices are rtl/icrc_check/icrc_matrices_pkg.sv (gen_icrc_matrices_pkg.py). While a
// finished datagram waits for the result register (held by out_ready_i low), in_ready_o is low:
// in_ready_o = !pending || !out_valid_o || out_ready_i.
//
// Build-time define NAA_ICRC_CHECK_BROKEN: a deliberately wrong variant (the last beat's byte count
// wraps at W, so a full last beat counts as empty), used to prove that lockstep catches it.
`default_nettype none

module icrc_check #(
  parameter int unsigned W = 64  // bytes per beat
) (
  input  logic           clk_i,
  input  logic           rst_ni,

  input  logic           in_valid_i,
  output logic           in_ready_o,
  input  logic [8*W-1:0] in_data_i,
  input  logic [W-1:0]   in_keep_i,
  input  logic           in_last_i,
  input  logic [223:0]   in_ip_udp_i,

  output logic           out_valid_o,
  input  logic           out_ready_i,
  output logic           out_ok_o,
  output logic           out_short_o,
  output logic [31:0]    out_icrc_o,      // computed over the masked pseudo-header and datagram
  output logic [31:0]    out_received_o   // the datagram's last 4 bytes, little-endian
);

  if (W < 1 || W > 64 || (W & (W - 1)) != 0) begin : gen_w_check
    $fatal(1, "icrc_check: W must be a power of two in 1..64, got %0d", W);
  end

  localparam int unsigned Log2W = $clog2(W);
  localparam int unsigned CountW = Log2W + 1;  // a byte count 0..W
  localparam int unsigned MaskBeat = 4 / W;   // BTH byte 4 is in this beat...
  localparam int unsigned MaskLane = 4 % W;   // ...in this lane
  localparam int unsigned BeatW = $clog2(MaskBeat + 2);

  logic             in_fire;
  logic             advance;     // the result register takes the pending datagram at this edge
  logic             result_q;    // a result is on the output
  logic             pending_q;   // a finished datagram waits in crc_q, pad_q, tail_q, short_q
  logic [BeatW-1:0] beat_q;      // beats of the current datagram so far (saturating)
  logic [4:0]       len_q;       // bytes so far, saturating at 16 (only "< 16" matters)
  logic [31:0]      crc_q;       // raw register, every beat folded whole (the last zero-padded)
  logic [CountW-1:0] pad_q;      // k = W - n: zero bytes after the finished datagram's last byte
  logic [31:0]      tail_q;      // the last 4 bytes of the stream
  logic             short_q;     // the finished datagram is shorter than 16 bytes
  logic [31:0]      res_icrc_q;  // the result on the output: computed ICRC, received, short
  logic [31:0]      res_received_q;
  logic             res_short_q;

  assign advance    = !result_q || out_ready_i;
  assign in_ready_o = !pending_q || advance;
  assign in_fire    = in_valid_i && in_ready_o;

  // The end of the data in a beat: bit j is set for j = popcount(keep) alone, keep being a
  // contiguous prefix (docs/rtl/README.md "Streams"); the byte count and the tail are ORs of ANDs
  // over it, shallow where a population count is a deep adder tree (docs/rtl/synthesis.md).
  function automatic logic [W:0] keep_edge(logic [W-1:0] keep);
    keep_edge = {keep, 1'b1} & ~{1'b0, keep};  // bit j: keep[j-1] && !keep[j]
  endfunction
  function automatic logic [CountW-1:0] edge_count(logic [W:0] edge_at);
    edge_count = '0;
    for (int unsigned j = 1; j <= W; j++) begin
      if (edge_at[j]) edge_count = edge_count | CountW'(j);
    end
  endfunction

  // The IPv4/UDP headers with the variant fields set to ones.
  function automatic logic [223:0] mask_headers(logic [223:0] h);
    mask_headers = h;
    mask_headers[8*1 +: 8]   = 8'hFF;    // IPv4 TOS
    mask_headers[8*8 +: 8]   = 8'hFF;    // IPv4 TTL
    mask_headers[8*10 +: 16] = 16'hFFFF;  // IPv4 header checksum
    mask_headers[8*26 +: 16] = 16'hFFFF;  // UDP checksum
  endfunction

  // Control: result and pending flags, beat and byte counters.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      result_q  <= 1'b0;
      pending_q <= 1'b0;
      beat_q    <= '0;
      len_q     <= '0;
    end else begin
      if (advance) begin
        result_q  <= pending_q;
        pending_q <= 1'b0;
      end
      if (in_fire) begin
        if (in_last_i) begin
          pending_q <= 1'b1;
          beat_q    <= '0;
          len_q     <= '0;
        end else begin
          if (beat_q != '1) beat_q <= beat_q + 1'b1;
          // Every beat but the last is full: W bytes.
          if (len_q < 5'd16) len_q <= (W >= 16) ? 5'd16 : len_q + 5'(W);
        end
      end
    end
  end

  // Datapath registers: no reset (crc_q is written by every first beat before it is read, the
  // others with the datagram they describe). All of it sits in always_ff, so Verilator evaluates
  // it once per cycle, at the edge, and only for a beat or a result (issue 14 item 5).
  always_ff @(posedge clk_i) begin
    if (in_fire) begin : fire
      logic [W:0]        edge_at;
      logic [CountW-1:0] n;          // bytes of this beat
      logic [8*W-1:0]    data;       // the beat, BTH byte 4 masked, bytes past n zero
      logic [8*64-1:0]   placed;     // the beat in the top W bytes of 64 (beat_crc)
      logic [31:0]       start;      // the register the beat is folded into, advanced by W
      logic [8*W+31:0]   cat;        // {beat, previous tail}
      logic [31:0]       tail;
      edge_at = keep_edge(in_keep_i);
      n = edge_count(edge_at);
`ifdef NAA_ICRC_CHECK_BROKEN
      // Deliberate bug: the last beat's count is Log2W bits wide, so W bytes read as 0.
      if (in_last_i) n = {1'b0, n[Log2W-1:0]};
`endif
      data = in_data_i;
      if (beat_q == BeatW'(MaskBeat)) data[8*MaskLane +: 8] = 8'hFF;  // BTH byte 4
      // Bytes past n are zeros. A beat with every keep bit set (every beat but a partial last)
      // has none: the loop, a byte at a time, runs only for the others (issue 31: the same
      // value for every input, fewer operations per beat in Verilator).
      if (in_keep_i != '1) begin
        for (int unsigned i = 0; i < W; i++) data[8*i +: 8] = data[8*i +: 8] & {8{in_keep_i[i]}};
      end
      placed = '0;
      placed[8*(64-W) +: 8*W] = data;
      start = beat_q == '0 ? icrc_matrices_pkg::header_fold(W, mask_headers(in_ip_udp_i))
                           : icrc_matrices_pkg::zeros_fold(W, crc_q);
      crc_q <= start ^ icrc_matrices_pkg::beat_crc(placed);
      // The last 4 bytes of the stream after this beat: bytes n .. n+3 of {beat, tail} (a full
      // beat by a constant slice, else an AND-OR over the one-hot end position).
      cat = {in_data_i, tail_q};
      if (edge_at[W]) begin
        tail = cat[8*W +: 32];
      end else begin
        tail = '0;
        for (int unsigned t = 0; t < 4; t++) begin
          for (int unsigned j = 0; j < W; j++) begin
            tail[8*t +: 8] = tail[8*t +: 8] | (cat[8*(j+t) +: 8] & {8{edge_at[j]}});
          end
        end
      end
      tail_q <= tail;
      if (in_last_i) begin
        pad_q   <= CountW'(W) - n;
        short_q <= (8'(len_q) + 8'(n)) < 8'd16;
      end
    end
  end

  // Result stage: the finished datagram's register with its pad_q zero bytes and its ICRC word
  // taken back off is the register before the ICRC, whose complement is the computed ICRC.
  always_ff @(posedge clk_i) begin
    if (advance && pending_q) begin
      res_icrc_q <= ~(icrc_matrices_pkg::unfold_high(4'(8'(pad_q) >> 3),
                         icrc_matrices_pkg::unfold_low(3'(pad_q), crc_q)) ^ tail_q);
      res_received_q <= tail_q;
      res_short_q    <= short_q;
    end
  end

  assign out_valid_o    = result_q;
  assign out_short_o    = res_short_q;
  assign out_received_o = res_received_q;
  assign out_icrc_o     = res_icrc_q;
  assign out_ok_o       = !res_short_q && (res_icrc_q == res_received_q);

  // The valid/ready rules on both ports.
  naa_stream_assert #(.PayloadBits(9 * W + 1 + 224), .Port("icrc_check.in")) u_in_assert (
    .clk_i, .rst_ni, .valid_i(in_valid_i), .ready_i(in_ready_o),
    .payload_i({in_data_i, in_keep_i, in_last_i, in_ip_udp_i})
  );
  naa_stream_assert #(.PayloadBits(34), .Port("icrc_check.out")) u_out_assert (
    .clk_i, .rst_ni, .valid_i(out_valid_o), .ready_i(out_ready_i),
    .payload_i({out_ok_o, out_short_o, out_icrc_o})
  );

endmodule

`default_nettype wire
