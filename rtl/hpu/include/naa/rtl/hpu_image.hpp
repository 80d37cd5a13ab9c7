// A program for the HPU: an ELF32 little-endian RISC-V executable (what clang --target=riscv32
// and lld produce), checked and reduced to its loadable segments and symbols (rtl/hpu/README.md
// "Images"). Compressed instructions (the C extension) are refused: the core is RV32IM.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace naa::rtl {

struct HpuSegment {
  std::uint32_t vaddr = 0;
  std::vector<std::uint8_t> bytes;  // the file's bytes, then zeros up to the segment's size
  bool writable = false;
  bool executable = false;
};

struct HpuImage {
  std::uint32_t entry = 0;  // e_entry
  std::vector<HpuSegment> segments;
  std::map<std::string, std::uint32_t> symbols;  // global and local functions and objects
  [[nodiscard]] std::optional<std::uint32_t> symbol(const std::string& name) const;
};

// Why an image was refused, one value per reason (an MRSP error code maps onto each later).
enum class HpuImageError : std::uint8_t {
  none = 0,
  not_elf,         // no ELF magic, truncated, or a header/table outside the file
  wrong_class,     // not ELF32 little-endian
  wrong_machine,   // e_machine is not EM_RISCV (243)
  not_executable,  // e_type is not ET_EXEC
  compressed,      // e_flags has EF_RISCV_RVC: built for a core with the C extension
  float_abi,       // e_flags asks for a floating-point ABI
  no_segments,     // nothing to load
};

struct HpuImageResult {
  std::optional<HpuImage> image;
  HpuImageError error = HpuImageError::none;
  std::string message;  // what was wrong, for people
};

[[nodiscard]] HpuImageResult load_hpu_image(std::span<const std::uint8_t> file);

}  // namespace naa::rtl
