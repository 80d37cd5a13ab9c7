// icrc_check_sva: icrc_check's port contract as assertions at the clock edge, and covers of the
// cases that matter (rtl/icrc_check/README.md "Ports", "Timing"; docs/rtl/README.md "Streams",
// "Assertions"). Bound to every icrc_check instance by the `bind` at the end; naa_rtl_block()
// adds this file to the block's simulation and lint sources, never to synthesis. It sees the
// block's ports only (connected by name), so it can also be Verilated alone and driven with
// traces that the block would never produce: test rtl_sva (testbench/rtl/test_sva.cpp) makes
// every assertion here fire that way; test rtl_icrc_check makes the caller's (in_*) ones fire on
// the real block. rtl/rx_parser/rx_parser_sva.sv is the same checker for the other receive
// block; the reset handling and why every check is immediate, at the edge, are explained there.
`default_nettype none

module icrc_check_sva #(
  parameter int unsigned W       = 64,
  parameter int unsigned Latency = 1   // the block's, README "Timing": 1 or 2
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
  input wire [223:0]   in_ip_udp_i,
  input wire           out_ok_o,
  input wire           out_short_o,
  input wire [31:0]    out_icrc_o,
  input wire [31:0]    out_received_o
);

  // --- Reset (as in rx_parser_sva): checks start after the first reset; ok0 for a property of
  // one cycle, ok1 for `|=>`; nets of their own (Verilator's SYNCASYNCNET).
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
  logic         in_fire, last_fire, out_wait, out_fire;
  logic [15:0]  bytes;
  logic [15:0]  count_q;   // bytes of the datagram coming in (accepted beats)
  logic [15:0]  len0_q, len1_q;  // bytes of the datagrams pend_q counts, oldest (on the output)
                                // first. Two variables: Verilator 5.006 fails internally on an
                                // array element in an assertion ("No VarRef ... under ArraySel")
  logic [1:0]   pend_q;    // datagrams whose last beat was accepted and whose result is not taken
  logic [Latency-1:0] flight_q;  // [i]: a last beat accepted i + 1 edges ago, never held since
  logic         mid_q = 1'b0;    // a datagram is partly in (a beat without last was accepted)
  logic         wait_q = 1'b0;   // a result waited for out_ready_i at the last edge
  assign in_fire   = in_valid_i && in_ready_o;
  assign last_fire = in_fire && in_last_i;
  assign out_wait  = out_valid_o && !out_ready_i;
  assign out_fire  = out_valid_o && out_ready_i;
  assign bytes     = 16'($countones(in_keep_i));
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q  <= '0;
      pend_q   <= '0;
      flight_q <= '0;
    end else begin
      if (in_fire) begin
        count_q <= in_last_i ? 16'd0 : count_q + bytes;
      end
      if (out_fire) len0_q <= len1_q;
      if (last_fire && pend_q - {1'b0, out_fire} != 2'd0) len1_q <= count_q + bytes;
      else if (last_fire) len0_q <= count_q + bytes;  // after the shift
      pend_q <= pend_q + {1'b0, last_fire} - {1'b0, out_fire};
      // A datagram moves on at an edge where the result register is free or being emptied.
      flight_q <= Latency'({flight_q, last_fire} & {{Latency{!out_wait}}, 1'b1});
    end
  end
  always_ff @(posedge clk_i) begin  // for the reset covers: not cleared until a reset edge
    wait_q <= !in_reset && out_wait;
    mid_q  <= !in_reset && (in_fire ? !in_last_i : mid_q);
  end

  // keep is a contiguous prefix (bytes 0..n-1): adding 1 clears every set bit.
  function automatic logic is_prefix(logic [W-1:0] k);
    return (k & (k + 1'b1)) == '0;
  endfunction

  // --- The caller's side (README "Ports": every beat but the last full, the last a prefix;
  // in_ip_udp_i held with the beats like their payload; docs/rtl/README.md "Streams": a waiting
  // beat stays, unchanged).
  // a_in_hold: an immediate assertion over a copy taken only while the beat waits, the same
  // check as `in_valid_i && !in_ready_o |=> in_valid_i && $stable(beat)` under disable iff (!ok1)
  // (rx_parser_sva.sv says why: issue 31, 801 bits here). No toggle coverage of the copy.
  logic in_waited_q = 1'b0;  // ok1 && a beat waited at the last edge
  /*verilator coverage_off*/
  logic [9*W+224:0] in_held_q;  // {in_data_i, in_keep_i, in_last_i, in_ip_udp_i} that waited
  /*verilator coverage_on*/
  always_ff @(posedge clk_i) begin
    in_waited_q <= ok1 && in_valid_i && !in_ready_o;
    if (ok1 && in_valid_i && !in_ready_o) begin
      in_held_q <= {in_data_i, in_keep_i, in_last_i, in_ip_udp_i};
    end
  end
  always @(posedge clk_i) begin
    if (ok1 && in_waited_q) begin
      a_in_hold: assert (in_valid_i
                         && {in_data_i, in_keep_i, in_last_i, in_ip_udp_i} == in_held_q)
      else $error("icrc_check_sva a_in_hold: a waiting input beat was dropped or changed");
    end
  end
  /*verilator coverage_off*/
  always @(posedge clk_i) begin  // in_valid_i && !in_last_i |-> &in_keep_i, and a prefix at last
    if (ok0 && in_valid_i) begin
      a_in_keep_full: assert (in_last_i || &in_keep_i)
      else $error("icrc_check_sva a_in_keep_full: a beat before the last is not full");
      a_in_keep_prefix: assert (!in_last_i || is_prefix(in_keep_i))
      else $error("icrc_check_sva a_in_keep_prefix: the last beat's keep is not a prefix");
    end
  end
  /*verilator coverage_on*/

  // --- The block's side. Immediate assertions at the edge, each under its disable iff, with
  // its property in the comment above it: a `|=>` registers its antecedent (with ok1) and checks
  // at the next edge where ok1 holds, $stable compares with a copy taken at the first edge
  // (rx_parser_sva.sv says why: Verilator 5.006's sampling, issue 31). No coverage of checker
  // state.
  /*verilator coverage_off*/
  logic out_waited_q;       // ok1 && out_wait: a_out_hold's antecedent
  logic [65:0] out_held_q;  // {out_ok_o, out_short_o, out_icrc_o, out_received_o} that waited
  always_ff @(posedge clk_i) begin
    out_waited_q <= ok1 && out_wait;
    if (ok1 && out_wait) out_held_q <= {out_ok_o, out_short_o, out_icrc_o, out_received_o};
  end
  // README "Timing": in_ready_o = !out_valid_o || out_ready_i at latency 1; at latency 2 a
  // finished datagram waits in a stage before the result register (pend_q counts it), and the
  // input is ready unless it waits and the result register is held.
  if (Latency == 1) begin : gen_ready1
    always @(posedge clk_i) begin
      if (ok0) begin
        a_ready: assert (in_ready_o == (!out_valid_o || out_ready_i))
        else $error("icrc_check_sva a_ready: in_ready_o is not !out_valid_o || out_ready_i");
      end
    end
  end else begin : gen_ready2
    always @(posedge clk_i) begin
      if (ok0) begin
        a_ready: assert (in_ready_o == (pend_q <= {1'b0, out_valid_o} || !out_wait))
        else $error("icrc_check_sva a_ready: in_ready_o is not !pending || !out_wait");
      end
    end
  end
  always @(posedge clk_i) begin
    if (ok0) begin
      // Latency: the result is out Latency cycles after the last beat is accepted, unless a
      // result held by out_ready_i low kept it back (flight_q[Latency-1] |-> out_valid_o) ...
      if (flight_q[Latency-1]) begin
        a_latency: assert (out_valid_o)
        else $error("icrc_check_sva a_latency: no result %0d cycle(s) after the last beat",
                    Latency);
      end
      if (out_valid_o) begin
        // ... and there is none without a datagram.
        a_no_spurious: assert (pend_q != 2'd0)
        else $error("icrc_check_sva a_no_spurious: a result without a datagram");
        // out_short_o: fewer than 16 bytes (README "Ports"); then out_ok_o is 0. Otherwise
        // out_ok_o says whether the computed ICRC is the one received.
        a_short: assert (out_short_o == (len0_q < 16'd16))
        else $error("icrc_check_sva a_short: out_short_o disagrees with the datagram's length");
        a_ok: assert (out_ok_o == (!out_short_o && out_icrc_o == out_received_o))
        else $error("icrc_check_sva a_ok: out_ok_o is not (!short && computed == received)");
      end
    end
    // A waiting result stays, unchanged: out_wait |=> out_valid_o && $stable(result).
    if (ok1 && out_waited_q) begin
      a_out_hold: assert (out_valid_o
                          && {out_ok_o, out_short_o, out_icrc_o, out_received_o} == out_held_q)
      else $error("icrc_check_sva a_out_hold: a waiting result was dropped or changed");
    end
  end

  // --- Covers (counted with --coverage-user; docs/rtl/coverage.md), immediate at the edge like
  // the assertions (each under its disable iff (!ok0) but the reset ones).
  always @(posedge clk_i) begin
    if (ok0) begin
      c_last_waits: cover (in_valid_i && in_last_i && !in_ready_o);  // back-pressure, last beat
      c_out_waits: cover (out_wait);
      c_back_to_back: cover (out_valid_o && out_ready_i && in_fire);  // next datagram as one leaves
      c_one_beat: cover (last_fire && !mid_q);
      c_empty: cover (last_fire && in_keep_i == '0);
      c_full_last: cover (last_fire && &in_keep_i);
      c_maximal: cover (out_valid_o && len0_q == 16'hFFFF);  // a 65535-byte datagram
      c_good: cover (out_valid_o && out_ok_o);
      c_bad: cover (out_valid_o && !out_ok_o && !out_short_o);
      c_short: cover (out_valid_o && out_short_o);
    end
    c_reset_mid_packet: cover (in_reset && mid_q);
    c_reset_result_waits: cover (in_reset && wait_q);
  end
  /*verilator coverage_on*/

endmodule

// Latency 2 (README "Timing": the beats folded, then a result stage); 1 for a block without it.
bind icrc_check icrc_check_sva #(.W(W), .Latency(2)) u_icrc_check_sva (.*);

`default_nettype wire
