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
// Output: one result per datagram, one cycle after its last beat is accepted, held until
// out_ready_i; in_ready_o = !out_valid_o || out_ready_i. out_short_o: fewer than 16 bytes (no BTH
// and ICRC; decode_packet's too_short), then out_ok_o is 0 and the values are don't-care.
//
// Structure: the CRC is linear, so a beat's step is (register >> 8n) XOR one constant 256 x 32
// table per byte lane (crc32_lanes_pkg, rtl/icrc_check/gen_crc32_lanes_pkg.py): the columns of
// crc32_pkg's XOR matrices for that byte, tabulated; synthesis turns the tables back into the same
// XOR gates, Verilator evaluates one load per byte. The first beat starts from the masked
// pseudo-header (IcrcSeed = the register after init and 8 bytes of 0xFF, then 16 + 8 + 4 bytes of
// masked IPv4/UDP). Every byte of the datagram is folded in, ICRC included (so no beat has to wait
// to learn whether it holds ICRC bytes); the register before the ICRC word w is then
// unfold_zero4(c) ^ w, whose complement is the computed ICRC.
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
  localparam int unsigned MaskBeat = 4 / W;   // BTH byte 4 is in this beat...
  localparam int unsigned MaskLane = 4 % W;   // ...in this lane
  localparam int unsigned BeatW = $clog2(MaskBeat + 2);
  // The raw register after init 0xFFFFFFFF and 8 bytes of 0xFF (PROTOCOL.md 2).
  localparam logic [31:0] IcrcSeed = crc32_pkg::fold8(32'hFFFFFFFF, {8{8'hFF}});
  // The seed advanced over 28 zero bytes: the pseudo-header's register is this XOR its bytes'
  // lanes (linearity, rtl/icrc_check/gen_crc32_lanes_pkg.py).
  localparam logic [31:0] HdrZero =
      crc32_pkg::fold4(crc32_pkg::fold8(crc32_pkg::fold16(IcrcSeed, '0), '0), '0);

  logic             in_fire;
  logic             result_q;
  logic [BeatW-1:0] beat_q;            // beats of the current datagram so far (saturating)
  logic [15:0]      len_q;             // bytes so far (saturating: only "< 16" matters)
  logic [31:0]      crc_q;             // raw register of the current datagram
  logic [31:0]      res_icrc_q;        // the computed ICRC of the datagram whose result is out
  logic [31:0]      tail_q;            // the last 4 bytes of the stream
  logic             res_short_q;

  assign in_ready_o = !result_q || out_ready_i;
  assign in_fire    = in_valid_i && in_ready_o;

  // Bytes of a beat: popcount(keep).
  function automatic logic [Log2W:0] beat_count(logic [W-1:0] keep, logic last);
`ifdef NAA_ICRC_CHECK_BROKEN
    // Deliberate bug: the last beat's count is Log2W bits wide, so W bytes read as 0.
    if (last) return {1'b0, Log2W'($countones(keep))};
`else
    if (last) return ($bits(beat_count))'($countones(keep));
`endif
    return ($bits(beat_count))'($countones(keep));
  endfunction

  // The IPv4/UDP headers with the variant fields set to ones.
  function automatic logic [223:0] mask_headers(logic [223:0] h);
    logic [223:0] m;
    m = h;
    m[8*1 +: 8]   = 8'hFF;    // IPv4 TOS
    m[8*8 +: 8]   = 8'hFF;    // IPv4 TTL
    m[8*10 +: 16] = 16'hFFFF;  // IPv4 header checksum
    m[8*26 +: 16] = 16'hFFFF;  // UDP checksum
    return m;
  endfunction

  // The raw register after the masked pseudo-header: the seed, then its 16 + 8 + 4 bytes.
  function automatic logic [31:0] pseudo_header_crc(logic [223:0] headers);
    logic [31:0] crc;
    crc = HdrZero;
    for (int unsigned k = 0; k < 28; k++) crc ^= crc32_lanes_pkg::lane(27 - k, headers[8*k +: 8]);
    return crc;
  endfunction

  // The register advanced over the low `n` bytes of a beat: (crc >> 8n) ^ the lanes of the
  // bytes with crc folded into the first four, the byte k of n looked up with n-1-k bytes after
  // it (rtl/icrc_check/gen_crc32_lanes_pkg.py). A partial beat is first moved to the top of the
  // beat, so that lane W-1-k serves every n; the zero bytes below add nothing.
  function automatic logic [31:0] advance(logic [31:0] crc, logic [8*W-1:0] beat,
                                          logic [Log2W:0] n);
    logic [8*W-1:0] x;
    logic [31:0]    r;
    x = beat;
    for (int unsigned k = 0; k < W && k < 4; k++) x[8*k +: 8] = x[8*k +: 8] ^ crc[8*k +: 8];
    r = '0;
    if (n != ($bits(n))'(W)) begin
      x = x & ~({(8*W){1'b1}} << (32'(n) * 8));
      x = x << ((W - 32'(n)) * 8);
      if (n < 4) r = crc >> (32'(n) * 8);
    end
    for (int unsigned k = 0; k < W; k++) r ^= crc32_lanes_pkg::lane(W - 1 - k, x[8*k +: 8]);
    return r;
  endfunction

  // Control: the result flag, beat and byte counters.
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
          if (beat_q != '1) beat_q <= beat_q + 1'b1;
          if (len_q < 16'd16) len_q <= len_q + 16'(beat_count(in_keep_i, in_last_i));
        end
      end
    end
  end

  // Datapath registers: no reset (crc_q is written by every first beat before it is read). All
  // of it sits in this always_ff, so Verilator evaluates it once per cycle, at the edge, and only
  // for a beat (issue 14 item 5); the ICRC itself is computed once, with the last beat.
  always_ff @(posedge clk_i) begin
    if (in_fire) begin : fire
      logic [Log2W:0] n;
      logic [8*W-1:0] data;       // the beat with BTH byte 4 masked
      logic [31:0]    crc;
      logic [31:0]    tail;
      n    = beat_count(in_keep_i, in_last_i);
      data = in_data_i;
      if (beat_q == BeatW'(MaskBeat)) data[8*MaskLane +: 8] = 8'hFF;  // BTH byte 4
      crc  = advance(beat_q == '0 ? pseudo_header_crc(mask_headers(in_ip_udp_i)) : crc_q, data,
                     n);
      // The last 4 bytes of the stream after this beat: bytes n .. n+3 of {beat, tail}.
      if (W >= 4 && n == ($bits(n))'(W)) tail = in_data_i[8*W-1 -: 32];
      else tail = 32'({in_data_i, tail_q} >> (32'(n) * 8));
      tail_q <= tail;
      crc_q  <= crc;
      if (in_last_i) begin
        // Every byte was folded in, ICRC included: the register before the ICRC word is
        // unfold_zero4(crc) ^ tail, whose complement is the computed ICRC.
        res_icrc_q  <= ~(crc32_pkg::unfold_zero4(crc) ^ tail);
        res_short_q <= (len_q + 16'(n)) < 16'd16;
      end
    end
  end

  assign out_valid_o    = result_q;
  assign out_short_o    = res_short_q;
  assign out_received_o = tail_q;
  assign out_icrc_o     = res_icrc_q;
  assign out_ok_o       = !res_short_q && (res_icrc_q == tail_q);

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
