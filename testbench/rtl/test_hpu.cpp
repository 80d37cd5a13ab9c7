// The HPU (rtl/hpu): the M extension's and the shifts' edge cases against values from the
// specification, every trap, seeded random programs with model and RTL in lockstep, and the
// broken variant caught by lockstep. C programs: test_hpu_programs.cpp.
#include <catch2/catch.hpp>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "hpu_asm.hpp"
#include "naa/rtl/hpu.hpp"
#include "naa/rtl/hpu_broken_rtl.hpp"
#include "naa/rtl/hpu_rtl.hpp"
#include "naa/rtl/hpu_run.hpp"
#include "support/rtl_seed.hpp"

namespace naa::testbench::rtl {
namespace {

namespace rv = naa::test::rv;

constexpr std::uint32_t kText = 0x1000;
constexpr std::uint32_t kData = 0x4000'0000;
constexpr std::uint32_t kDataSize = 4096;
constexpr std::uint32_t kStackTop = 0x8000'0000;

// A core and its memory with `program` at kText (read-only, executable), a data region and a stack.
struct Bench {
  explicit Bench(std::uint32_t latency = 1) : mem(latency) {
    mem.add(kText, 0x10000, false, true);
    mem.add(kData, kDataSize, true, false);
    mem.add(kStackTop - 0x1000, 0x1000, true, false);
  }
  void load(const std::vector<std::uint32_t>& program) {
    std::vector<std::uint8_t> bytes;
    for (const std::uint32_t w : program) {
      for (unsigned i = 0; i < 4; ++i)
        bytes.push_back(static_cast<std::uint8_t>(w >> (8 * i)));
    }
    REQUIRE(mem.write(kText, bytes));
  }
  std::uint32_t data_word(std::uint32_t index) {
    std::array<std::uint8_t, 4> b{};
    REQUIRE(mem.read(kData + 4 * index, b));
    return b[0] | b[1] << 8 | b[2] << 16 | static_cast<std::uint32_t>(b[3]) << 24;
  }
  HpuCallResult run(HpuPort& core, std::uint64_t max_cycles = 100'000) {
    HpuCall call;
    call.entry = kText;
    call.sp = kStackTop;
    call.args = {11, 22, 33};
    call.max_cycles = max_cycles;
    return run_hpu_call(core, mem, call);
  }
  HpuMemory mem;
};

// Model and RTL, each on its own copy of the bench.
using CoreFactory = std::function<std::unique_ptr<HpuPort>()>;
std::vector<std::pair<std::string, CoreFactory>> cores() {
  return {{"model", [] { return std::make_unique<HpuModel>(); }},
          {"rtl", [] { return make_hpu_rtl(); }}};
}

struct Case {
  const char* name;
  std::uint32_t f7, f3, a, b, want;
};

TEST_CASE("hpu: M extension and shift edge cases give the specification's values", "[rtl][hpu]") {
  // Volume I, 7.1 and table 7.1 (division by zero, overflow); 2.4 (shifts use rs2[4:0]).
  const std::vector<Case> cases = {
      {"div by zero", 1, 4, 1234, 0, 0xFFFFFFFFU},
      {"div -7 by zero", 1, 4, 0xFFFFFFF9U, 0, 0xFFFFFFFFU},
      {"divu by zero", 1, 5, 1234, 0, 0xFFFFFFFFU},
      {"rem by zero", 1, 6, 0xFFFFFFF9U, 0, 0xFFFFFFF9U},
      {"remu by zero", 1, 7, 1234, 0, 1234},
      {"div overflow", 1, 4, 0x80000000U, 0xFFFFFFFFU, 0x80000000U},
      {"rem overflow", 1, 6, 0x80000000U, 0xFFFFFFFFU, 0},
      {"div -7/2", 1, 4, 0xFFFFFFF9U, 2, 0xFFFFFFFDU},
      {"rem -7%2", 1, 6, 0xFFFFFFF9U, 2, 0xFFFFFFFFU},
      {"rem 7%-2", 1, 6, 7, 0xFFFFFFFEU, 1},
      {"divu max", 1, 5, 0xFFFFFFFFU, 3, 0x55555555U},
      {"mulh -1*-1", 1, 1, 0xFFFFFFFFU, 0xFFFFFFFFU, 0},
      {"mulhsu -1*max", 1, 2, 0xFFFFFFFFU, 0xFFFFFFFFU, 0xFFFFFFFFU},
      {"mulhu max*max", 1, 3, 0xFFFFFFFFU, 0xFFFFFFFFU, 0xFFFFFFFEU},
      {"mul low", 1, 0, 0x12345678U, 0x9ABCDEF0U, 0x242D2080U},
      {"sra", 0x20, 5, 0x80000000U, 31, 0xFFFFFFFFU},
      {"sra uses rs2[4:0]", 0x20, 5, 0x80000000U, 33, 0xC0000000U},
      {"srl", 0, 5, 0x80000000U, 31, 1},
      {"sll uses rs2[4:0]", 0, 1, 1, 32 + 4, 16},
      {"slt", 0, 2, 0xFFFFFFFFU, 1, 1},
      {"sltu", 0, 3, 0xFFFFFFFFU, 1, 0},
      {"sub", 0x20, 0, 1, 2, 0xFFFFFFFFU},
  };
  std::vector<std::uint32_t> p;
  p.push_back(rv::lui(3, kData));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    rv::li(p, 5, cases[i].a);
    rv::li(p, 6, cases[i].b);
    p.push_back(rv::op(cases[i].f7, cases[i].f3, 7, 5, 6));
    p.push_back(rv::store(2, 7, 3, static_cast<std::int32_t>(4 * i)));
  }
  // Sign- and zero-extending loads of 0x80 and 0x8000 (2.6).
  rv::li(p, 5, 0x00008080U);
  p.push_back(rv::store(2, 5, 3, 512));
  p.push_back(rv::load(0, 10, 3, 512));  // lb -> a0 = 0xFFFFFF80
  p.push_back(rv::load(4, 11, 3, 512));  // lbu
  p.push_back(rv::load(1, 12, 3, 512));  // lh
  p.push_back(rv::load(5, 13, 3, 512));  // lhu
  p.push_back(rv::store(2, 11, 3, 516));
  p.push_back(rv::store(2, 12, 3, 520));
  p.push_back(rv::store(2, 13, 3, 524));
  p.push_back(rv::kRet);
  for (auto& [kind, make] : cores()) {
    SECTION(kind) {
      Bench bench;
      bench.load(p);
      auto core = make();
      reset_hpu(*core);
      const HpuCallResult r = bench.run(*core);
      REQUIRE(r.outcome == HpuOutcome::returned);
      CHECK(r.ret == 0xFFFFFF80U);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i].name);
        CHECK(bench.data_word(static_cast<std::uint32_t>(i)) == cases[i].want);
      }
      CHECK(bench.data_word(129) == 0x80U);
      CHECK(bench.data_word(130) == 0xFFFF8080U);
      CHECK(bench.data_word(131) == 0x8080U);
    }
  }
}

TEST_CASE("hpu: a call costs the cycles of its instructions (README \"Cycles\")", "[rtl][hpu]") {
  // addi; lw; div; ret with bus latency 2: start 1 + ALU (3+2) + load (4+2*2) + div (36+2) + ret
  // (3+2) + exit fetch 1 + done 1.
  std::vector<std::uint32_t> p = {rv::addi(5, 0, 7), rv::load(2, 6, 2, -4), rv::op(1, 4, 10, 5, 5),
                                  rv::kRet};
  for (auto& [kind, make] : cores()) {
    SECTION(kind) {
      Bench bench(2);
      bench.load(p);
      auto core = make();
      reset_hpu(*core);
      const HpuCallResult r = bench.run(*core);
      REQUIRE(r.outcome == HpuOutcome::returned);
      CHECK(r.ret == 1);
      CHECK(r.cycles == 1 + 5 + 8 + 38 + 5 + 1 + 1);
    }
  }
}

struct TrapCase {
  const char* name;
  std::vector<std::uint32_t> program;
  HpuTrap cause;
  std::uint32_t pc;
};

TEST_CASE("hpu: every trap ends the call with its cause and pc", "[rtl][hpu]") {
  const std::vector<TrapCase> cases = {
      {"ecall", {rv::addi(5, 0, 1), rv::kEcall}, HpuTrap::ecall, kText + 4},
      {"ebreak", {rv::kEbreak}, HpuTrap::ebreak, kText},
      {"illegal (all ones)", {0xFFFFFFFFU}, HpuTrap::illegal_instruction, kText},
      {"illegal (CSR read)", {0xC0002573U}, HpuTrap::illegal_instruction, kText},  // rdcycle a0
      {"illegal (SLLI with funct7)",
       {rv::i_type(0x401, 5, 1, 5, 0x13)},
       HpuTrap::illegal_instruction,
       kText},
      {"misaligned lw",
       {rv::lui(3, kData), rv::load(2, 5, 3, 2)},
       HpuTrap::load_misaligned,
       kText + 4},
      {"misaligned sh",
       {rv::lui(3, kData), rv::store(1, 5, 3, 1)},
       HpuTrap::store_misaligned,
       kText + 4},
      {"load outside memory", {rv::load(2, 5, 0, 0x100)}, HpuTrap::load_fault, kText},
      {"store to code",
       {rv::lui(3, kText), rv::store(2, 5, 3, 0)},
       HpuTrap::store_fault,
       kText + 4},
      {"fetch from data", {rv::lui(3, kData), rv::jalr(0, 3, 0)}, HpuTrap::fetch_fault, kData},
      {"jump to a misaligned target", {rv::jal(0, 6)}, HpuTrap::fetch_misaligned, kText + 6},
  };
  for (auto& [kind, make] : cores()) {
    SECTION(kind) {
      auto core = make();
      reset_hpu(*core);
      for (const TrapCase& c : cases) {
        INFO(kind << ": " << c.name);
        Bench bench;
        bench.load(c.program);
        const HpuCallResult r = bench.run(*core);
        REQUIRE(r.outcome == HpuOutcome::trapped);
        CHECK(r.trap == c.cause);
        CHECK(r.trap_pc == c.pc);
      }
      // The watchdog: `j .` never returns; the core is reset and runs the next call.
      Bench loop;
      loop.load({rv::jal(0, 0)});
      const HpuCallResult w = loop.run(*core, 500);
      CHECK(w.outcome == HpuOutcome::watchdog);
      CHECK(w.cycles == 500);
      Bench ok;
      ok.load({rv::addi(10, 0, 42), rv::kRet});
      const HpuCallResult r = ok.run(*core);
      CHECK(r.outcome == HpuOutcome::returned);
      CHECK(r.ret == 42);
    }
  }
}

// A random straight-line program with forward branches and jumps (so it always ends): registers
// x5..x31 loaded with random values (operands biased to 0, -1 and INT_MIN for the M extension's
// special cases), ALU, M, loads and stores in the data region through x3, then every register
// stored, then ret. Lockstep compares every store and the returned a0.
std::vector<std::uint32_t> random_program(Rng& rng, std::size_t body) {
  std::vector<std::uint32_t> p;
  auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  auto value = [&]() -> std::uint32_t {
    switch (pick(6)) {
      case 0:
        return 0;
      case 1:
        return 0xFFFFFFFFU;
      case 2:
        return 0x80000000U;
      default:
        return static_cast<std::uint32_t>(rng());
    }
  };
  auto rd = [&] { return pick(8) == 0 ? 0U : 5 + pick(27); };  // sometimes x0
  auto rs = [&] { return pick(10) == 0 ? pick(5) : 5 + pick(27); };
  p.push_back(rv::lui(3, kData));
  for (unsigned r = 5; r < 32; ++r)
    rv::li(p, r, value());
  const std::size_t end = p.size() + body;
  while (p.size() < end) {
    const std::size_t left = end - p.size();
    switch (pick(12)) {
      case 0:
      case 1:
      case 2: {  // OP, with M one time in three
        const std::uint32_t kind = pick(3);
        const std::uint32_t f3 = pick(8);
        std::uint32_t f7 = kind == 0 ? 1U : 0U;
        if (f7 == 0 && (f3 == 0 || f3 == 5) && pick(2) == 0) f7 = 0x20;
        p.push_back(rv::op(f7, f3, rd(), rs(), rs()));
        break;
      }
      case 3:
      case 4: {  // OP-IMM
        const std::uint32_t f3 = pick(8);
        std::int32_t imm = static_cast<std::int32_t>(pick(4096)) - 2048;
        if (f3 == 1) imm &= 31;
        if (f3 == 5) imm = static_cast<std::int32_t>((pick(2) ? 0x400U : 0U) | pick(32));
        p.push_back(rv::i_type(imm, rs(), f3, rd(), 0x13));
        break;
      }
      case 5:
        p.push_back(pick(2) ? rv::lui(rd(), static_cast<std::uint32_t>(rng()))
                            : rv::auipc(rd(), static_cast<std::uint32_t>(rng())));
        break;
      case 6: {  // load: lb lh lw lbu lhu, aligned in the data region
        static constexpr std::uint32_t kF3[] = {0, 1, 2, 4, 5};
        const std::uint32_t f3 = kF3[pick(5)];
        const std::uint32_t size = 1U << (f3 & 3U);
        p.push_back(rv::load(f3, rd(), 3, static_cast<std::int32_t>(pick(1024 / size) * size)));
        break;
      }
      case 7: {
        const std::uint32_t f3 = pick(3);
        const std::uint32_t size = 1U << f3;
        p.push_back(rv::store(f3, rs(), 3, static_cast<std::int32_t>(pick(1024 / size) * size)));
        break;
      }
      case 8:
      case 9: {  // a forward branch
        static constexpr std::uint32_t kF3[] = {0, 1, 4, 5, 6, 7};
        const auto skip = static_cast<std::int32_t>(
            1 + pick(static_cast<std::uint32_t>(std::min<std::size_t>(left, 6))));
        p.push_back(rv::b_type(4 * skip, rs(), rs(), kF3[pick(6)]));
        break;
      }
      case 10: {
        const auto skip = static_cast<std::int32_t>(
            1 + pick(static_cast<std::uint32_t>(std::min<std::size_t>(left, 4))));
        p.push_back(rv::jal(rd(), 4 * skip));
        break;
      }
      default:
        p.push_back(rv::kFence);
        break;
    }
  }
  for (unsigned r = 4; r < 32; ++r) {
    p.push_back(rv::store(2, r, 3, static_cast<std::int32_t>(1024 + 4 * r)));
  }
  p.push_back(rv::kRet);
  return p;
}

TEST_CASE("hpu: model and RTL agree every cycle on random programs", "[rtl][hpu]") {
  Rng rng = seeded_rng("hpu random programs");
  RtlOptions options;
  options.x_seed = static_cast<std::uint32_t>(rng());
  std::string divergence;
  HpuLockstep dut(std::make_unique<HpuModel>(), make_hpu_rtl(options),
                  [&](const Divergence& d) { divergence = d.to_string(); });
  reset_hpu(dut);
  std::uint64_t cycles = 0;
  std::uint64_t retired = 0;
  const int kPrograms = 300;
  for (int i = 0; i < kPrograms && divergence.empty(); ++i) {
    Bench bench(1 + static_cast<std::uint32_t>(rng() % 3));
    bench.load(random_program(rng, 120));
    const auto& model = static_cast<const HpuModel&>(dut.model());
    const std::uint64_t before = model.retired();
    const HpuCallResult r = bench.run(dut);
    INFO("program " << i << ": " << divergence << " trap " << to_string(r.trap) << " at "
                    << r.trap_pc);
    REQUIRE(r.outcome == HpuOutcome::returned);
    cycles += r.cycles;
    retired += model.retired() - before;
  }
  INFO(divergence);
  CHECK(divergence.empty());
  CHECK_FALSE(dut.checker().diverged());
  std::cout << "[hpu random programs] " << kPrograms << " programs, " << retired
            << " instructions, " << cycles << " cycles in lockstep\n";
}

TEST_CASE("hpu: lockstep catches the broken variant (REM takes the divisor's sign)", "[rtl][hpu]") {
  Rng rng = seeded_rng("hpu broken variant");
  std::string divergence;
  const HpuModel* model = nullptr;
  std::uint32_t pc = 0, instruction = 0;  // the model's, in the cycle of the divergence
  HpuLockstep dut(std::make_unique<HpuModel>(), make_hpu_broken_rtl(), [&](const Divergence& d) {
    divergence = d.to_string();
    pc = model->pc();
    instruction = model->instruction();
  });
  model = &static_cast<const HpuModel&>(dut.model());
  reset_hpu(dut);
  for (int i = 0; i < 300 && divergence.empty(); ++i) {
    Bench bench;
    bench.load(random_program(rng, 120));
    (void)bench.run(dut);
  }
  REQUIRE_FALSE(divergence.empty());
  std::cout << "[hpu broken variant] " << divergence << "\n";
  std::cout << "[hpu broken variant] model pc 0x" << std::hex << pc << ", instruction 0x"
            << instruction << std::dec << "\n";
}

}  // namespace
}  // namespace naa::testbench::rtl
