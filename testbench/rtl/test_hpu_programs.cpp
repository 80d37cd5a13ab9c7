// C programs on the HPU: hpu_programs/programs.c compiled by clang-14 for riscv32 (rv32im) and
// run on the model, the RTL and both in lockstep, against the same C compiled for the host (the
// oracle): return values and every byte of the buffer. And load_hpu_image()'s refusals.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "hpu_programs/programs.h"
#include "naa/rtl/hpu.hpp"
#include "naa/rtl/hpu_image.hpp"
#include "naa/rtl/hpu_rtl.hpp"
#include "naa/rtl/hpu_run.hpp"
#include "support/rtl_seed.hpp"

namespace naa::testbench::rtl {
namespace {

constexpr std::uint32_t kBuffer = 0x4000'0000;
constexpr std::uint32_t kStackTop = 0x8000'0000;
constexpr std::uint32_t kStackSize = 0x1'0000;

// The riscv32 image CMake built, or empty with the reason the test is skipped.
std::vector<std::uint8_t> programs_image() {
  const std::string path = NAA_HPU_PROGRAMS_ELF;
  if (path.empty()) return {};
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool skip_without_image(const std::vector<std::uint8_t>& image) {
  if (!image.empty()) return false;
  const char* require = std::getenv("NAA_REQUIRE_TOOLS");
  if (require != nullptr && std::string(require) == "1") {
    FAIL("clang-14 or ld.lld missing at configure time and NAA_REQUIRE_TOOLS=1");
  }
  std::cout << "NAA_SKIP: clang-14 and ld.lld (Debian clang-14, lld-14) were not found when "
               "configuring: no riscv32 image to run\n";
  return true;
}

struct Program {
  const char* name;
  std::uint32_t (*native)(std::uint32_t*, std::uint32_t, std::uint32_t);
  std::uint32_t words;
};

const std::vector<Program>& programs() {
  static const std::vector<Program> all = {
      {"hpu_prog_arith", hpu_prog_arith, 64},        {"hpu_prog_crc32", hpu_prog_crc32, 64},
      {"hpu_prog_sort", hpu_prog_sort, 48},          {"hpu_prog_bytes", hpu_prog_bytes, 64},
      {"hpu_prog_recursion", hpu_prog_recursion, 4}, {"hpu_prog_mul64", hpu_prog_mul64, 64},
  };
  return all;
}

HpuMemory map_image(const HpuImage& image, std::uint32_t words) {
  HpuMemory mem(1);
  for (const HpuSegment& s : image.segments) {
    mem.add(s.vaddr, static_cast<std::uint32_t>(s.bytes.size()), s.writable, s.executable);
    REQUIRE(mem.write(s.vaddr, s.bytes));
  }
  mem.add(kBuffer, 4 * words, true, false);
  mem.add(kStackTop - kStackSize, kStackSize, true, false);
  return mem;
}

std::vector<std::uint32_t> read_buffer(HpuMemory& mem, std::uint32_t words) {
  std::vector<std::uint8_t> bytes(4 * words);
  REQUIRE(mem.read(kBuffer, bytes));
  std::vector<std::uint32_t> out(words);
  for (std::uint32_t i = 0; i < words; ++i) {
    out[i] = bytes[4 * i] | bytes[4 * i + 1] << 8 | bytes[4 * i + 2] << 16 |
             static_cast<std::uint32_t>(bytes[4 * i + 3]) << 24;
  }
  return out;
}

TEST_CASE("hpu: C programs built with clang for riscv32 give the host's results", "[rtl][hpu]") {
  const std::vector<std::uint8_t> file = programs_image();
  if (skip_without_image(file)) return;
  const HpuImageResult loaded = load_hpu_image(file);
  INFO(loaded.message);
  REQUIRE(loaded.image);
  const HpuImage& image = *loaded.image;
  Rng rng = seeded_rng("hpu C programs");
  const auto seed = static_cast<std::uint32_t>(rng());
  RtlOptions options;
  options.x_seed = static_cast<std::uint32_t>(rng());
  std::string divergence;
  HpuLockstep lockstep(std::make_unique<HpuModel>(), make_hpu_rtl(options),
                       [&](const Divergence& d) { divergence = d.to_string(); });
  HpuModel model;
  auto rtl = make_hpu_rtl(options);
  std::vector<std::pair<const char*, HpuPort*>> cores = {
      {"model", &model}, {"rtl", rtl.get()}, {"lockstep", &lockstep}};
  for (auto& [kind, core] : cores)
    reset_hpu(*core);
  for (const Program& p : programs()) {
    const auto entry = image.symbol(p.name);
    REQUIRE(entry);
    std::vector<std::uint32_t> want_buf(p.words);
    const std::uint32_t want = p.native(want_buf.data(), p.words, seed);
    for (auto& [kind, core] : cores) {
      INFO(p.name << " on the " << kind << ", seed " << seed);
      HpuMemory mem = map_image(image, p.words);
      HpuCall call;
      call.entry = *entry;
      call.sp = kStackTop;
      call.args = {kBuffer, p.words, seed};
      call.max_cycles = 20'000'000;
      const HpuCallResult r = run_hpu_call(*core, mem, call);
      INFO("trap " << to_string(r.trap) << " at 0x" << std::hex << r.trap_pc << std::dec);
      REQUIRE(r.outcome == HpuOutcome::returned);
      CHECK(r.ret == want);
      CHECK(read_buffer(mem, p.words) == want_buf);
      if (std::string(kind) == "model") {
        std::cout << "[hpu C programs] " << p.name << ": " << r.cycles << " cycles\n";
      }
    }
    CHECK(divergence.empty());
  }
}

TEST_CASE("hpu: images that do not fit the core are refused with the reason", "[rtl][hpu]") {
  const std::vector<std::uint8_t> file = programs_image();
  if (skip_without_image(file)) return;
  REQUIRE(load_hpu_image(file).error == HpuImageError::none);
  auto patched = [&](std::size_t offset, std::uint8_t value) {
    std::vector<std::uint8_t> f = file;
    f[offset] = value;
    return load_hpu_image(f);
  };
  CHECK(patched(0, 0x7E).error == HpuImageError::not_elf);
  CHECK(patched(4, 2).error == HpuImageError::wrong_class);      // ELFCLASS64
  CHECK(patched(18, 62).error == HpuImageError::wrong_machine);  // EM_X86_64
  CHECK(patched(16, 1).error == HpuImageError::not_executable);  // ET_REL
  CHECK(patched(36, 0x1).error == HpuImageError::compressed);    // EF_RISCV_RVC
  CHECK(patched(36, 0x4).error == HpuImageError::float_abi);     // double-float ABI
  const std::vector<std::uint8_t> truncated(file.begin(), file.begin() + 40);
  CHECK(load_hpu_image(truncated).error == HpuImageError::not_elf);
  std::vector<std::uint8_t> no_load = file;
  no_load[44] = 0;  // e_phnum
  no_load[45] = 0;
  CHECK(load_hpu_image(no_load).error == HpuImageError::no_segments);
}

}  // namespace
}  // namespace naa::testbench::rtl
