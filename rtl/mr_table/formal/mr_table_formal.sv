// mr_table_formal: the proof harness of mr_table (docs/rtl/formal.md, scripts/formal.sh).
//
// Every input of the block is a free input of this wrapper: nothing is constrained, since the
// table promises its lookup rules for any sequence of writes, reads, lookups and resets
// (rtl/mr_table/README.md). The wrapper states the rules independently of how the block checks
// them and drives ok_o, which scripts/formal.sh proves to be 1 in every reachable state by
// temporal induction (yosys `sat -tempinduct`): the induction step starts from an arbitrary state
// of all 32 entries, so the claim holds for every table state, not only for sampled ones.
//
// The table state is observed through the obs_* wires. They are left undriven here and connected
// to the block's registers by the proof script after flattening (yosys `connect`): Yosys reads no
// hierarchical reference, and the block must not be edited for its proof.
`default_nettype none

module mr_table_formal (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        wr_valid_i,
  input  logic [4:0]  wr_index_i,
  input  logic        wr_entry_valid_i,
  input  logic [31:0] wr_rkey_i,
  input  logic [63:0] wr_base_i,
  input  logic [31:0] wr_length_i,
  input  logic [2:0]  wr_access_i,
  input  logic [23:0] wr_owner_qpn_i,
  input  logic        lk_valid_i,
  input  logic [31:0] lk_rkey_i,
  input  logic [63:0] lk_va_i,
  input  logic [31:0] lk_len_i,
  input  logic [2:0]  lk_access_i,
  input  logic [23:0] lk_qpn_i,
  input  logic        rd_valid_i,
  input  logic [4:0]  rd_index_i,
  output logic        ok_o,        // every property below holds in this cycle
  output logic        safe_o,      // no lookup that fails a rule is granted
  output logic        exact_o,     // the status is the first failing rule, as documented
  output logic        end_inv_o    // a valid entry's stored end is min(base + length, 2^64)
);

  logic       rsp_valid;
  logic [2:0] rsp_status;

  mr_table dut (
    .clk_i, .rst_ni,
    .wr_valid_i, .wr_index_i, .wr_entry_valid_i, .wr_rkey_i, .wr_base_i, .wr_length_i,
    .wr_access_i, .wr_owner_qpn_i,
    .lk_valid_i, .lk_rkey_i, .lk_va_i, .lk_len_i, .lk_access_i, .lk_qpn_i,
    .rsp_valid_o(rsp_valid), .rsp_status_o(rsp_status),
    .rd_valid_i, .rd_index_i,
    .rd_valid_o(), .rd_entry_valid_o(), .rd_rkey_o(), .rd_base_o(), .rd_length_o(),
    .rd_access_o(), .rd_owner_qpn_o(),
    .free_any_o(), .free_index_o(), .free_count_o()
  );

  // The block's state, entry i at [w*i +: w] (connected by scripts/formal.sh).
  (* keep *) logic [31:0]      obs_valid;
  (* keep *) logic [32*32-1:0] obs_rkey;
  (* keep *) logic [32*64-1:0] obs_base;
  (* keep *) logic [32*32-1:0] obs_length;
  (* keep *) logic [32*65-1:0] obs_end;
  (* keep *) logic [32*3-1:0]  obs_access;
  (* keep *) logic [32*24-1:0] obs_owner;

  // The rules, from the entry the lookup addresses (rkey[4:0]) as it is during the lookup's cycle
  // (read before write). Bounds use the programmed length, not the stored end the block compares
  // with, in exact 65-bit arithmetic (base + length < 2^64 + 2^32 cannot wrap): [va, va + len)
  // inside [base, base + length) and below 2^64.
  logic [4:0]  idx;
  logic        e_valid;
  logic [31:0] e_rkey, e_length;
  logic [63:0] e_base;
  logic [2:0]  e_access;
  logic [23:0] e_owner;
  logic        key_ok, owner_ok, bounds_ok, perm_ok;
  logic [64:0] acc_end, region_end;
  logic [32*65-1:0] sums;  // base + length of entry i at [65*i +: 65]
  logic [2:0]  spec_status;

  assign idx = lk_rkey_i[4:0];
  // The addressed entry, as a one-hot AND-OR over the 32 entries: a variable part-select would
  // elaborate to multipliers and barrel shifters, which make the SAT problem needlessly large.
  always_comb begin
    e_valid  = 1'b0;
    e_rkey   = '0;
    e_base   = '0;
    e_length = '0;
    e_access = '0;
    e_owner  = '0;
    region_end = '0;
    for (int unsigned i = 0; i < 32; i++) begin
      if (idx == 5'(i)) begin
        e_valid  = obs_valid[i];
        e_rkey   = obs_rkey[32*i +: 32];
        e_base   = obs_base[64*i +: 64];
        e_length = obs_length[32*i +: 32];
        e_access = obs_access[3*i +: 3];
        e_owner  = obs_owner[24*i +: 24];
        region_end = sums[65*i +: 65];
      end
    end
  end
  assign acc_end = {1'b0, lk_va_i} + {33'b0, lk_len_i};
  for (genvar i = 0; i < 32; i++) begin : gen_sum
    assign sums[65*i +: 65] = {1'b0, obs_base[64*i +: 64]} + {33'b0, obs_length[32*i +: 32]};
  end

  assign key_ok    = e_valid && e_rkey == lk_rkey_i;
  assign owner_ok  = e_owner == lk_qpn_i;
  assign bounds_ok = lk_va_i >= e_base && acc_end <= region_end && acc_end <= {1'b1, 64'b0};
  assign perm_ok   = (e_access & lk_access_i) == lk_access_i;

  // The documented status: the first failing check (mr_table_pkg::mr_status_e values).
  always_comb begin
    if (!e_valid) spec_status = 3'd1;                    // MrNoEntry
    else if (e_rkey != lk_rkey_i) spec_status = 3'd2;    // MrKeyMismatch
    else if (!owner_ok) spec_status = 3'd3;              // MrOwnerMismatch
    else if (!bounds_ok) spec_status = 3'd4;             // MrBounds
    else if (!perm_ok) spec_status = 3'd5;               // MrPermission
    else spec_status = 3'd0;                             // MrOk
  end

  // The verdicts of this cycle's lookup, compared with the block's answer in the next cycle
  // (latency 1). Not reset: they are only read when the block shows a response, and the block
  // shows none in the cycle after a reset.
  logic       rules_ok_q;
  logic [2:0] spec_status_q;
  always_ff @(posedge clk_i) begin
    rules_ok_q    <= key_ok && owner_ok && bounds_ok && perm_ok;
    spec_status_q <= spec_status;
  end

  assign safe_o  = !(rsp_valid && rsp_status == 3'd0) || rules_ok_q;
  assign exact_o = !rsp_valid || rsp_status == spec_status_q;

  // The invariant that makes the claim inductive: the block compares with a stored end, written
  // with the entry; an arbitrary state could hold an end that no write produced.
  always_comb begin
    end_inv_o = 1'b1;
    for (int unsigned i = 0; i < 32; i++) begin
      logic [64:0] want;
      want = sums[65*i +: 65] > {1'b1, 64'b0} ? {1'b1, 64'b0} : sums[65*i +: 65];
      if (obs_valid[i] && obs_end[65*i +: 65] != want) end_inv_o = 1'b0;
    end
  end

  assign ok_o = safe_o && exact_o && end_inv_o;

endmodule

`default_nettype wire
