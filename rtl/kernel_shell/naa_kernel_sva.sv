// naa_kernel_sva: the kernel contract of docs/rtl/kernel-shell.md ("Ports", "Streams", "Control")
// as assertions at the clock edge at a built-in kernel's ports, and covers of the cases that
// matter. Each built-in kernel's bind file (rtl/<kernel>/<kernel>_sva.sv) instantiates it with the
// kernel's shape and adds what is particular to the kernel; naa_rtl_block() adds both files to the
// kernel's simulation and lint sources, never to synthesis (docs/rtl/README.md "Assertions").
//
// Beyond the shell's own immediate checks (naa_stream_assert on src/dst, naa_ap_ctrl_assert),
// which any plug-in gets, this checks what the built-ins promise: TKEEP full on every beat but a
// packet's last and a prefix on the last (src: the caller's promise, dst: the kernel's), the
// call accepted in the cycle it is offered while idle (rtl/prim/naa_kernel_ctrl.sv), nothing
// taken or given outside a call, every src packet taken and every dst packet given by ap_done
// and none too many, ap_return a code of PROTOCOL.md 5.2, and for a reduction kernel
// (ResultLatency > 0: crc32, sum_u64, rtl/prim/naa_reduce_stream.sv) its one result beat exactly
// ResultLatency cycles after the last src beat, and at no other time.
//
// Checks start after the first reset and look at no cycle spent in reset (age_q: edges since
// the reset was released); separate nets rather than ap_rst_n in `disable iff` (Verilator's
// SYNCASYNCNET: a reset used both asynchronously and at a clock edge). Every check is an
// immediate assertion at the edge (below: why, and how each maps onto its property).
`default_nettype none

module naa_kernel_sva #(
  parameter int unsigned W             = 64,
  parameter int unsigned SrcPackets    = 1,  // src packets per call (vadd_i32: 2)
  parameter int unsigned ResultLatency = 0,  // a reduction: the result beat's latency, else 0
  parameter int unsigned ResultBytes   = 4,  // a reduction: the result's bytes
  parameter bit          ReturnsZero   = 1'b0  // ap_return is always 0
) (
  input wire           ap_clk,
  input wire           ap_rst_n,
  input wire           ap_start,
  input wire           ap_done,
  input wire           ap_idle,
  input wire           ap_ready,
  input wire [31:0]    ap_return,
  input wire [23:0]    user,
  input wire [8*W-1:0] src_TDATA,
  input wire [W-1:0]   src_TKEEP,
  input wire           src_TLAST,
  input wire           src_TVALID,
  input wire           src_TREADY,
  input wire [8*W-1:0] dst_TDATA,
  input wire [W-1:0]   dst_TKEEP,
  input wire           dst_TLAST,
  input wire           dst_TVALID,
  input wire           dst_TREADY
);

  localparam int unsigned AgeMax = 255;

  // --- Reset: ok0 for a property of one cycle, ok1 for `|=>` (okr below: the result latency).
  logic       armed_q = 1'b0;  // simulation-only state, hence the initializers
  logic [7:0] age_q = '0;
  logic       ok0, ok1, in_reset;
  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      armed_q <= 1'b1;
      age_q   <= '0;
    end else if (armed_q && age_q != 8'(AgeMax)) begin
      age_q <= age_q + 8'd1;
    end
  end
  assign ok0      = ap_rst_n && armed_q;
  assign ok1      = ok0 && age_q >= 8'd1;
  assign in_reset = !ap_rst_n;

  // --- Monitors: the call's packets so far.
  logic       load, take, give, src_last, dst_last, dst_wait;
  logic [1:0] src_pk_q, dst_pk_q;  // src packets taken, dst packets given in this call
  logic       in_call_q = 1'b0;    // a call accepted and not done (for the reset cover)
  logic       first_q = 1'b1;      // the next src beat starts a packet
  assign load     = ap_start && ap_ready;
  assign take     = src_TVALID && src_TREADY;
  assign give     = dst_TVALID && dst_TREADY;
  assign src_last = take && src_TLAST;
  assign dst_last = give && dst_TLAST;
  assign dst_wait = dst_TVALID && !dst_TREADY;
  always_ff @(posedge ap_clk or negedge ap_rst_n) begin
    if (!ap_rst_n) begin
      src_pk_q <= '0;
      dst_pk_q <= '0;
      first_q  <= 1'b1;
    end else begin
      if (load) begin
        src_pk_q <= '0;
        dst_pk_q <= '0;
      end else begin
        if (src_last && src_pk_q != 2'd3) src_pk_q <= src_pk_q + 2'd1;
        if (dst_last && dst_pk_q != 2'd3) dst_pk_q <= dst_pk_q + 2'd1;
      end
      if (take) first_q <= src_TLAST;
    end
  end
  always_ff @(posedge ap_clk) in_call_q <= !in_reset && (load || (in_call_q && !ap_done));

  function automatic logic is_prefix(logic [W-1:0] k);
    return (k & (k + 1'b1)) == '0;  // bytes 0..n-1: adding 1 clears every set bit
  endfunction

  // --- A waiting beat stays, unchanged (a_src_hold: the caller's promise; a_dst_hold: the
  // kernel's). Written as immediate assertions at the edge over a copy of the beat taken only
  // while it waits, not as `valid && !ready |=> valid && $stable(beat)`: Verilator 5.006 samples
  // every signal of a concurrent assertion at every eval() and keeps $past of the 577-bit beat at
  // every edge, ~1.2 k instructions per kernel cycle (issue 31). The same check: Verilator enables
  // a `|=>` at both of its edges (disable iff (!ok1) at the antecedent's edge, *_waited_q here,
  // and at the check's), the antecedent's beat is the copy, and the consequent is checked at the
  // next edge on the values of that cycle. The copies are checker state: no toggle coverage.
  logic src_waited_q = 1'b0;  // ok1 && a src beat waited at the last edge
  logic dst_waited_q = 1'b0;  // ok1 && a dst beat waited at the last edge
  /*verilator coverage_off*/
  logic [9*W:0] src_held_q, dst_held_q;  // {TDATA, TKEEP, TLAST} of the beat that waited
  /*verilator coverage_on*/
  always_ff @(posedge ap_clk) begin
    src_waited_q <= ok1 && src_TVALID && !src_TREADY;
    dst_waited_q <= ok1 && dst_wait;
    if (ok1 && src_TVALID && !src_TREADY) src_held_q <= {src_TDATA, src_TKEEP, src_TLAST};
    if (ok1 && dst_wait) dst_held_q <= {dst_TDATA, dst_TKEEP, dst_TLAST};
  end
  always @(posedge ap_clk) begin
    if (ok1 && src_waited_q) begin
      a_src_hold: assert (src_TVALID && {src_TDATA, src_TKEEP, src_TLAST} == src_held_q)
      else $error("naa_kernel_sva a_src_hold: a waiting src beat was dropped or changed");
    end
    if (ok1 && dst_waited_q) begin
      a_dst_hold: assert (dst_TVALID && {dst_TDATA, dst_TKEEP, dst_TLAST} == dst_held_q)
      else $error("naa_kernel_sva a_dst_hold: a waiting dst beat was dropped or changed");
    end
  end

  // --- The rest, immediate at the edge too, each under its disable iff and with its property in
  // the comment above it: a `P |=> Q` registers P with ok1 at one edge (*_q) and checks Q at
  // the next edge where ok1 holds; $stable compares with a copy taken at the first edge;
  // $past(x, N) is x through N flops written at every edge. Not concurrent: Verilator 5.006
  // copies every signal a concurrent assertion or cover reads into a sampled variable at the
  // start of every eval() (twice a cycle) and keeps each $past in a register of its own (issue
  // 31, docs/rtl/simulation-cost.md). Checker state and checker code: no coverage.
  /*verilator coverage_off*/
  logic        start_waited_q;  // ok1 && ap_start && !ap_ready: a_start_hold's antecedent
  logic [23:0] user_held_q;     // user at that edge (a_start_hold's $stable)
  logic        done_seen_q;     // ok1 && ap_done: a_done's antecedent
  logic        done_q;          // $past(ap_done) (c_back_to_back)
  always_ff @(posedge ap_clk) begin
    start_waited_q <= ok1 && ap_start && !ap_ready;
    if (ok1 && ap_start && !ap_ready) user_held_q <= user;
    done_seen_q <= ok1 && ap_done;
    done_q      <= ap_done;
  end

  always @(posedge ap_clk) begin
    // --- The caller's side ("Streams": TKEEP all ones but on a packet's last beat, a prefix
    // there; a waiting beat stays, unchanged. "Control": ap_start and user held until ap_ready).
    if (ok0 && src_TVALID) begin  // src_TVALID && !src_TLAST |-> &src_TKEEP, a prefix at last
      a_src_keep_full: assert (src_TLAST || &src_TKEEP)
      else $error("naa_kernel_sva a_src_keep_full: a src beat before the last is not full");
      a_src_keep_prefix: assert (!src_TLAST || is_prefix(src_TKEEP))
      else $error("naa_kernel_sva a_src_keep_prefix: src TKEEP on the last beat is not a prefix");
    end
    // ap_start && !ap_ready |=> ap_start && $stable(user)
    if (ok1 && start_waited_q) begin
      a_start_hold: assert (ap_start && user == user_held_q)
      else $error("naa_kernel_sva a_start_hold: ap_start or user changed before ap_ready");
    end

    // --- The kernel's side.
    if (ok0) begin
      if (dst_TVALID) begin  // dst_TVALID && !dst_TLAST |-> &dst_TKEEP, a prefix at last
        a_dst_keep_full: assert (dst_TLAST || &dst_TKEEP)
        else $error("naa_kernel_sva a_dst_keep_full: a dst beat before the last is not full");
        a_dst_keep_prefix: assert (!dst_TLAST || is_prefix(dst_TKEEP))
        else $error("naa_kernel_sva a_dst_keep_prefix: dst TKEEP on the last beat is not a prefix");
      end
      // naa_kernel_ctrl: a call is accepted in the cycle it is offered while idle, and only then.
      a_ready: assert (ap_ready == (ap_start && ap_idle))
      else $error("naa_kernel_sva a_ready: ap_ready is not ap_start && ap_idle");
      // ap_done: one cycle, not idle (ap_done |-> !ap_idle), then idle (below).
      if (ap_done) begin
        a_done_busy: assert (!ap_idle)
        else $error("naa_kernel_sva a_done_busy: ap_done together with ap_idle");
      end
      // Nothing taken or given outside a call (src_TREADY |-> !ap_idle, dst_TVALID |-> ...).
      if (src_TREADY) begin
        a_src_in_call: assert (!ap_idle)
        else $error("naa_kernel_sva a_src_in_call: src_TREADY while idle");
      end
      if (dst_TVALID) begin
        a_dst_in_call: assert (!ap_idle)
        else $error("naa_kernel_sva a_dst_in_call: a dst beat while idle");
      end
      // "Control": by ap_done the kernel has taken every src packet and given its one dst
      // packet; a second dst packet is one too many.
      if (ap_done) begin
        a_done_complete: assert (src_pk_q == 2'(SrcPackets) && dst_pk_q == 2'd1)
        else $error("naa_kernel_sva a_done_complete: ap_done before the src and dst packets moved");
      end
      if (dst_TVALID) begin
        a_dst_one_packet: assert (dst_pk_q == 2'd0)
        else $error("naa_kernel_sva a_dst_one_packet: a dst beat after the call's dst packet");
      end
      // PROTOCOL.md 5.2: 0, or a kernel-specific code 0x10..0x7F.
      if (ap_done) begin
        a_return: assert (ap_return == 32'd0 || (ap_return >= 32'h10 && ap_return <= 32'h7F))
        else $error("naa_kernel_sva a_return: ap_return is not 0 or 0x10..0x7F");
      end
    end
    // ap_done |=> !ap_done && ap_idle
    if (ok1 && done_seen_q) begin
      a_done: assert (!ap_done && ap_idle)
      else $error("naa_kernel_sva a_done: ap_done is not one cycle followed by idle");
    end
  end

  if (ReturnsZero) begin : gen_zero
    always @(posedge ap_clk) begin
      if (ok0 && ap_done) begin  // ap_done |-> ap_return == 0
        a_return_zero: assert (ap_return == 32'd0)
        else $error("naa_kernel_sva a_return_zero: ap_return is not 0");
      end
    end
  end

  // A reduction (naa_reduce_stream): the result beat ResultLatency cycles after the last src
  // beat is taken (crc32 and sum_u64 READMEs, "Timing"), then held until taken; no other beat.
  if (ResultLatency > 0) begin : gen_reduce
    logic okr;  // the last ResultLatency edges were out of reset
    assign okr = ok0 && 32'(age_q) >= ResultLatency;
    logic [ResultLatency-1:0] src_last_q;  // [i]: $past(src_last, i + 1)
    logic                     dst_wait_q;  // $past(dst_wait)
    always_ff @(posedge ap_clk) begin
      src_last_q <= ResultLatency'({src_last_q, src_last});
      dst_wait_q <= dst_wait;
    end
    always @(posedge ap_clk) begin
      if (okr) begin
        // $past(src_last, ResultLatency) |-> dst_TVALID
        if (src_last_q[ResultLatency-1]) begin
          a_result_latency: assert (dst_TVALID)
          else $error("naa_kernel_sva a_result_latency: no result beat %0d cycles after the last",
                      ResultLatency);
        end
        // !$past(src_last, ResultLatency) && !$past(dst_wait) |-> !dst_TVALID
        if (!src_last_q[ResultLatency-1] && !dst_wait_q) begin
          a_result_no_spurious: assert (!dst_TVALID)
          else $error("naa_kernel_sva a_result_no_spurious: a result beat without a packet");
        end
      end
      // dst_TVALID |-> the result beat, under disable iff (!ok0): TDATA read only then.
      if (ok0 && dst_TVALID) begin
        a_result_beat: assert (dst_TLAST && dst_TKEEP == W'({ResultBytes{1'b1}})
                               && (dst_TDATA >> (8 * ResultBytes)) == '0)
        else $error("naa_kernel_sva a_result_beat: the result beat is not %0d bytes, last",
                    ResultBytes);
      end
    end
  end

  // --- Covers (counted with --coverage-user; docs/rtl/coverage.md), immediate at the edge like
  // the assertions (each under its disable iff but the reset one).
  always @(posedge ap_clk) begin
    if (ok0) begin
      c_dst_last_waits: cover (dst_wait && dst_TLAST);  // back-pressure on the last beat
      c_src_empty: cover (src_last && src_TKEEP == '0);  // an empty region
      c_src_one_beat: cover (src_last && first_q && src_TKEEP != '0);
      c_src_full_last: cover (src_last && !first_q && &src_TKEEP);  // ends on a beat boundary
      c_src_partial_last: cover (src_last && !first_q && !(&src_TKEEP) && src_TKEEP != '0);
    end
    if (ok1) c_back_to_back: cover (load && done_q);  // a call right after another
    c_reset_mid_call: cover (in_reset && in_call_q);
  end
  /*verilator coverage_on*/

endmodule

`default_nettype wire
