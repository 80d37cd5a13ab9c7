// mr_table_sva: mr_table's port contract as assertions at the clock edge, and covers of the cases
// that matter (rtl/mr_table/README.md "Ports", "Behaviour", "Read port and free-entry search",
// "Timing"; docs/rtl/README.md "Assertions"). Bound to every mr_table instance by the `bind` at
// the end; naa_rtl_block() adds this file to the block's simulation and lint sources, never to
// synthesis. It sees the block's ports only, so it can also be Verilated alone and driven with
// traces the block would never produce: test rtl_sva (testbench/rtl/test_sva.cpp) makes every
// assertion here fire that way.
//
// A shadow of the table's valid bits, keys and owners, kept from the write port, gives the
// expected answer of the first three checks (no_entry, key_mismatch, owner_mismatch), of the
// read port's valid bit and key, and of the free-entry search. Bounds and permission are not
// re-computed here: the formal proof (scripts/formal.sh) covers "nothing out of bounds or
// without the right is granted"; a property here would also fire in the seeded-bug variant's
// lockstep tests, whose point is that lockstep catches it.
//
// Reset, and why every assertion and cover is immediate, at the edge, with the concurrent
// property it checks in a comment: as in rtl/rx_parser/rx_parser_sva.sv.
`default_nettype none

module mr_table_sva
  import mr_table_pkg::*;
(
  input wire                clk_i,
  input wire                rst_ni,
  input wire                wr_valid_i,
  input wire [IdxW-1:0]     wr_index_i,
  input wire                wr_entry_valid_i,
  input wire [31:0]         wr_rkey_i,
  input wire [23:0]         wr_owner_qpn_i,
  input wire                lk_valid_i,
  input wire [31:0]         lk_rkey_i,
  input wire [23:0]         lk_qpn_i,
  input wire                rsp_valid_o,
  input wire [2:0]          rsp_status_o,
  input wire                rd_valid_i,
  input wire [IdxW-1:0]     rd_index_i,
  input wire                rd_valid_o,
  input wire                rd_entry_valid_o,
  input wire [31:0]         rd_rkey_o,
  input wire [63:0]         rd_base_o,
  input wire [31:0]         rd_length_o,
  input wire [AccessW-1:0]  rd_access_o,
  input wire [23:0]         rd_owner_qpn_o,
  input wire                free_any_o,
  input wire [IdxW-1:0]     free_index_o,
  input wire [IdxW:0]       free_count_o
);

  // --- Reset: checks start after the first reset; ok0 for a property of one cycle, ok1 for
  // `|=>`; nets of their own (Verilator's SYNCASYNCNET, rx_parser_sva.sv).
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

  // --- The shadow table (valid bits reset, as the block's; keys and owners written first).
  logic [NumEntries-1:0] valid_q;
  logic [31:0]           rkey_q  [NumEntries];
  logic [23:0]           owner_q [NumEntries];

  // The free-entry search over a table's valid bits: how many entries are free, and the lowest
  // free index, counted as the entries below the lowest free one (the ones of free & -free,
  // minus one); 0 if none is free. The block computes it otherwise (a count kept at each write,
  // a one-hot to binary encoder). The shadow keeps the search of valid_q beside it, computed
  // when valid_q is written (a_free's expectation): the same values as a search of valid_q at
  // every edge, without two population counts per cycle (issue 31). Checker state: no coverage.
  /*verilator coverage_off*/
  function automatic logic [IdxW:0] count_free(logic [NumEntries-1:0] valid);
    return (IdxW + 1)'($countones(~valid));
  endfunction
  function automatic logic [IdxW-1:0] lowest_free(logic [NumEntries-1:0] valid);
    logic [NumEntries-1:0] free;
    free = ~valid;
    if (free == '0) return '0;
    return IdxW'($countones((free & (~free + 1'b1)) - 1'b1));
  endfunction
  logic [IdxW:0]   free_count_q;   // count_free(valid_q)
  logic [IdxW-1:0] lowest_free_q;  // lowest_free(valid_q)
  /*verilator coverage_on*/

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q       <= '0;
      free_count_q  <= count_free('0);
      lowest_free_q <= lowest_free('0);
    end else if (wr_valid_i) begin : write
      logic [NumEntries-1:0] valid_d;  // valid_q after this write
      valid_d             = valid_q;
      valid_d[wr_index_i] = wr_entry_valid_i;
      valid_q       <= valid_d;
      free_count_q  <= count_free(valid_d);
      lowest_free_q <= lowest_free(valid_d);
    end
  end
  always_ff @(posedge clk_i) begin
    if (wr_valid_i && wr_entry_valid_i) begin
      rkey_q[wr_index_i]  <= wr_rkey_i;
      owner_q[wr_index_i] <= wr_owner_qpn_i;
    end
  end

  // No caller's rule: every input has a defined answer (README "Ports", "Behaviour"); an entry
  // programmed at an index other than rkey[4:0] is legal and never found (c_misplaced below;
  // the random test programs some on purpose).

  // --- The block's side. Immediate assertions at the edge, each under its disable iff, with
  // its property in the comment above it, as in rtl/rx_parser/rx_parser_sva.sv, which says why:
  // at every eval(), Verilator 5.006 copies every signal a concurrent assertion reads into a
  // sampled variable (here the shadow's 32 keys and owners too) and keeps each $past in a
  // register of its own (issue 31). A `P |=> Q` registers `ok1 && P` at one edge (*_q) and
  // checks Q at the next edge where ok1 holds; a `$past(x)` is a copy of x taken at that first
  // edge. The expected first check of a lookup is a function of the shadow called at the edge
  // (first_checks()), the expected free search is kept with the shadow (above): the concurrent
  // version had nets for them that were evaluated again at every eval(). Checker state and
  // code: no coverage (the covers below count as before).
  /*verilator coverage_off*/

  // The first three checks of a lookup (README "Behaviour"), MrOk standing for "all passed".
  function automatic logic [2:0] first_checks(logic [31:0] rkey, logic [23:0] qpn);
    logic [IdxW-1:0] index;
    index = rkey[IdxW-1:0];
    if (!valid_q[index]) return MrNoEntry;
    if (rkey_q[index] != rkey) return MrKeyMismatch;
    if (owner_q[index] != qpn) return MrOwnerMismatch;
    return MrOk;
  endfunction

  logic        looked_q;        // ok1 && lk_valid_i: the lookup's |=> antecedents
  logic [2:0]  first3_q;        // $past(first3): the first failing check of that lookup
  logic        lk_idle_q;       // ok1 && !lk_valid_i: a_rsp_no_spurious'
  logic        read_q;          // ok1 && rd_valid_i: a_rd_latency's and a_rd_entry's
  logic        rd_idle_q;       // ok1 && !rd_valid_i: a_rd_no_spurious'
  logic        rd_exp_valid_q;  // $past of the entry that read asks for: its valid bit,
  logic [31:0] rd_exp_rkey_q;   // key
  logic [23:0] rd_exp_owner_q;  // and owner
  always_ff @(posedge clk_i) begin
    looked_q  <= ok1 && lk_valid_i;
    lk_idle_q <= ok1 && !lk_valid_i;
    read_q    <= ok1 && rd_valid_i;
    rd_idle_q <= ok1 && !rd_valid_i;
    if (ok1 && lk_valid_i) first3_q <= first_checks(lk_rkey_i, lk_qpn_i);
    if (ok1 && rd_valid_i) begin
      rd_exp_valid_q <= valid_q[rd_index_i];
      rd_exp_rkey_q  <= rkey_q[rd_index_i];
      rd_exp_owner_q <= owner_q[rd_index_i];
    end
  end

  // The checks under ok1 (the `|=>`) and those under ok0 (the one-cycle properties), each
  // group in one `if`: the same conditions as one `if (ok && P)` per property, tested once.
  always @(posedge clk_i) begin
    if (ok1) begin
      // Lookup: the answer one cycle after the request (README "Timing"), none without one, the
      // checks in order.
      if (looked_q) begin
        // lk_valid_i |=> rsp_valid_o
        a_rsp_latency: assert (rsp_valid_o)
        else $error("mr_table_sva a_rsp_latency: no answer the cycle after a lookup");
      end
      // lk_valid_i && first3 != MrOk |=> rsp_status_o == $past(first3)
      if (looked_q && first3_q != MrOk) begin
        a_rsp_first_checks: assert (rsp_status_o == first3_q)
        else $error("mr_table_sva a_rsp_first_checks: not the first failing of entry, key, owner");
      end
      // lk_valid_i && first3 == MrOk |=> rsp_status_o is MrOk, MrBounds or MrPermission
      if (looked_q && first3_q == MrOk) begin
        a_rsp_later_checks: assert (rsp_status_o == MrOk || rsp_status_o == MrBounds
                                    || rsp_status_o == MrPermission)
        else $error("mr_table_sva a_rsp_later_checks: entry, key and owner match, yet they failed");
      end
      // !lk_valid_i |=> !rsp_valid_o
      if (lk_idle_q) begin
        a_rsp_no_spurious: assert (!rsp_valid_o)
        else $error("mr_table_sva a_rsp_no_spurious: an answer without a lookup");
      end
      // Read port: the entry one cycle after the request.
      if (read_q) begin
        // rd_valid_i |=> rd_valid_o
        a_rd_latency: assert (rd_valid_o)
        else $error("mr_table_sva a_rd_latency: no read result the cycle after a read");
        // rd_valid_i |=> rd_entry_valid_o == $past(rd_exp_valid) && (!rd_entry_valid_o
        //   || rd_rkey_o == $past(rd_exp_rkey) && rd_owner_qpn_o == $past(rd_exp_owner))
        a_rd_entry: assert (rd_entry_valid_o == rd_exp_valid_q
                            && (!rd_entry_valid_o || (rd_rkey_o == rd_exp_rkey_q
                                                      && rd_owner_qpn_o == rd_exp_owner_q)))
        else $error("mr_table_sva a_rd_entry: the read does not show the entry written");
      end
      // !rd_valid_i |=> !rd_valid_o
      if (rd_idle_q) begin
        a_rd_no_spurious: assert (!rd_valid_o)
        else $error("mr_table_sva a_rd_no_spurious: a read result without a read");
      end
    end
    if (ok0) begin
      if (rsp_valid_o) begin
        // rsp_valid_o |-> rsp_status_o <= MrPermission: a status of the table
        a_rsp_status: assert (rsp_status_o <= MrPermission)
        else $error("mr_table_sva a_rsp_status: rsp_status_o is no mr_status_e value");
      end else begin
        // !rsp_valid_o |-> rsp_status_o == MrOk: MrOk while there is no answer
        a_rsp_idle_ok: assert (rsp_status_o == MrOk)
        else $error("mr_table_sva a_rsp_idle_ok: rsp_status_o is not ok while rsp_valid_o is low");
      end
      // !rd_entry_valid_o |-> {rd_rkey_o, rd_base_o, rd_length_o, rd_access_o,
      // rd_owner_qpn_o} == '0: an invalid entry reads all 0 (field by field: no 155-bit
      // concatenation to build)
      if (!rd_entry_valid_o) begin
        a_rd_zero: assert (rd_rkey_o == '0 && rd_base_o == '0 && rd_length_o == '0
                           && rd_access_o == '0 && rd_owner_qpn_o == '0)
        else $error("mr_table_sva a_rd_zero: an invalid entry does not read 0");
      end
      // Free-entry search: this cycle's table, before its write (the shadow before the edge).
      a_free: assert (free_count_o == free_count_q && free_any_o == (free_count_q != '0)
                      && free_index_o == lowest_free_q)
      else $error("mr_table_sva a_free: the free-entry search disagrees with the table");
    end
  end

  // --- Covers (counted with --coverage-user; docs/rtl/coverage.md), immediate at the edge like
  // the assertions (each under its disable iff (!ok0) but the reset one): every answer, each
  // check failing in turn; back-to-back lookups; a lookup of an entry written in the same cycle
  // (read before write); a full table; an invalid entry read; a reset with an answer due.
  // One cover per status, written out: Verilator 5.006 counts the covers of a generate loop as
  // one point for all iterations.
  logic lk_q = 1'b0;  // a lookup at the last edge (for the reset cover)
  always_ff @(posedge clk_i) lk_q <= lk_valid_i && !in_reset;
  always @(posedge clk_i) begin
    if (ok0) begin
      c_ok: cover (rsp_valid_o && rsp_status_o == MrOk);
      c_no_entry: cover (rsp_valid_o && rsp_status_o == MrNoEntry);
      c_key_mismatch: cover (rsp_valid_o && rsp_status_o == MrKeyMismatch);
      c_owner_mismatch: cover (rsp_valid_o && rsp_status_o == MrOwnerMismatch);
      c_bounds: cover (rsp_valid_o && rsp_status_o == MrBounds);
      c_permission: cover (rsp_valid_o && rsp_status_o == MrPermission);
      c_back_to_back: cover (lk_valid_i && rsp_valid_o);
      c_read_before_write: cover (lk_valid_i && wr_valid_i && wr_index_i == lk_rkey_i[IdxW-1:0]);
      c_full: cover (!free_any_o);
      c_misplaced: cover (wr_valid_i && wr_entry_valid_i && wr_index_i != wr_rkey_i[IdxW-1:0]);
      c_read_invalid: cover (rd_valid_o && !rd_entry_valid_o);
    end
    c_reset_answer_due: cover (in_reset && lk_q);
  end
  /*verilator coverage_on*/

endmodule

bind mr_table mr_table_sva u_mr_table_sva (.*);

`default_nettype wire
