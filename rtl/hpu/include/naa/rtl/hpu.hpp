// hpu port contract, C++ cycle model and lockstep pair (rtl/hpu/README.md; the RTL is
// rtl/hpu/hpu.sv): an RV32IM core that runs one sPIN handler at a time (seed 004, "HPU").
//
// A multi-cycle, in-order core without CSRs, caches or interrupts. Every instruction goes
// FETCH -> WAIT_I -> DECODE -> EXEC, loads and stores add MEM -> WAIT_D, divisions DIV (32
// cycles) -> DIV_END, so the cycles a handler takes are a function of its instructions and of the
// memory's response latency only: the HandlerEngine charges exactly these cycles.
//
// Memory port: one unified port, one request outstanding. The core presents a request for one
// cycle (mem_req) and the bus accepts it in that cycle; the response (mem_rvalid, with mem_rdata
// for a load and mem_err for a refused access) comes one or more cycles later. A store gets a
// response too. The bus decides the latency (a blocking sPIN action stalls the core this way).
//
// A call: with the core idle, start (one cycle) loads pc = entry, sp = sp, a0..a2 = the
// arguments, ra = kHpuExitAddress, every other register 0. The handler returns by jumping to
// kHpuExitAddress (an ordinary `ret`); the core then signals done for one cycle with ret = a0.
// ECALL, EBREAK, an illegal instruction, a misaligned access or an access the bus refuses end
// the call with trap for one cycle (cause, pc). Misaligned branch or jump targets trap at the
// fetch of the target (trap_pc is the target).
//
// One step() is one clock cycle: the inputs are what the caller drives during the cycle, the
// returned outputs are the block's outputs during that same cycle (before the rising edge that
// ends it). The outputs depend on the state only (Moore), so the bus can answer a request it sees
// in step k's outputs from step k + 1 on.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "naa/rtl/lockstep.hpp"

namespace naa::rtl {

// Where a handler returns to: ra at the start of a call (4-byte aligned, never mapped).
inline constexpr std::uint32_t kHpuExitAddress = 0xFFFF'FFFCU;
// Cycles of a DIV/DIVU/REM/REMU in the DIV state (one quotient bit per cycle), then one DIV_END.
inline constexpr std::uint32_t kHpuDivCycles = 32;

// Why a call ended without returning (hpu.sv trap_cause_e, same values).
enum class HpuTrap : std::uint8_t {
  none = 0,
  illegal_instruction = 1,
  ecall = 2,
  ebreak = 3,
  fetch_misaligned = 4,
  load_misaligned = 5,
  store_misaligned = 6,
  fetch_fault = 7,  // the bus refused the instruction fetch (mem_err)
  load_fault = 8,
  store_fault = 9,
};
[[nodiscard]] std::string_view to_string(HpuTrap t) noexcept;

struct HpuInputs {
  bool rst_n = true;  // active-low reset (asynchronous in the RTL)
  bool start = false;
  std::uint32_t entry = 0;
  std::uint32_t sp = 0;
  std::array<std::uint32_t, 3> args{};  // a0, a1, a2
  bool mem_rvalid = false;
  bool mem_err = false;
  std::uint32_t mem_rdata = 0;
};

struct HpuOutputs {
  bool busy = false;  // a call is running (from the cycle after start until done/trap)
  bool done = false;
  std::uint32_t ret = 0;  // a0, when done
  bool trap = false;
  HpuTrap trap_cause = HpuTrap::none;  // when trap
  std::uint32_t trap_pc = 0;           // when trap
  bool mem_req = false;
  bool mem_fetch = false;  // the request is an instruction fetch (execute permission)
  bool mem_we = false;
  std::uint8_t mem_be = 0;      // 4 bits: byte lanes of a store (0xF for every load and fetch)
  std::uint32_t mem_addr = 0;   // word aligned for a fetch and lw/sw; the byte's address otherwise
  std::uint32_t mem_wdata = 0;  // the store's bytes on their lanes
};

// The interface a model, a Verilated RTL adapter and a lockstep pair all implement.
class HpuPort {
 public:
  using Inputs = HpuInputs;
  using Outputs = HpuOutputs;
  static constexpr std::string_view kBlock = "hpu";

  virtual ~HpuPort() = default;
  // One clock cycle. Never throws.
  virtual HpuOutputs step(const HpuInputs& in) = 0;
};

// The golden cycle model: an instruction-set simulator with hpu.sv's state sequence.
class HpuModel final : public HpuPort {
 public:
  HpuOutputs step(const HpuInputs& in) override;

  // The architectural state, for tests and divergence reports.
  [[nodiscard]] std::uint32_t pc() const noexcept { return pc_; }
  [[nodiscard]] std::uint32_t reg(unsigned i) const noexcept { return i < 32 ? x_[i] : 0; }
  // The instruction in flight (the last one fetched).
  [[nodiscard]] std::uint32_t instruction() const noexcept { return ir_; }
  [[nodiscard]] std::uint64_t retired() const noexcept { return retired_; }

  enum class State : std::uint8_t {
    idle,
    fetch,
    wait_i,
    decode,
    exec,
    mem,
    wait_d,
    div,
    div_end,
    done,
    trap
  };
  [[nodiscard]] State state() const noexcept { return state_; }

 private:
  [[nodiscard]] HpuOutputs outputs() const noexcept;
  void exec();
  void finish_load(std::uint32_t rdata);
  void raise(HpuTrap cause, std::uint32_t pc);
  void write_rd(std::uint32_t value) noexcept;

  State state_ = State::idle;
  std::array<std::uint32_t, 32> x_{};
  std::uint32_t pc_ = 0;
  std::uint32_t ir_ = 0;
  std::uint32_t maddr_ = 0;  // a load/store's byte address
  std::uint32_t div_result_ = 0;
  std::uint32_t div_count_ = 0;
  HpuTrap cause_ = HpuTrap::none;
  std::uint32_t trap_pc_ = 0;
  std::uint64_t retired_ = 0;
};

// First differing port of one cycle, or nullopt. Payloads are compared only while qualified:
// ret when done, cause and pc when trap, the request's fields when mem_req (wdata and be only for
// a store).
[[nodiscard]] std::optional<PortMismatch> first_mismatch(const HpuPort& shape,
                                                         const HpuOutputs& expected,
                                                         const HpuOutputs& actual);

// Model and RTL in lockstep, behind the same port. A divergence report names the port; the
// model's pc and instruction at that cycle are in the lockstep's model() for the caller to add.
class HpuLockstep final : public HpuPort {
 public:
  HpuLockstep(std::unique_ptr<HpuPort> model, std::unique_ptr<HpuPort> rtl,
              LockstepChecker::Handler on_divergence = {})
      : pair_(std::move(model), std::move(rtl), std::move(on_divergence)) {}
  HpuOutputs step(const HpuInputs& in) override { return pair_.step(in); }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return pair_.checker(); }
  [[nodiscard]] HpuPort& model() noexcept { return pair_.model(); }

 private:
  LockstepPair<HpuPort> pair_;
};

}  // namespace naa::rtl
