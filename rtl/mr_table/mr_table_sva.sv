// mr_table_sva: mr_table's port contract as concurrent assertions, and covers of the cases that
// matter (rtl/mr_table/README.md "Ports", "Behaviour", "Read port and free-entry search",
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
// Reset and the SVA subset Verilator 5.006 takes: as in rtl/rx_parser/rx_parser_sva.sv.
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
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
    end else if (wr_valid_i) begin
      valid_q[wr_index_i] <= wr_entry_valid_i;
    end
  end
  always_ff @(posedge clk_i) begin
    if (wr_valid_i && wr_entry_valid_i) begin
      rkey_q[wr_index_i]  <= wr_rkey_i;
      owner_q[wr_index_i] <= wr_owner_qpn_i;
    end
  end

  // The first three checks of a lookup (README "Behaviour"), MrOk standing for "all passed".
  logic [IdxW-1:0] lk_index;
  logic [2:0]      first3;
  assign lk_index = lk_rkey_i[IdxW-1:0];
  always_comb begin
    if (!valid_q[lk_index]) first3 = MrNoEntry;
    else if (rkey_q[lk_index] != lk_rkey_i) first3 = MrKeyMismatch;
    else if (owner_q[lk_index] != lk_qpn_i) first3 = MrOwnerMismatch;
    else first3 = MrOk;
  end

  // The entry a read asks for. A net each: Verilator 5.006 fails internally on $past of an
  // array element ("No VarRef or Const under ArraySel").
  logic        rd_exp_valid;
  logic [31:0] rd_exp_rkey;
  logic [23:0] rd_exp_owner;
  assign rd_exp_valid = valid_q[rd_index_i];
  assign rd_exp_rkey  = rkey_q[rd_index_i];
  assign rd_exp_owner = owner_q[rd_index_i];

  // The free-entry search over the shadow: how many are free, the lowest free index (0 if none).
  logic [IdxW:0]   free_count;
  logic [IdxW-1:0] lowest_free;
  always_comb begin
    free_count  = (IdxW + 1)'($countones(~valid_q));
    lowest_free = '0;
    for (int i = NumEntries - 1; i >= 0; i--) begin
      if (!valid_q[i]) lowest_free = IdxW'(i);
    end
  end

  // No caller's rule: every input has a defined answer (README "Ports", "Behaviour"); an entry
  // programmed at an index other than rkey[4:0] is legal and never found (c_misplaced below;
  // the random test programs some on purpose).

  // --- The block's side. Lookup: the answer one cycle after the request (README "Timing"),
  // none without one, MrOk while there is none, a status of the table, the checks in order.
  a_rsp_latency: assert property (@(posedge clk_i) disable iff (!ok1) lk_valid_i |=> rsp_valid_o)
    else $error("mr_table_sva a_rsp_latency: no answer the cycle after a lookup");
  a_rsp_no_spurious: assert property (@(posedge clk_i) disable iff (!ok1)
      !lk_valid_i |=> !rsp_valid_o)
    else $error("mr_table_sva a_rsp_no_spurious: an answer without a lookup");
  a_rsp_idle_ok: assert property (@(posedge clk_i) disable iff (!ok0)
      !rsp_valid_o |-> rsp_status_o == MrOk)
    else $error("mr_table_sva a_rsp_idle_ok: rsp_status_o is not ok while rsp_valid_o is low");
  a_rsp_status: assert property (@(posedge clk_i) disable iff (!ok0)
      rsp_valid_o |-> rsp_status_o <= MrPermission)
    else $error("mr_table_sva a_rsp_status: rsp_status_o is no mr_status_e value");
  a_rsp_first_checks: assert property (@(posedge clk_i) disable iff (!ok1)
      lk_valid_i && first3 != MrOk |=> rsp_status_o == $past(first3))
    else $error("mr_table_sva a_rsp_first_checks: not the first failing of entry, key, owner");
  a_rsp_later_checks: assert property (@(posedge clk_i) disable iff (!ok1)
      lk_valid_i && first3 == MrOk |=>
        rsp_status_o == MrOk || rsp_status_o == MrBounds || rsp_status_o == MrPermission)
    else $error("mr_table_sva a_rsp_later_checks: entry, key and owner match, yet they failed");

  // Read port: the entry one cycle after the request; an invalid entry reads all 0.
  a_rd_latency: assert property (@(posedge clk_i) disable iff (!ok1) rd_valid_i |=> rd_valid_o)
    else $error("mr_table_sva a_rd_latency: no read result the cycle after a read");
  a_rd_no_spurious: assert property (@(posedge clk_i) disable iff (!ok1)
      !rd_valid_i |=> !rd_valid_o)
    else $error("mr_table_sva a_rd_no_spurious: a read result without a read");
  a_rd_entry: assert property (@(posedge clk_i) disable iff (!ok1)
      rd_valid_i |=> rd_entry_valid_o == $past(rd_exp_valid)
                     && (!rd_entry_valid_o || (rd_rkey_o == $past(rd_exp_rkey)
                                               && rd_owner_qpn_o == $past(rd_exp_owner))))
    else $error("mr_table_sva a_rd_entry: the read does not show the entry written");
  a_rd_zero: assert property (@(posedge clk_i) disable iff (!ok0)
      !rd_entry_valid_o |-> {rd_rkey_o, rd_base_o, rd_length_o, rd_access_o, rd_owner_qpn_o} == '0)
    else $error("mr_table_sva a_rd_zero: an invalid entry does not read 0");

  // Free-entry search: this cycle's table, before its write.
  a_free: assert property (@(posedge clk_i) disable iff (!ok0)
      free_count_o == free_count && free_any_o == (free_count != '0)
      && free_index_o == lowest_free)
    else $error("mr_table_sva a_free: the free-entry search disagrees with the table");

  // --- Covers (counted with --coverage-user; docs/rtl/coverage.md): every answer, each check
  // failing in turn; back-to-back lookups; a lookup of an entry written in the same cycle
  // (read before write); a full table; an invalid entry read; a reset with an answer due.
  // One cover per status, written out: Verilator 5.006 counts the covers of a generate loop as
  // one point for all iterations.
  c_ok: cover property (@(posedge clk_i) disable iff (!ok0) rsp_valid_o && rsp_status_o == MrOk);
  c_no_entry: cover property (@(posedge clk_i) disable iff (!ok0)
      rsp_valid_o && rsp_status_o == MrNoEntry);
  c_key_mismatch: cover property (@(posedge clk_i) disable iff (!ok0)
      rsp_valid_o && rsp_status_o == MrKeyMismatch);
  c_owner_mismatch: cover property (@(posedge clk_i) disable iff (!ok0)
      rsp_valid_o && rsp_status_o == MrOwnerMismatch);
  c_bounds: cover property (@(posedge clk_i) disable iff (!ok0)
      rsp_valid_o && rsp_status_o == MrBounds);
  c_permission: cover property (@(posedge clk_i) disable iff (!ok0)
      rsp_valid_o && rsp_status_o == MrPermission);
  c_back_to_back: cover property (@(posedge clk_i) disable iff (!ok0) lk_valid_i && rsp_valid_o);
  c_read_before_write: cover property (@(posedge clk_i) disable iff (!ok0)
      lk_valid_i && wr_valid_i && wr_index_i == lk_index);
  c_full: cover property (@(posedge clk_i) disable iff (!ok0) !free_any_o);
  c_misplaced: cover property (@(posedge clk_i) disable iff (!ok0)
      wr_valid_i && wr_entry_valid_i && wr_index_i != wr_rkey_i[IdxW-1:0]);
  c_read_invalid: cover property (@(posedge clk_i) disable iff (!ok0)
      rd_valid_o && !rd_entry_valid_o);
  logic lk_q = 1'b0;  // a lookup at the last edge (for the reset cover)
  always_ff @(posedge clk_i) lk_q <= lk_valid_i && !in_reset;
  c_reset_answer_due: cover property (@(posedge clk_i) in_reset && lk_q);

endmodule

bind mr_table mr_table_sva u_mr_table_sva (.*);

`default_nettype wire
