// The golden model of rtl/hpu/hpu.sv: an RV32IM instruction-set simulator (The RISC-V
// Instruction Set Manual, Volume I, chapters 2 "RV32I" and 7 "M") stepped through the RTL's state
// sequence. The arithmetic is written from the specification in C++ (division by the language's
// operators with the spec's special cases), independent of the RTL's shift-subtract divider.
#include <string>

#include "naa/rtl/hpu.hpp"

namespace naa::rtl {

std::string_view to_string(HpuTrap t) noexcept {
  switch (t) {
    case HpuTrap::none:
      return "none";
    case HpuTrap::illegal_instruction:
      return "illegal_instruction";
    case HpuTrap::ecall:
      return "ecall";
    case HpuTrap::ebreak:
      return "ebreak";
    case HpuTrap::fetch_misaligned:
      return "fetch_misaligned";
    case HpuTrap::load_misaligned:
      return "load_misaligned";
    case HpuTrap::store_misaligned:
      return "store_misaligned";
    case HpuTrap::fetch_fault:
      return "fetch_fault";
    case HpuTrap::load_fault:
      return "load_fault";
    case HpuTrap::store_fault:
      return "store_fault";
  }
  return "invalid";
}

namespace {

// Base opcodes (Volume I, table 24.1 "RV32I base opcode map").
enum Opcode : std::uint32_t {
  kLoad = 0x03,
  kMiscMem = 0x0F,
  kOpImm = 0x13,
  kAuipc = 0x17,
  kStore = 0x23,
  kOp = 0x33,
  kLui = 0x37,
  kBranch = 0x63,
  kJalr = 0x67,
  kJal = 0x6F,
  kSystem = 0x73,
};
constexpr std::uint32_t kEcall = 0x0000'0073U;
constexpr std::uint32_t kEbreak = 0x0010'0073U;

struct Fields {
  std::uint32_t opcode, rd, f3, rs1, rs2, f7;
};

Fields fields(std::uint32_t ir) {
  return {ir & 0x7FU,         (ir >> 7) & 0x1FU,  (ir >> 12) & 0x7U,
          (ir >> 15) & 0x1FU, (ir >> 20) & 0x1FU, ir >> 25};
}

std::uint32_t sext(std::uint32_t v, unsigned bits) {
  const std::uint32_t m = 1U << (bits - 1);
  v &= (bits == 32) ? ~0U : ((1U << bits) - 1U);
  return (v ^ m) - m;
}

std::uint32_t imm_i(std::uint32_t ir) {
  return sext(ir >> 20, 12);
}
std::uint32_t imm_s(std::uint32_t ir) {
  return sext(((ir >> 25) << 5) | ((ir >> 7) & 0x1FU), 12);
}
std::uint32_t imm_b(std::uint32_t ir) {
  const std::uint32_t v = ((ir >> 31) << 12) | (((ir >> 7) & 1U) << 11) |
                          (((ir >> 25) & 0x3FU) << 5) | (((ir >> 8) & 0xFU) << 1);
  return sext(v, 13);
}
std::uint32_t imm_u(std::uint32_t ir) {
  return ir & 0xFFFF'F000U;
}
std::uint32_t imm_j(std::uint32_t ir) {
  const std::uint32_t v = ((ir >> 31) << 20) | (((ir >> 12) & 0xFFU) << 12) |
                          (((ir >> 20) & 1U) << 11) | (((ir >> 21) & 0x3FFU) << 1);
  return sext(v, 21);
}

std::int32_t s32(std::uint32_t v) {
  return static_cast<std::int32_t>(v);
}

// The M extension's division with its special cases (Volume I, 7.2, table 7.1).
std::uint32_t divide(std::uint32_t f3, std::uint32_t a, std::uint32_t b) {
  const bool overflow = a == 0x8000'0000U && b == 0xFFFF'FFFFU;
  switch (f3) {
    case 4:  // DIV
      if (b == 0) return 0xFFFF'FFFFU;
      if (overflow) return a;
      return static_cast<std::uint32_t>(s32(a) / s32(b));
    case 5:  // DIVU
      return b == 0 ? 0xFFFF'FFFFU : a / b;
    case 6:  // REM
      if (b == 0) return a;
      if (overflow) return 0;
      return static_cast<std::uint32_t>(s32(a) % s32(b));
    default:  // 7: REMU
      return b == 0 ? a : a % b;
  }
}

std::uint32_t multiply(std::uint32_t f3, std::uint32_t a, std::uint32_t b) {
  const auto sa = static_cast<std::int64_t>(s32(a));
  const auto sb = static_cast<std::int64_t>(s32(b));
  switch (f3) {
    case 0:  // MUL
      return a * b;
    case 1:  // MULH
      return static_cast<std::uint32_t>(static_cast<std::uint64_t>(sa * sb) >> 32);
    case 2:  // MULHSU
      return static_cast<std::uint32_t>(
          static_cast<std::uint64_t>(sa * static_cast<std::int64_t>(b)) >> 32);
    default:  // 3: MULHU
      return static_cast<std::uint32_t>((std::uint64_t{a} * b) >> 32);
  }
}

// OP and OP-IMM's ALU (funct3 and whether bit 30 selects SUB/SRA).
std::uint32_t alu(std::uint32_t f3, bool alt, std::uint32_t a, std::uint32_t b) {
  const unsigned sh = b & 31U;
  switch (f3) {
    case 0:
      return alt ? a - b : a + b;
    case 1:
      return a << sh;
    case 2:
      return s32(a) < s32(b) ? 1U : 0U;
    case 3:
      return a < b ? 1U : 0U;
    case 4:
      return a ^ b;
    case 5:
      return alt ? static_cast<std::uint32_t>(s32(a) >> sh) : a >> sh;
    case 6:
      return a | b;
    default:
      return a & b;
  }
}

std::uint8_t lanes(std::uint32_t f3, std::uint32_t addr) {
  switch (f3 & 3U) {
    case 0:
      return static_cast<std::uint8_t>(1U << (addr & 3U));
    case 1:
      return static_cast<std::uint8_t>(3U << (addr & 3U));
    default:
      return 0xF;
  }
}

bool misaligned(std::uint32_t f3, std::uint32_t addr) {
  switch (f3 & 3U) {
    case 0:
      return false;
    case 1:
      return (addr & 1U) != 0;
    default:
      return (addr & 3U) != 0;
  }
}

}  // namespace

HpuOutputs HpuModel::outputs() const noexcept {
  HpuOutputs o;
  o.busy = state_ != State::idle;
  o.done = state_ == State::done;
  o.ret = x_[10];
  o.trap = state_ == State::trap;
  o.trap_cause = cause_;
  o.trap_pc = trap_pc_;
  if (state_ == State::fetch && pc_ != kHpuExitAddress && (pc_ & 3U) == 0) {
    o.mem_req = true;
    o.mem_fetch = true;
    o.mem_be = 0xF;
    o.mem_addr = pc_;
  } else if (state_ == State::mem) {
    const Fields f = fields(ir_);
    o.mem_req = true;
    o.mem_we = f.opcode == kStore;
    o.mem_be = lanes(f.f3, maddr_);
    o.mem_addr = maddr_;
    const std::uint32_t v = x_[f.rs2];
    o.mem_wdata = (f.f3 == 0)   ? (v & 0xFFU) * 0x0101'0101U
                  : (f.f3 == 1) ? (v & 0xFFFFU) * 0x0001'0001U
                                : v;
  }
  return o;
}

void HpuModel::write_rd(std::uint32_t value) noexcept {
  const std::uint32_t rd = (ir_ >> 7) & 0x1FU;
  if (rd != 0) x_[rd] = value;
}

void HpuModel::raise(HpuTrap cause, std::uint32_t pc) {
  cause_ = cause;
  trap_pc_ = pc;
  state_ = State::trap;
}

void HpuModel::finish_load(std::uint32_t rdata) {
  const std::uint32_t f3 = (ir_ >> 12) & 7U;
  const std::uint32_t v = rdata >> ((maddr_ & 3U) * 8U);
  switch (f3) {
    case 0:
      write_rd(sext(v, 8));
      break;
    case 1:
      write_rd(sext(v, 16));
      break;
    case 4:
      write_rd(v & 0xFFU);
      break;
    case 5:
      write_rd(v & 0xFFFFU);
      break;
    default:
      write_rd(rdata);
      break;
  }
}

void HpuModel::exec() {
  const Fields f = fields(ir_);
  const std::uint32_t a = x_[f.rs1];
  const std::uint32_t b = x_[f.rs2];
  std::uint32_t next_pc = pc_ + 4U;
  const auto illegal = [&] { raise(HpuTrap::illegal_instruction, pc_); };
  switch (f.opcode) {
    case kLui:
      write_rd(imm_u(ir_));
      break;
    case kAuipc:
      write_rd(pc_ + imm_u(ir_));
      break;
    case kJal:
      write_rd(pc_ + 4U);
      next_pc = pc_ + imm_j(ir_);
      break;
    case kJalr:
      if (f.f3 != 0) return illegal();
      write_rd(pc_ + 4U);
      next_pc = (a + imm_i(ir_)) & ~1U;
      break;
    case kBranch: {
      bool taken = false;
      switch (f.f3) {
        case 0:
          taken = a == b;
          break;
        case 1:
          taken = a != b;
          break;
        case 4:
          taken = s32(a) < s32(b);
          break;
        case 5:
          taken = s32(a) >= s32(b);
          break;
        case 6:
          taken = a < b;
          break;
        case 7:
          taken = a >= b;
          break;
        default:
          return illegal();
      }
      if (taken) next_pc = pc_ + imm_b(ir_);
      break;
    }
    case kLoad:
    case kStore: {
      const bool store = f.opcode == kStore;
      if (store ? f.f3 > 2 : (f.f3 == 3 || f.f3 > 5)) return illegal();
      const std::uint32_t addr = a + (store ? imm_s(ir_) : imm_i(ir_));
      if (misaligned(f.f3, addr)) {
        return raise(store ? HpuTrap::store_misaligned : HpuTrap::load_misaligned, pc_);
      }
      maddr_ = addr;
      state_ = State::mem;
      return;
    }
    case kOpImm: {
      const bool shift = f.f3 == 1 || f.f3 == 5;
      if (shift && !(f.f7 == 0 || (f.f3 == 5 && f.f7 == 0x20))) return illegal();
      write_rd(alu(f.f3, shift && f.f7 == 0x20, a, imm_i(ir_)));
      break;
    }
    case kOp:
      if (f.f7 == 1) {
        if (f.f3 >= 4) {
          div_result_ = divide(f.f3, a, b);
          div_count_ = 0;
          state_ = State::div;
          return;
        }
        write_rd(multiply(f.f3, a, b));
      } else if (f.f7 == 0 || (f.f7 == 0x20 && (f.f3 == 0 || f.f3 == 5))) {
        write_rd(alu(f.f3, f.f7 == 0x20, a, b));
      } else {
        return illegal();
      }
      break;
    case kMiscMem:  // FENCE, FENCE.I: one core, no caches: nothing to order
      if (f.f3 > 1) return illegal();
      break;
    case kSystem:
      if (ir_ == kEcall) return raise(HpuTrap::ecall, pc_);
      if (ir_ == kEbreak) return raise(HpuTrap::ebreak, pc_);
      return illegal();
    default:
      return illegal();
  }
  pc_ = next_pc;
  ++retired_;
  state_ = State::fetch;
}

HpuOutputs HpuModel::step(const HpuInputs& in) {
  if (!in.rst_n) {
    *this = HpuModel{};
    return outputs();
  }
  const HpuOutputs out = outputs();
  switch (state_) {
    case State::idle:
      if (in.start) {
        x_ = {};
        x_[1] = kHpuExitAddress;
        x_[2] = in.sp;
        x_[10] = in.args[0];
        x_[11] = in.args[1];
        x_[12] = in.args[2];
        pc_ = in.entry;
        cause_ = HpuTrap::none;
        state_ = State::fetch;
      }
      break;
    case State::fetch:
      if (pc_ == kHpuExitAddress) {
        state_ = State::done;
      } else if ((pc_ & 3U) != 0) {
        raise(HpuTrap::fetch_misaligned, pc_);
      } else {
        state_ = State::wait_i;
      }
      break;
    case State::wait_i:
      if (in.mem_rvalid) {
        if (in.mem_err) {
          raise(HpuTrap::fetch_fault, pc_);
        } else {
          ir_ = in.mem_rdata;
          state_ = State::decode;
        }
      }
      break;
    case State::decode:
      state_ = State::exec;
      break;
    case State::exec:
      exec();
      break;
    case State::mem:
      state_ = State::wait_d;
      break;
    case State::wait_d:
      if (in.mem_rvalid) {
        const bool store = (ir_ & 0x7FU) == kStore;
        if (in.mem_err) {
          raise(store ? HpuTrap::store_fault : HpuTrap::load_fault, pc_);
        } else {
          if (!store) finish_load(in.mem_rdata);
          pc_ += 4U;
          ++retired_;
          state_ = State::fetch;
        }
      }
      break;
    case State::div:
      if (++div_count_ == kHpuDivCycles) state_ = State::div_end;
      break;
    case State::div_end:
      write_rd(div_result_);
      pc_ += 4U;
      ++retired_;
      state_ = State::fetch;
      break;
    case State::done:
    case State::trap:
      state_ = State::idle;
      break;
  }
  return out;
}

namespace {

std::string hex(std::uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s = "0x00000000";
  for (int i = 9; i >= 2; --i, v >>= 4)
    s[static_cast<std::size_t>(i)] = kDigits[v & 0xFU];
  return s;
}

std::optional<PortMismatch> differs(const char* port, std::uint32_t e, std::uint32_t a) {
  if (e == a) return std::nullopt;
  return PortMismatch{port, hex(e), hex(a)};
}

}  // namespace

std::optional<PortMismatch> first_mismatch(const HpuPort& /*shape*/, const HpuOutputs& expected,
                                           const HpuOutputs& actual) {
  const HpuOutputs& e = expected;
  const HpuOutputs& a = actual;
  if (auto m = differs("busy", e.busy, a.busy)) return m;
  if (auto m = differs("done", e.done, a.done)) return m;
  if (e.done) {
    if (auto m = differs("ret", e.ret, a.ret)) return m;
  }
  if (auto m = differs("trap", e.trap, a.trap)) return m;
  if (e.trap) {
    if (e.trap_cause != a.trap_cause) {
      return PortMismatch{"trap_cause", std::string(to_string(e.trap_cause)),
                          std::string(to_string(a.trap_cause))};
    }
    if (auto m = differs("trap_pc", e.trap_pc, a.trap_pc)) return m;
  }
  if (auto m = differs("mem_req", e.mem_req, a.mem_req)) return m;
  if (e.mem_req) {
    if (auto m = differs("mem_fetch", e.mem_fetch, a.mem_fetch)) return m;
    if (auto m = differs("mem_we", e.mem_we, a.mem_we)) return m;
    if (auto m = differs("mem_addr", e.mem_addr, a.mem_addr)) return m;
    if (auto m = differs("mem_be", e.mem_be, a.mem_be)) return m;
    if (e.mem_we) {
      // Only the enabled lanes carry data.
      std::uint32_t mask = 0;
      for (unsigned i = 0; i < 4; ++i) {
        if ((e.mem_be >> i) & 1U) mask |= 0xFFU << (8 * i);
      }
      if (auto m = differs("mem_wdata", e.mem_wdata & mask, a.mem_wdata & mask)) return m;
    }
  }
  return std::nullopt;
}

}  // namespace naa::rtl
