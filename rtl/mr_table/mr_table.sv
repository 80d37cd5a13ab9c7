// mr_table: the NAA memory-region table (rtl/mr_table/README.md, ARCHITECTURE.md "MrTable").
//
// 32 entries {valid, rkey, base, length, access, owner QPN}, direct-indexed by rkey[4:0], so a
// lookup is one entry read plus compares: one lookup per cycle, result registered, latency 1
// (request sampled at edge k, result on rsp_*_o during the cycle after edge k).
//
// Write port: wr_valid_i writes entry wr_index_i at the edge; wr_entry_valid_i = 1 programs it,
// 0 invalidates it. The writer must place an entry at index rkey[4:0] (otherwise lookups of that
// rkey report MrNoEntry/MrKeyMismatch). A lookup in the same cycle as a write sees the table as it
// was before the write (read-before-write).
//
// Lengths are 32 bits: every length that reaches the table comes from a 32-bit field (MRSP size,
// RETH DMA length), PROTOCOL.md 5.1 and 1. The region end base + length is computed once at write
// time, clamped to 2^64, and stored as 65 bits, so the lookup path is one entry read plus two
// 65-bit compares (va >= base, va + len <= end), with va + len computed from the request alone,
// in parallel with the entry read.
//
// Zero-length accesses are checked like any other (va must lie in [base, end]). Skipping the
// check for zero-length RDMA operations (PROTOCOL.md 3, IBTA) is the caller's job: the caller
// knows the opcode, the table does not.
//
// Read port and free-entry search (so that every answer about the table comes from the block,
// docs/sim/rtl.md): rd_valid_i reads entry rd_index_i, result registered like a lookup's (latency
// 1, read-before-write); the fields read 0 for an invalid entry. free_any_o / free_index_o (the
// lowest invalid entry) / free_count_o describe the table as it is during the cycle (before the
// cycle's write), from the valid bits alone.
//
// Build-time define NAA_MR_TABLE_BROKEN: a deliberately wrong variant (the bounds check lets an
// access run one byte past the end of the region), used to prove that lockstep catches it.
`default_nettype none

module mr_table (
  input  logic                 clk_i,
  input  logic                 rst_ni,

  // Write port (program / invalidate)
  input  logic                 wr_valid_i,
  input  logic [mr_table_pkg::IdxW-1:0]      wr_index_i,
  input  logic                 wr_entry_valid_i,
  input  logic [31:0]          wr_rkey_i,
  input  logic [63:0]          wr_base_i,
  input  logic [31:0]          wr_length_i,
  input  logic [mr_table_pkg::AccessW-1:0]   wr_access_i,
  input  logic [23:0]          wr_owner_qpn_i,

  // Lookup port
  input  logic                 lk_valid_i,
  input  logic [31:0]          lk_rkey_i,
  input  logic [63:0]          lk_va_i,
  input  logic [31:0]          lk_len_i,
  input  logic [mr_table_pkg::AccessW-1:0]   lk_access_i,
  input  logic [23:0]          lk_qpn_i,

  // Lookup result, one cycle after the request
  output logic                 rsp_valid_o,
  output mr_table_pkg::mr_status_e           rsp_status_o,

  // Read port: entry rd_index_i; the result one cycle after the request
  input  logic                 rd_valid_i,
  input  logic [mr_table_pkg::IdxW-1:0]      rd_index_i,
  output logic                 rd_valid_o,
  output logic                 rd_entry_valid_o,
  output logic [31:0]          rd_rkey_o,
  output logic [63:0]          rd_base_o,
  output logic [31:0]          rd_length_o,
  output logic [mr_table_pkg::AccessW-1:0]   rd_access_o,
  output logic [23:0]          rd_owner_qpn_o,

  // Free-entry search, this cycle's table
  output logic                 free_any_o,
  output logic [mr_table_pkg::IdxW-1:0]      free_index_o,
  output logic [mr_table_pkg::IdxW:0]        free_count_o
);

  // 2^64: the end of the address space; no access may reach past it.
  localparam logic [64:0] AddrSpaceEnd = {1'b1, 64'd0};

  // ---------------------------------------------------------------------------------------------
  // Entry storage. Only the valid bits are reset; the fields are written before they are read
  // (a lookup of an invalid entry reports MrNoEntry before looking at any field).
  //
  // Every computation from the inputs is a variable of the clocked process that uses it (none is
  // a continuous assignment): the outputs are all registers, so nothing needs the logic before
  // the edge, and Verilator 5.006 evaluates a process's variables at its edge only (and only in
  // the branch taken), where it evaluates continuous logic from the inputs at every eval(), two
  // per cycle, and again after each edge (issue 31, docs/rtl/simulation-cost.md). The same
  // logic either way: synthesis builds the same gates from a variable as from a net.
  // ---------------------------------------------------------------------------------------------
  logic [mr_table_pkg::NumEntries-1:0] valid_q;
  logic [31:0]           rkey_q   [mr_table_pkg::NumEntries];
  logic [63:0]           base_q   [mr_table_pkg::NumEntries];
  logic [64:0]           end_q    [mr_table_pkg::NumEntries];  // min(base + length, 2^64)
  logic [31:0]           length_q [mr_table_pkg::NumEntries];  // for the read port only
  logic [mr_table_pkg::AccessW-1:0]    access_q [mr_table_pkg::NumEntries];
  logic [23:0]           owner_q  [mr_table_pkg::NumEntries];

  always_ff @(posedge clk_i) begin
    if (wr_valid_i && wr_entry_valid_i) begin : program_entry
      logic [64:0] wr_end_full;  // base + length, 65 bits so that it cannot wrap
      wr_end_full = {1'b0, wr_base_i} + {33'd0, wr_length_i};
      rkey_q[wr_index_i]   <= wr_rkey_i;
      base_q[wr_index_i]   <= wr_base_i;
      end_q[wr_index_i]    <= (wr_end_full > AddrSpaceEnd) ? AddrSpaceEnd : wr_end_full;
      length_q[wr_index_i] <= wr_length_i;
      access_q[wr_index_i] <= wr_access_i;
      owner_q[wr_index_i]  <= wr_owner_qpn_i;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Lookup: entry read, checks in priority order, registered result. The status of a cycle
  // without a lookup is MrOk, so the port carries no stale value.
  //
  // The output ports are the registers themselves (here and below), not copies of *_q
  // variables: Verilator 5.006 copies every such variable to its port after each edge (13
  // copies per edge, issue 31). The same flops in synthesis.
  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rsp_valid_o  <= 1'b0;
      rsp_status_o <= mr_table_pkg::MrOk;
    end else begin
      rsp_valid_o <= lk_valid_i;
      if (lk_valid_i) begin : lookup
        logic [mr_table_pkg::IdxW-1:0] lk_index;
        logic                          in_bounds;
`ifdef NAA_MR_TABLE_BROKEN
        logic [64:0]                   lk_end;  // va + len, 65 bits so that it cannot wrap
        lk_index = lk_rkey_i[mr_table_pkg::IdxW-1:0];
        lk_end   = {1'b0, lk_va_i} + {33'd0, lk_len_i};
        // Deliberate bug: lets the access end one byte past the region.
        in_bounds = (lk_va_i >= base_q[lk_index]) && (lk_end <= end_q[lk_index] + 65'd1);
`else
        // va + len <= end in 65 bits, written as its two halves: {lk_end_hi, lk_end_lo} is
        // va + len (the carry of the 64-bit add is bit 64), {end_hi, end_lo} the stored end.
        // {a, b} <= {c, d} is a < c, or a == c and b <= d. The same compare as one 65-bit
        // `<=`, which Verilator 5.006 evaluates word by word through VL_ADD_W / VL_LTE_W
        // (issue 31); scripts/formal.sh proves the rules on this code.
        logic [63:0] lk_end_lo, end_lo;
        logic        lk_end_hi, end_hi;
        lk_index  = lk_rkey_i[mr_table_pkg::IdxW-1:0];
        lk_end_lo = lk_va_i + {32'd0, lk_len_i};
        lk_end_hi = lk_end_lo < lk_va_i;  // the carry out of the 64-bit add
        end_lo    = end_q[lk_index][63:0];
        end_hi    = end_q[lk_index][64];
        in_bounds = (lk_va_i >= base_q[lk_index])
                    && ((!lk_end_hi && end_hi) || (lk_end_hi == end_hi && lk_end_lo <= end_lo));
`endif
        if (!valid_q[lk_index]) begin
          rsp_status_o <= mr_table_pkg::MrNoEntry;
        end else if (rkey_q[lk_index] != lk_rkey_i) begin
          rsp_status_o <= mr_table_pkg::MrKeyMismatch;
        end else if (owner_q[lk_index] != lk_qpn_i) begin
          rsp_status_o <= mr_table_pkg::MrOwnerMismatch;
        end else if (!in_bounds) begin
          rsp_status_o <= mr_table_pkg::MrBounds;
        end else if ((access_q[lk_index] & lk_access_i) != lk_access_i) begin
          rsp_status_o <= mr_table_pkg::MrPermission;
        end else begin
          rsp_status_o <= mr_table_pkg::MrOk;
        end
      end else begin
        rsp_status_o <= mr_table_pkg::MrOk;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Read port: one entry read, registered; fields 0 for an invalid entry (they are not reset).
  // The fields are 0 whenever rd_entry_valid_o is low (reset and every edge that clears it
  // zero them too), so an edge that reads nothing zeroes them only after a valid entry was
  // shown: the same port values, without six stores at every idle edge (issue 31).
  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_valid_o       <= 1'b0;
      rd_entry_valid_o <= 1'b0;
      rd_rkey_o        <= '0;
      rd_base_o        <= '0;
      rd_length_o      <= '0;
      rd_access_o      <= '0;
      rd_owner_qpn_o   <= '0;
    end else begin
      rd_valid_o <= rd_valid_i;
      if (rd_valid_i && valid_q[rd_index_i]) begin
        rd_entry_valid_o <= 1'b1;
        rd_rkey_o        <= rkey_q[rd_index_i];
        rd_base_o        <= base_q[rd_index_i];
        rd_length_o      <= length_q[rd_index_i];
        rd_access_o      <= access_q[rd_index_i];
        rd_owner_qpn_o   <= owner_q[rd_index_i];
      end else if (rd_entry_valid_o) begin
        rd_entry_valid_o <= 1'b0;
        rd_rkey_o        <= '0;
        rd_base_o        <= '0;
        rd_length_o      <= '0;
        rd_access_o      <= '0;
        rd_owner_qpn_o   <= '0;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Valid bits and the free-entry search, registered (docs/rtl/synthesis.md: a population count
  // of 32 valid bits in one cycle was 31 LUT levels). Each edge with a write loads the search
  // result for the table that edge leaves behind (valid_d), so during every cycle the registers
  // describe the table as it is in that cycle, before the cycle's write: the same port behaviour
  // as a combinational search of valid_q, without its depth, and no added latency. An edge
  // without a write leaves the valid bits as they are, hence their search too: the registers
  // keep it (the enable of these flops is wr_valid_i; the search evaluated at every edge cost
  // ~50 instructions per idle edge in the Verilated model, issue 31). The count is kept
  // incrementally (a write frees or takes at most one entry); the lowest free index is a
  // priority encoder over valid_d. Reset: every entry invalid, hence free.
  // ---------------------------------------------------------------------------------------------

  // The entries whose index has bit k set.
  function automatic logic [mr_table_pkg::NumEntries-1:0] index_bit_mask(int unsigned k);
    for (int unsigned i = 0; i < mr_table_pkg::NumEntries; i++) begin
      index_bit_mask[i] = ((i >> k) & 1) != 0;
    end
  endfunction

  // The index of the one set bit of a one-hot vector (0 if none): bit k of the index is the OR
  // of the one-hot bits whose index has bit k set, one AND with a constant mask and one
  // OR-reduction per index bit. A loop that keeps the first hit is a chain through all 32
  // entries instead; a loop over the 32 entries per index bit is the same logic, but Verilator
  // evaluates it bit by bit (~400 instructions per eval, issue 31).
  function automatic logic [mr_table_pkg::IdxW-1:0] one_hot_index(
      logic [mr_table_pkg::NumEntries-1:0] one_hot);
    for (int unsigned k = 0; k < mr_table_pkg::IdxW; k++) begin
      one_hot_index[k] = |(one_hot & index_bit_mask(k));
    end
  endfunction

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q      <= '0;
      free_any_o   <= 1'b1;
      free_index_o <= '0;
      free_count_o <= (mr_table_pkg::IdxW + 1)'(mr_table_pkg::NumEntries);
    end else if (wr_valid_i) begin : next_table
      logic [mr_table_pkg::NumEntries-1:0] valid_d, free_d, lowest_free;
      logic                                wr_was_valid, wr_frees, wr_takes;
      valid_d              = valid_q;
      valid_d[wr_index_i]  = wr_entry_valid_i;
      wr_was_valid         = valid_q[wr_index_i];
      wr_frees             = !wr_entry_valid_i && wr_was_valid;
      wr_takes             = wr_entry_valid_i && !wr_was_valid;
      // Lowest index with !valid_d (0 if none: free_any says so): isolate the lowest set bit of
      // the free mask (x & -x, a carry chain), then its index.
      free_d       = ~valid_d;
      lowest_free  = free_d & (~free_d + 1'b1);
      valid_q      <= valid_d;
      free_any_o   <= |free_d;
      free_index_o <= one_hot_index(lowest_free);
      free_count_o <= free_count_o + {{mr_table_pkg::IdxW{1'b0}}, wr_frees}
                                   - {{mr_table_pkg::IdxW{1'b0}}, wr_takes};
    end
  end

  // Known values on the valid-only ports (no back-pressure: ready tied high, so only the
  // known-value check of naa_stream_assert applies). For four-state simulators only: Verilator
  // is two-state, where that check cannot fail, and with ready tied high no beat ever waits, so
  // its hold checks never run either; Verilated, the four checkers cost ~60 instructions per
  // naa-sim nop call (their flops and tests at every edge) for nothing (issue 31).
`ifndef VERILATOR
  naa_stream_assert #(.PayloadBits(1), .Port("mr_table.wr")) u_wr_assert (
    .clk_i, .rst_ni, .valid_i(wr_valid_i), .ready_i(1'b1), .payload_i(wr_entry_valid_i)
  );
  naa_stream_assert #(.PayloadBits(1), .Port("mr_table.lk")) u_lk_assert (
    .clk_i, .rst_ni, .valid_i(lk_valid_i), .ready_i(1'b1), .payload_i(1'b0)
  );
  naa_stream_assert #(.PayloadBits(1), .Port("mr_table.rsp")) u_rsp_assert (
    .clk_i, .rst_ni, .valid_i(rsp_valid_o), .ready_i(1'b1), .payload_i(1'b0)
  );
  naa_stream_assert #(.PayloadBits(mr_table_pkg::IdxW), .Port("mr_table.rd")) u_rd_assert (
    .clk_i, .rst_ni, .valid_i(rd_valid_i), .ready_i(1'b1), .payload_i(rd_index_i)
  );
`endif

endmodule

`default_nettype wire
