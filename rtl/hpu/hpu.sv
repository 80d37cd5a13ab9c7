// hpu: an RV32IM core for sPIN handlers (rtl/hpu/README.md; seed 004 "HPU"; The RISC-V
// Instruction Set Manual, Volume I, chapters 2 "RV32I" and 7 "M").
//
// Multi-cycle and in order, no CSRs, caches or interrupts: every instruction passes StFetch (the
// request), StWaitI (the response), StDecode (register read and immediate into flops) and StExec
// (ALU, multiply, branch, write-back). Loads and stores continue in StMem (request) and StWaitD
// (response); DIV/DIVU/REM/REMU run a restoring divider, one quotient bit per cycle, in StDiv
// (32 cycles) and fix the signs in StDivEnd. So a handler's cycles depend on its instructions and
// the bus latency only (the HandlerEngine charges them; include/naa/rtl/hpu.hpp).
//
// Memory port: one request outstanding; mem_req_o is accepted in the cycle it is high, the
// response (mem_rvalid_i, mem_rdata_i, mem_err_i) comes one or more cycles later, a store's too.
// mem_addr_o is the access's byte address (aligned to its size), mem_be_o its byte lanes (4'hF for
// a fetch), mem_fetch_o marks an instruction fetch (the bus checks execute permission),
// mem_wdata_o a store's bytes on their lanes. Every output is a function of the state
// flops only.
//
// A call: start_i while idle sets pc = entry_i, sp = sp_i, a0..a2, ra = ExitAddress and clears
// every other register. Jumping to ExitAddress (the handler's `ret`) ends the call with done_o for
// one cycle, ret_o = a0; ECALL, EBREAK, an illegal instruction, a misaligned or refused access end
// it with trap_o for one cycle (trap_cause_o, trap_pc_o).
//
// Build-time define NAA_HPU_BROKEN: a deliberately wrong variant (REM's remainder takes the
// divisor's sign instead of the dividend's), used to prove that lockstep catches it.
`default_nettype none

module hpu (
  input  wire         clk_i,
  input  wire         rst_ni,
  input  wire         start_i,
  input  wire  [31:0] entry_i,
  input  wire  [31:0] sp_i,
  input  wire  [31:0] a0_i,
  input  wire  [31:0] a1_i,
  input  wire  [31:0] a2_i,
  output logic        busy_o,
  output logic        done_o,
  output logic [31:0] ret_o,
  output logic        trap_o,
  output logic [3:0]  trap_cause_o,
  output logic [31:0] trap_pc_o,
  output logic        mem_req_o,
  output logic        mem_fetch_o,
  output logic        mem_we_o,
  output logic [3:0]  mem_be_o,
  output logic [31:0] mem_addr_o,
  output logic [31:0] mem_wdata_o,
  input  wire         mem_rvalid_i,
  input  wire         mem_err_i,
  input  wire  [31:0] mem_rdata_i
);

  localparam logic [31:0] ExitAddress = 32'hFFFF_FFFC;

  // Base opcodes (Volume I, table 24.1).
  localparam logic [6:0] OpLoad   = 7'h03;
  localparam logic [6:0] OpMisc   = 7'h0F;
  localparam logic [6:0] OpImm    = 7'h13;
  localparam logic [6:0] OpAuipc  = 7'h17;
  localparam logic [6:0] OpStore  = 7'h23;
  localparam logic [6:0] OpReg    = 7'h33;
  localparam logic [6:0] OpLui    = 7'h37;
  localparam logic [6:0] OpBranch = 7'h63;
  localparam logic [6:0] OpJalr   = 7'h67;
  localparam logic [6:0] OpJal    = 7'h6F;
  localparam logic [6:0] OpSystem = 7'h73;

  typedef enum logic [3:0] {
    StIdle   = 4'd0,
    StFetch  = 4'd1,
    StWaitI  = 4'd2,
    StDecode = 4'd3,
    StExec   = 4'd4,
    StMem    = 4'd5,
    StWaitD  = 4'd6,
    StDiv    = 4'd7,
    StDivEnd = 4'd8,
    StDone   = 4'd9,
    StTrap   = 4'd10
  } state_e;

  // HpuTrap in include/naa/rtl/hpu.hpp, same values.
  typedef enum logic [3:0] {
    TrNone            = 4'd0,
    TrIllegal         = 4'd1,
    TrEcall           = 4'd2,
    TrEbreak          = 4'd3,
    TrFetchMisaligned = 4'd4,
    TrLoadMisaligned  = 4'd5,
    TrStoreMisaligned = 4'd6,
    TrFetchFault      = 4'd7,
    TrLoadFault       = 4'd8,
    TrStoreFault      = 4'd9
  } trap_e;

  state_e      state_d, state_q;
  trap_e       cause_d, cause_q;
  logic [31:0] pc_d, pc_q, tpc_d, tpc_q;
  logic [31:0] ir_q, rs1_q, rs2_q, imm_q, maddr_q, op2_q;
  logic        alt_q;
  logic [2:0]  f3_q;  // funct3 from StDecode: the ALU operation, a load's extension, DIV or REM
  logic [31:0] quo_q, rem_q, dvs_q;
  logic        negq_q, negr_q;
  logic [4:0]  cnt_q;

  // ---- register file: x0 is constant 0; the others are cleared by start (not by reset) ----
  logic [32*32-1:0] regs;
  logic             rf_we;      // a write-back this cycle, to the register rd_oh_q names
  logic [31:1]      rd_oh_q;    // the instruction's rd, one-hot (x0 is never written)
  // The write-back is registered and lands in the next cycle (always StFetch): the next
  // instruction reads registers in its StDecode, at least two cycles later, so no cycle count
  // changes, and the ALU's path ends at a flop instead of at the register file.
  logic             wr_pend_q;
  logic [31:1]      wr_oh_q;
  logic [31:0]      wr_data_q;
  logic [31:0]      rf_wdata;
  logic             load_call;  // start accepted at this edge

  assign load_call    = (state_q == StIdle) && start_i;
  assign regs[31:0]   = '0;
  for (genvar i = 1; i < 32; i++) begin : g_reg
    logic [31:0] init;
    if (i == 1) begin : g_ra
      assign init = ExitAddress;
    end else if (i == 2) begin : g_sp
      assign init = sp_i;
    end else if (i == 10) begin : g_a0
      assign init = a0_i;
    end else if (i == 11) begin : g_a1
      assign init = a1_i;
    end else if (i == 12) begin : g_a2
      assign init = a2_i;
    end else begin : g_zero
      assign init = '0;
    end
    logic [31:0] q;
    always_ff @(posedge clk_i) begin
      if (load_call) begin
        q <= init;
      end else if (wr_pend_q && wr_oh_q[i]) begin
        q <= wr_data_q;
      end
    end
    assign regs[i*32 +: 32] = q;
  end

  // ---- the instruction's fields ----
  logic [6:0] opcode;
  logic [4:0] rd, rs1, rs2;
  logic [2:0] f3;
  logic [6:0] f7;
  assign opcode = ir_q[6:0];
  assign rd     = ir_q[11:7];
  assign f3     = ir_q[14:12];
  assign rs1    = ir_q[19:15];
  assign rs2    = ir_q[24:20];
  assign f7     = ir_q[31:25];

  // The immediate of each format (Volume I, 2.3), chosen in StDecode.
  logic [31:0] imm;
  always_comb begin
    unique case (opcode)
      OpStore:         imm = {{21{ir_q[31]}}, ir_q[30:25], ir_q[11:7]};
      OpBranch:        imm = {{20{ir_q[31]}}, ir_q[7], ir_q[30:25], ir_q[11:8], 1'b0};
      OpLui, OpAuipc:  imm = {ir_q[31:12], 12'b0};
      OpJal:           imm = {{12{ir_q[31]}}, ir_q[19:12], ir_q[20], ir_q[30:21], 1'b0};
      default:         imm = {{21{ir_q[31]}}, ir_q[30:20]};
    endcase
  end

  // ---- StExec: ALU, multiplier, branch and jump targets, address of a load or store ----
  logic [31:0] op2, alu, sum, addr;
  logic        alt;
  logic signed [63:0] mul_a, mul_b, product;
  logic               mul_a_signed, mul_b_signed;
  // The ALU's second operand and bit 30's meaning are chosen in StDecode (op2_q, alt_q), so the
  // ALU's path to the write-back starts at flops, not at the instruction's decode.
  assign op2 = op2_q;
  assign alt = alt_q;
  assign sum = alt ? rs1_q - op2 : rs1_q + op2;
  always_comb begin
    unique case (f3_q)
      3'd0:    alu = sum;
      3'd1:    alu = rs1_q << op2[4:0];
      3'd2:    alu = {31'b0, $signed(rs1_q) < $signed(op2)};
      3'd3:    alu = {31'b0, rs1_q < op2};
      3'd4:    alu = rs1_q ^ op2;
      3'd5:    alu = alt ? 32'($signed(rs1_q) >>> op2[4:0]) : rs1_q >> op2[4:0];
      3'd6:    alu = rs1_q | op2;
      default: alu = rs1_q & op2;
    endcase
  end
  assign mul_a_signed = (f3 == 3'd1) || (f3 == 3'd2);  // MULH, MULHSU
  assign mul_b_signed = (f3 == 3'd1);                  // MULH
  assign mul_a   = {{32{mul_a_signed && rs1_q[31]}}, rs1_q};
  assign mul_b   = {{32{mul_b_signed && rs2_q[31]}}, rs2_q};
  assign product = mul_a * mul_b;
  assign addr = rs1_q + imm_q;

  logic taken;
  always_comb begin
    unique case (f3)
      3'd0:    taken = rs1_q == rs2_q;
      3'd1:    taken = rs1_q != rs2_q;
      3'd4:    taken = $signed(rs1_q) < $signed(rs2_q);
      3'd5:    taken = $signed(rs1_q) >= $signed(rs2_q);
      3'd6:    taken = rs1_q < rs2_q;
      default: taken = rs1_q >= rs2_q;  // 7; 2 and 3 are illegal
    endcase
  end

  logic illegal, misaligned, is_store, is_div;
  always_comb begin
    unique case (opcode)
      OpLui, OpAuipc, OpJal: illegal = 1'b0;
      OpJalr:   illegal = f3 != 3'd0;
      OpBranch: illegal = f3 == 3'd2 || f3 == 3'd3;
      OpLoad:   illegal = f3 == 3'd3 || f3 > 3'd5;
      OpStore:  illegal = f3 > 3'd2;
      OpImm:    illegal = (f3 == 3'd1 && f7 != 7'h00) ||
                          (f3 == 3'd5 && f7 != 7'h00 && f7 != 7'h20);
      OpReg:    illegal = !(f7 == 7'h00 || f7 == 7'h01 ||
                            (f7 == 7'h20 && (f3 == 3'd0 || f3 == 3'd5)));
      OpMisc:   illegal = f3 > 3'd1;
      default:  illegal = 1'b1;  // OpSystem: ECALL and EBREAK are traps of their own
    endcase
  end
  assign is_store = opcode == OpStore;
  assign is_div   = opcode == OpReg && f7 == 7'h01 && f3[2];
  always_comb begin
    unique case (f3[1:0])
      2'd0:    misaligned = 1'b0;
      2'd1:    misaligned = addr[0];
      default: misaligned = addr[1:0] != 2'b00;
    endcase
  end

  // ---- the divider (restoring, on magnitudes; Volume I, 7.2 for the special cases) ----
  logic        div_signed, div_a_neg, div_b_neg;
  logic [32:0] div_r, div_diff;
  logic        div_ge;
  logic [31:0] quotient, remainder;
  assign div_signed = !f3[0];  // DIV, REM
  assign div_a_neg  = div_signed && rs1_q[31];
  assign div_b_neg  = div_signed && rs2_q[31];
  assign div_r      = {rem_q, quo_q[31]};
  assign div_diff   = div_r - {1'b0, dvs_q};
  assign div_ge     = !div_diff[32];
  assign quotient   = negq_q ? -quo_q : quo_q;
  assign remainder  = negr_q ? -rem_q : rem_q;

  // ---- load data and store lanes ----
  logic [15:0] load_shifted;
  logic [31:0] load_value, store_data;
  logic [3:0]  lanes;
  assign load_shifted = 16'(mem_rdata_i >> {maddr_q[1:0], 3'b000});
  always_comb begin
    unique case (f3_q)
      3'd0:    load_value = {{24{load_shifted[7]}}, load_shifted[7:0]};
      3'd1:    load_value = {{16{load_shifted[15]}}, load_shifted[15:0]};
      3'd4:    load_value = {24'b0, load_shifted[7:0]};
      3'd5:    load_value = {16'b0, load_shifted[15:0]};
      default: load_value = mem_rdata_i;
    endcase
  end
  always_comb begin
    unique case (f3[1:0])
      2'd0:    begin store_data = {4{rs2_q[7:0]}};  lanes = 4'b0001 << maddr_q[1:0]; end
      2'd1:    begin store_data = {2{rs2_q[15:0]}}; lanes = 4'b0011 << maddr_q[1:0]; end
      default: begin store_data = rs2_q;            lanes = 4'b1111; end
    endcase
  end

  // ---- write-back, decoded in StDecode (the decode stays off the register-file path) ----
  typedef enum logic [2:0] {
    WbAlu   = 3'd0,
    WbImm   = 3'd1,  // LUI
    WbPcImm = 3'd2,  // AUIPC
    WbPc4   = 3'd3,  // JAL, JALR
    WbMulLo = 3'd4,
    WbMulHi = 3'd5
  } wb_sel_e;
  logic        wb_d, wb_q;  // StExec writes rd
  logic        store_q;     // the instruction is a store
  wb_sel_e     wsel_d, wsel_q;
  always_comb begin
    wb_d   = 1'b0;
    wsel_d = WbAlu;
    unique case (opcode)
      OpLui: begin
        wb_d   = 1'b1;
        wsel_d = WbImm;
      end
      OpAuipc: begin
        wb_d   = 1'b1;
        wsel_d = WbPcImm;
      end
      OpJal, OpJalr: begin
        wb_d   = !illegal;
        wsel_d = WbPc4;
      end
      OpImm: wb_d = !illegal;
      OpReg: begin
        wb_d = !illegal && !is_div;
        if (f7 == 7'h01) wsel_d = (f3 == 3'd0) ? WbMulLo : WbMulHi;
      end
      default: ;
    endcase
  end

  logic [31:0] exec_value;
  always_comb begin
    unique case (wsel_q)
      WbImm:   exec_value = imm_q;
      WbPcImm: exec_value = pc_q + imm_q;
      WbPc4:   exec_value = pc_q + 32'd4;
      WbMulLo: exec_value = product[31:0];
      WbMulHi: exec_value = product[63:32];
      default: exec_value = alu;
    endcase
  end
  logic wb_load, wb_div;
  assign wb_load  = state_q == StWaitD && mem_rvalid_i && !mem_err_i && !store_q;
  assign wb_div   = state_q == StDivEnd;
  assign rf_we    = (state_q == StExec && wb_q) || wb_load || wb_div;
  assign rf_wdata = wb_load ? load_value : wb_div ? (f3_q[1] ? remainder : quotient) : exec_value;

  // ---- next state ----
  always_comb begin
    state_d  = state_q;
    pc_d     = pc_q;
    cause_d  = cause_q;
    tpc_d    = tpc_q;
    unique case (state_q)
      StIdle: if (start_i) begin
        state_d = StFetch;
        pc_d    = entry_i;
        cause_d = TrNone;
      end
      StFetch: begin
        if (pc_q == ExitAddress) begin
          state_d = StDone;
        end else if (pc_q[1:0] != 2'b00) begin
          state_d = StTrap;
          cause_d = TrFetchMisaligned;
          tpc_d   = pc_q;
        end else begin
          state_d = StWaitI;
        end
      end
      StWaitI: if (mem_rvalid_i) begin
        if (mem_err_i) begin
          state_d = StTrap;
          cause_d = TrFetchFault;
          tpc_d   = pc_q;
        end else begin
          state_d = StDecode;
        end
      end
      StDecode: state_d = StExec;
      StExec: begin
        state_d = StFetch;
        pc_d    = pc_q + 32'd4;
        if (opcode == OpSystem) begin
          state_d = StTrap;
          tpc_d   = pc_q;
          pc_d    = pc_q;
          cause_d = (ir_q == 32'h0000_0073) ? TrEcall :
                    (ir_q == 32'h0010_0073) ? TrEbreak : TrIllegal;
        end else if (illegal) begin
          state_d = StTrap;
          tpc_d   = pc_q;
          pc_d    = pc_q;
          cause_d = TrIllegal;
        end else begin
          unique case (opcode)
            OpJal, OpJalr: pc_d = (opcode == OpJal) ? pc_q + imm_q : {addr[31:1], 1'b0};
            OpBranch: if (taken) pc_d = pc_q + imm_q;
            OpLoad, OpStore: begin
              pc_d = pc_q;
              if (misaligned) begin
                state_d = StTrap;
                tpc_d   = pc_q;
                cause_d = is_store ? TrStoreMisaligned : TrLoadMisaligned;
              end else begin
                state_d = StMem;
              end
            end
            OpReg: begin
              if (is_div) begin
                state_d = StDiv;
                pc_d    = pc_q;
              end
            end
            // LUI, AUIPC, OP-IMM, MUL*: write-back only (below). OpMisc: FENCE and FENCE.I order
            // nothing on one core without caches.
            default: ;
          endcase
        end
      end
      StMem: state_d = StWaitD;
      StWaitD: if (mem_rvalid_i) begin
        if (mem_err_i) begin
          state_d = StTrap;
          tpc_d   = pc_q;
          cause_d = is_store ? TrStoreFault : TrLoadFault;
        end else begin
          state_d  = StFetch;
          pc_d     = pc_q + 32'd4;
        end
      end
      StDiv: if (cnt_q == 5'd31) state_d = StDivEnd;
      StDivEnd: begin
        state_d  = StFetch;
        pc_d     = pc_q + 32'd4;
      end
      default: state_d = StIdle;  // StDone, StTrap and the unused encodings
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_pend_q <= 1'b0;
    end else begin
      wr_pend_q <= rf_we;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      cause_q <= TrNone;
      pc_q    <= '0;
      tpc_q   <= '0;
    end else begin
      state_q <= state_d;
      cause_q <= cause_d;
      pc_q    <= pc_d;
      tpc_q   <= tpc_d;
    end
  end

  // Datapath flops: meaningful only in the states that load them (no reset, docs/rtl/README.md).
  always_ff @(posedge clk_i) begin
    if (state_q == StWaitI && mem_rvalid_i) ir_q <= mem_rdata_i;
    wr_oh_q   <= rd_oh_q;
    wr_data_q <= rf_wdata;
    if (state_q == StDecode) begin
      rs1_q  <= regs[rs1*32 +: 32];
      rs2_q  <= regs[rs2*32 +: 32];
      imm_q  <= imm;
      op2_q  <= (opcode == OpReg) ? regs[rs2*32 +: 32] : imm;
      // Bit 30 selects SUB (OP only) and SRA/SRAI.
      alt_q  <= ir_q[30] && ((opcode == OpReg && f3 == 3'd0) || f3 == 3'd5);
      wb_q    <= wb_d;
      wsel_q  <= wsel_d;
      f3_q    <= f3;
      store_q <= is_store;
      for (int i = 1; i < 32; i++) rd_oh_q[i] <= rd == 5'(i);
    end
    if (state_q == StExec) maddr_q <= addr;
    if (state_q == StExec && is_div) begin
      quo_q  <= div_a_neg ? -rs1_q : rs1_q;
      rem_q  <= '0;
      dvs_q  <= div_b_neg ? -rs2_q : rs2_q;
      negq_q <= (div_a_neg ^ div_b_neg) && rs2_q != '0;
`ifdef NAA_HPU_BROKEN
      negr_q <= div_b_neg;
`else
      negr_q <= div_a_neg;
`endif
      cnt_q  <= '0;
    end
    if (state_q == StDiv) begin
      quo_q <= {quo_q[30:0], div_ge};
      rem_q <= div_ge ? div_diff[31:0] : div_r[31:0];
      cnt_q <= cnt_q + 5'd1;
    end
  end

  assign busy_o       = state_q != StIdle;
  assign done_o       = state_q == StDone;
  assign ret_o        = regs[10*32 +: 32];
  assign trap_o       = state_q == StTrap;
  assign trap_cause_o = cause_q;
  assign trap_pc_o    = tpc_q;
  assign mem_req_o    = (state_q == StFetch && pc_q != ExitAddress && pc_q[1:0] == 2'b00) ||
                        state_q == StMem;
  assign mem_fetch_o  = state_q == StFetch;
  assign mem_we_o     = state_q == StMem && is_store;
  assign mem_addr_o   = (state_q == StMem) ? maddr_q : pc_q;
  assign mem_be_o     = (state_q == StMem) ? lanes : 4'hF;
  assign mem_wdata_o  = store_data;

endmodule

`default_nettype wire
