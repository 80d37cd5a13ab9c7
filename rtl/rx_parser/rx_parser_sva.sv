// rx_parser_sva: rx_parser's port contract as assertions at the clock edge, and covers of the cases
// that matter (rtl/rx_parser/README.md "Ports", "Behaviour", "Timing"; docs/rtl/README.md
// "Streams", "Assertions"). Bound to every rx_parser instance by the `bind` at the end;
// naa_rtl_block() adds this file to the block's simulation and lint sources, never to synthesis. It
// sees the block's ports only (connected by name), so it can also be Verilated alone and driven
// with traces that the block would never produce: test rtl_sva (testbench/rtl/test_sva.cpp) makes
// every assertion here fire that way; test rtl_rx_parser makes the caller's (in_*) ones fire on the
// real block.
//
// Every assertion and cover is immediate, in an `always @(posedge clk_i)`, and says in a comment
// which concurrent property it checks ("The block's side" below says how one maps onto the
// other and why: the cost of Verilator 5.006's sampling, issue 31).
// Failure messages name the assertion (tests look for the label).
`default_nettype none

module rx_parser_sva #(
  parameter int unsigned W = 64
) (
  input wire           clk_i,
  input wire           rst_ni,
  input wire           in_valid_i,
  input wire           in_ready_o,
  input wire [8*W-1:0] in_data_i,
  input wire [W-1:0]   in_keep_i,
  input wire           in_last_i,
  input wire           out_valid_o,
  input wire           out_ready_i,
  input wire [7:0]     out_reason_o,
  input wire [15:0]    out_length_o,
  input wire [7:0]     out_opcode_o,
  input wire [3:0]     out_tver_o,
  input wire [1:0]     out_pad_o,
  input wire [8:0]     out_headers_o,
  input wire [15:0]    out_payload_offset_o,
  input wire [15:0]    out_payload_length_o
);

  // naa::protocol::Error (the block's out_reason_o values).
  localparam logic [7:0] ErrTooShort = 8'd1;
  localparam logic [7:0] ErrLast = 8'd6;  // length_mismatch, the highest reason

  // --- Reset. A check starts after the first reset (flops start random before it,
  // --x-initial unique) and looks at no cycle spent in reset: ok0 for properties of one cycle,
  // ok1 for `|=>` (the cycle before was out of reset too). Separate nets rather than rst_ni in
  // `disable iff`: Verilator flags a reset used both asynchronously (the block's flops) and at a
  // clock edge as SYNCASYNCNET, which a checker does on purpose.
  logic armed_q = 1'b0;  // simulation-only state, hence the initializers
  logic live_q = 1'b0;
  logic ok0, ok1, in_reset;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      armed_q <= 1'b1;
      live_q  <= 1'b0;
    end else begin
      live_q <= armed_q;
    end
  end
  assign ok0      = rst_ni && armed_q;
  assign ok1      = rst_ni && live_q;
  assign in_reset = !rst_ni;

  // --- Monitors (plain flops: what the properties compare with).
  logic         in_fire, last_fire, out_wait;
  logic [15:0]  bytes;
  logic [15:0]  count_q;   // bytes of the datagram coming in (accepted beats)
  logic [15:0]  length_q;  // bytes of the last datagram whose last beat was accepted
  logic         mid_q = 1'b0;     // a datagram is partly in (a beat without last was accepted)
  logic         wait_q = 1'b0;    // a result waited for out_ready_i at the last edge
  assign in_fire   = in_valid_i && in_ready_o;
  assign last_fire = in_fire && in_last_i;
  assign out_wait  = out_valid_o && !out_ready_i;
  assign bytes     = 16'($countones(in_keep_i));
  always_ff @(posedge clk_i) begin
    wait_q <= !in_reset && out_wait;
    if (in_reset) begin
      count_q <= '0;
      mid_q   <= 1'b0;
    end else if (in_fire) begin
      count_q <= in_last_i ? 16'd0 : count_q + bytes;
      mid_q   <= !in_last_i;
      if (in_last_i) length_q <= count_q + bytes;
    end
  end

  // keep is a contiguous prefix (bytes 0..n-1): adding 1 clears every set bit.
  function automatic logic is_prefix(logic [W-1:0] k);
    return (k & (k + 1'b1)) == '0;
  endfunction

  // --- The caller's side (README "Ports": every beat but the last full, the last a prefix;
  // docs/rtl/README.md "Streams": a waiting beat stays, unchanged).
  // a_in_hold is an immediate assertion at the edge over a copy of the beat taken only while it
  // waits: the same check as `in_valid_i && !in_ready_o |=> in_valid_i && $stable(beat)` under
  // disable iff (!ok1), which Verilator 5.006 enables at both of its edges (in_waited_q holds
  // the antecedent's), without sampling the 577-bit beat at every eval() and keeping its $past
  // at every edge (issue 31). The copy is checker state: no toggle coverage.
  logic in_waited_q = 1'b0;  // ok1 && a beat waited at the last edge
  /*verilator coverage_off*/
  logic [9*W:0] in_held_q;   // {in_data_i, in_keep_i, in_last_i} of the beat that waited
  /*verilator coverage_on*/
  always_ff @(posedge clk_i) begin
    in_waited_q <= ok1 && in_valid_i && !in_ready_o;
    if (ok1 && in_valid_i && !in_ready_o) in_held_q <= {in_data_i, in_keep_i, in_last_i};
  end
  always @(posedge clk_i) begin
    if (ok1 && in_waited_q) begin
      a_in_hold: assert (in_valid_i && {in_data_i, in_keep_i, in_last_i} == in_held_q)
      else $error("rx_parser_sva a_in_hold: a waiting input beat was dropped or changed");
    end
  end
  /*verilator coverage_off*/
  always @(posedge clk_i) begin  // in_valid_i && !in_last_i |-> &in_keep_i, and a prefix at last
    if (ok0 && in_valid_i) begin
      a_in_keep_full: assert (in_last_i || &in_keep_i)
      else $error("rx_parser_sva a_in_keep_full: a beat before the last is not full");
      a_in_keep_prefix: assert (!in_last_i || is_prefix(in_keep_i))
      else $error("rx_parser_sva a_in_keep_prefix: the last beat's keep is not a prefix");
    end
  end
  /*verilator coverage_on*/

  // --- The block's side.
  // Immediate assertions at the edge, as all the checks here: the property of each in the
  // comment above it, under its disable iff (ok0 or ok1). A `P |=> Q` is `P`, with its ok1,
  // registered at one edge (*_q) and `Q` checked at the next edge where ok1 holds (Verilator
  // 5.006 enables a `|=>` at both of its edges); a `$stable(x)` compares with a copy of x taken
  // at that first edge. Not concurrent: Verilator 5.006 copies every signal a concurrent
  // assertion or cover reads into a sampled variable at the start of every eval() (twice a
  // cycle) and keeps each $past in a register of its own (issue 31,
  // docs/rtl/simulation-cost.md). The registered antecedents are checker state: no coverage.
  /*verilator coverage_off*/
  logic out_waited_q;  // ok1 && out_wait: a_out_hold's antecedent
  logic last_fired_q;  // ok1 && last_fire: a_latency's
  logic quiet_q;       // ok1 && !last_fire && !out_wait: a_no_spurious'
  logic [72:0] out_held_q;  // the result fields that waited (a_out_hold's $stable)
  always_ff @(posedge clk_i) begin
    out_waited_q <= ok1 && out_wait;
    last_fired_q <= ok1 && last_fire;
    quiet_q      <= ok1 && !last_fire && !out_wait;
    if (ok1 && out_wait) begin
      out_held_q <= {out_reason_o, out_length_o, out_opcode_o, out_headers_o,
                     out_payload_offset_o, out_payload_length_o};
    end
  end
  always @(posedge clk_i) begin
    if (ok0) begin
      // README "Timing": in_ready_o = !out_valid_o || out_ready_i.
      a_ready: assert (in_ready_o == (!out_valid_o || out_ready_i))
      else $error("rx_parser_sva a_ready: in_ready_o is not !out_valid_o || out_ready_i");
    end
    // A waiting result stays, unchanged: out_wait |=> out_valid_o && $stable(result).
    if (ok1 && out_waited_q) begin
      a_out_hold: assert (out_valid_o
                          && {out_reason_o, out_length_o, out_opcode_o, out_headers_o,
                              out_payload_offset_o, out_payload_length_o} == out_held_q)
      else $error("rx_parser_sva a_out_hold: a waiting result was dropped or changed");
    end
    // Latency: the result is out in the cycle after the last beat is accepted (last_fire |=>
    // out_valid_o) ...
    if (ok1 && last_fired_q) begin
      a_latency: assert (out_valid_o)
      else $error("rx_parser_sva a_latency: no result the cycle after the last beat");
    end
    // ... and there is none without a datagram: a result is new, or the one still waiting
    // (!last_fire && !out_wait |=> !out_valid_o).
    if (ok1 && quiet_q) begin
      a_no_spurious: assert (!out_valid_o)
      else $error("rx_parser_sva a_no_spurious: a result without a datagram");
    end
    // out_length_o: the datagram's bytes (README "Ports"); fewer than 16 is too_short, the
    // first check (README "Behaviour").
    if (ok1 && out_valid_o) begin
      a_length: assert (out_length_o == length_q)
      else $error("rx_parser_sva a_length: out_length_o is not the datagram's byte count");
    end
    if (ok0 && out_valid_o) begin
      if (out_length_o < 16'd16) begin
        a_too_short: assert (out_reason_o == ErrTooShort)
        else $error("rx_parser_sva a_too_short: a datagram under 16 bytes is not too_short");
      end
      a_reason: assert (out_reason_o <= ErrLast)
      else $error("rx_parser_sva a_reason: out_reason_o is no protocol::Error value");
      // A well-formed datagram is headers + payload + pad + ICRC, TVer 0 (PROTOCOL.md 1).
      if (out_reason_o == 8'd0) begin
        a_well_formed: assert (out_tver_o == 4'd0
                               && 18'(out_payload_offset_o) + 18'(out_payload_length_o)
                                  + 18'(out_pad_o) + 18'd4 == 18'(out_length_o))
        else $error("rx_parser_sva a_well_formed: fields of a well-formed datagram do not add up");
      end
    end
  end

  // --- Covers (counted with --coverage-user; docs/rtl/coverage.md), immediate at the edge like
  // the assertions (each under its disable iff (!ok0) but the reset ones).
  logic out_fire;
  assign out_fire = out_valid_o && out_ready_i;
  always @(posedge clk_i) begin
    if (ok0) begin
      c_last_waits: cover (in_valid_i && in_last_i && !in_ready_o);  // back-pressure, last beat
      c_out_waits: cover (out_wait);
      c_back_to_back: cover (out_valid_o && out_ready_i && in_fire);  // next datagram as one leaves
      c_one_beat: cover (last_fire && !mid_q);
      c_empty: cover (last_fire && in_keep_i == '0);
      c_full_last: cover (last_fire && &in_keep_i);
      c_maximal: cover (out_valid_o && out_length_o == 16'hFFFF);  // a 65535-byte datagram
      // Every drop reason, and none, one cover each (Verilator 5.006 counts the covers of a
      // generate loop as one point for all iterations).
      c_well_formed: cover (out_fire && out_reason_o == 8'd0);
      c_too_short: cover (out_fire && out_reason_o == ErrTooShort);
      c_too_long: cover (out_fire && out_reason_o == 8'd2);
      c_bad_tver: cover (out_fire && out_reason_o == 8'd3);
      c_bad_pad: cover (out_fire && out_reason_o == 8'd4);
      c_unknown_opcode: cover (out_fire && out_reason_o == 8'd5);
      c_length_mismatch: cover (out_fire && out_reason_o == ErrLast);
    end
    c_reset_mid_packet: cover (in_reset && mid_q);
    c_reset_result_waits: cover (in_reset && wait_q);
  end
  /*verilator coverage_on*/

endmodule

bind rx_parser rx_parser_sva #(.W(W)) u_rx_parser_sva (.*);

`default_nettype wire
