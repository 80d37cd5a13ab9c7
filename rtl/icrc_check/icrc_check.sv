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
// Structure: every CRC step is a constant XOR matrix of crc32_pkg (rtl/crc32/gen_crc32_pkg.py).
// The first beat starts from the masked pseudo-header (IcrcSeed = the register after init and 8
// bytes of 0xFF, then 16 + 8 + 4 bytes of masked IPv4/UDP). Every byte of the datagram is folded
// in, ICRC included (so no beat has to wait to learn whether it holds ICRC bytes); the register
// before the ICRC word w is then unfold_zero4(c) ^ w, whose complement is the computed ICRC.
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

  logic [Log2W:0]   count;
  logic             in_fire;
  logic             result_d, result_q;
  logic [BeatW-1:0] beat_d, beat_q;    // beats of the current datagram so far (saturating)
  logic [15:0]      len_d, len_q;      // bytes so far (saturating: only "< 16" matters)
  logic [31:0]      crc_q;             // raw register of the current datagram
  logic [31:0]      res_crc_q;         // raw register after the whole datagram, ICRC included
  logic [31:0]      tail_d, tail_q;    // the last 4 bytes of the stream
  logic             res_short_d, res_short_q;
  logic [223:0]     masked;            // the IPv4/UDP headers with the variant fields set to ones
  logic [8*W-1:0]   data;              // the beat with BTH byte 4 masked
  logic [8*W+31:0]  window;

  assign in_ready_o = !result_q || out_ready_i;
  assign in_fire    = in_valid_i && in_ready_o;
`ifdef NAA_ICRC_CHECK_BROKEN
  // Deliberate bug: the last beat's count is Log2W bits wide, so W bytes read as 0.
  assign count = in_last_i ? {1'b0, Log2W'($countones(in_keep_i))}
                           : ($bits(count))'($countones(in_keep_i));
`else
  assign count = ($bits(count))'($countones(in_keep_i));
`endif

  always_comb begin
    masked = in_ip_udp_i;
    masked[8*1 +: 8]   = 8'hFF;   // IPv4 TOS
    masked[8*8 +: 8]   = 8'hFF;   // IPv4 TTL
    masked[8*10 +: 16] = 16'hFFFF;  // IPv4 header checksum
    masked[8*26 +: 16] = 16'hFFFF;  // UDP checksum
  end

  // The raw register after the masked pseudo-header: the seed, then 16 + 8 + 4 header bytes.
  function automatic logic [31:0] pseudo_header_crc(logic [223:0] headers);
    logic [31:0] crc;
    crc = crc32_pkg::fold16(IcrcSeed, headers[127:0]);
    crc = crc32_pkg::fold8(crc, headers[191:128]);
    return crc32_pkg::fold4(crc, headers[223:192]);
  endfunction

  // The register advanced over the low `n` bytes of a beat, as power-of-two chunks, largest
  // first (as rtl/crc32/crc32.sv).
  function automatic logic [31:0] advance(logic [31:0] crc, logic [8*W-1:0] beat,
                                          logic [Log2W:0] n);
    logic [8*W-1:0] rest;
    rest = beat;
    for (int unsigned s = 0; s <= Log2W; s++) begin
      if (n[Log2W - s]) begin
        crc  = crc32_pkg::fold(Log2W - s, crc, 512'(rest));
        rest = rest >> (8 << (Log2W - s));
      end
    end
    return crc;
  endfunction

  always_comb begin
    data = in_data_i;
    if (beat_q == BeatW'(MaskBeat)) data[8*MaskLane +: 8] = 8'hFF;  // BTH byte 4
  end

  assign window = {in_data_i, tail_q};

  always_comb begin
    result_d    = result_q;
    beat_d      = beat_q;
    len_d       = len_q;
    res_short_d = res_short_q;
    tail_d      = tail_q;
    if (result_q && out_ready_i) result_d = 1'b0;
    if (in_fire) begin
      tail_d = 32'(window >> (8 * count));
      if (in_last_i) begin
        result_d    = 1'b1;
        res_short_d = (len_q + 16'(count)) < 16'd16;
        beat_d      = '0;
        len_d       = '0;
      end else begin
        if (beat_q != '1) beat_d = beat_q + 1'b1;
        if (len_q < 16'd16) len_d = len_q + 16'(count);
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      result_q <= 1'b0;
      beat_q   <= '0;
      len_q    <= '0;
    end else begin
      result_q <= result_d;
      beat_q   <= beat_d;
      len_q    <= len_d;
    end
  end

  // Datapath registers: no reset (crc_q is written by every first beat before it is read). The
  // CRC is advanced here rather than in an always_comb: the same next-state logic, but Verilator
  // evaluates the XOR matrices once per cycle, at the edge (issue 14 item 5).
  always_ff @(posedge clk_i) begin
    res_short_q <= res_short_d;
    tail_q      <= tail_d;
    if (in_fire) begin
      if (in_last_i) begin
        res_crc_q <= advance(beat_q == '0 ? pseudo_header_crc(masked) : crc_q, data, count);
      end else begin
        crc_q <= advance(beat_q == '0 ? pseudo_header_crc(masked) : crc_q, data, count);
      end
    end
  end

  assign out_valid_o    = result_q;
  assign out_short_o    = res_short_q;
  assign out_received_o = tail_q;
  assign out_icrc_o     = ~(crc32_pkg::unfold_zero4(res_crc_q) ^ tail_q);
  assign out_ok_o       = !res_short_q && (out_icrc_o == tail_q);

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
