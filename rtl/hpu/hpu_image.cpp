// load_hpu_image(): ELF32 as the System V ABI (gABI, "Object Files") and the RISC-V ELF psABI
// ("ELF Object Files": e_machine 243, e_flags EF_RISCV_RVC = 0x1, EF_RISCV_FLOAT_ABI = 0x6)
// define it. Only what a loader needs: the header, the program headers (PT_LOAD), the symbol
// table for entry points.
#include <cstring>

#include "naa/rtl/hpu_image.hpp"

namespace naa::rtl {

std::optional<std::uint32_t> HpuImage::symbol(const std::string& name) const {
  const auto it = symbols.find(name);
  if (it == symbols.end()) return std::nullopt;
  return it->second;
}

namespace {

constexpr std::uint16_t kEtExec = 2;
constexpr std::uint16_t kEmRiscv = 243;
constexpr std::uint32_t kPtLoad = 1;
constexpr std::uint32_t kPfX = 1;
constexpr std::uint32_t kPfW = 2;
constexpr std::uint32_t kShtSymtab = 2;
constexpr std::uint32_t kEfRvc = 0x1;
constexpr std::uint32_t kEfFloatAbi = 0x6;

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> f) : f_(f) {}
  [[nodiscard]] bool has(std::uint64_t off, std::uint64_t len) const {
    return off <= f_.size() && len <= f_.size() - off;
  }
  [[nodiscard]] std::uint32_t u32(std::uint64_t off) const {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < 4; ++i)
      v |= std::uint32_t{f_[off + i]} << (8 * i);
    return v;
  }
  [[nodiscard]] std::uint16_t u16(std::uint64_t off) const {
    return static_cast<std::uint16_t>(f_[off] | (f_[off + 1] << 8));
  }
  [[nodiscard]] std::span<const std::uint8_t> bytes(std::uint64_t off, std::uint64_t len) const {
    return f_.subspan(off, len);
  }

 private:
  std::span<const std::uint8_t> f_;
};

HpuImageResult refuse(HpuImageError e, std::string message) {
  HpuImageResult r;
  r.error = e;
  r.message = std::move(message);
  return r;
}

}  // namespace

HpuImageResult load_hpu_image(std::span<const std::uint8_t> file) {
  const Reader r(file);
  if (!r.has(0, 52) || std::memcmp(file.data(),
                                   "\x7f"
                                   "ELF",
                                   4) != 0) {
    return refuse(HpuImageError::not_elf, "not an ELF file");
  }
  if (file[4] != 1 || file[5] != 1) {
    return refuse(HpuImageError::wrong_class, "not ELF32 little-endian (build with riscv32)");
  }
  if (r.u16(18) != kEmRiscv) {
    return refuse(HpuImageError::wrong_machine,
                  "e_machine " + std::to_string(r.u16(18)) + " is not RISC-V (243)");
  }
  if (r.u16(16) != kEtExec) return refuse(HpuImageError::not_executable, "not an executable");
  const std::uint32_t flags = r.u32(36);
  if ((flags & kEfRvc) != 0) {
    return refuse(HpuImageError::compressed,
                  "built with compressed instructions; the HPU is RV32IM (-march=rv32im)");
  }
  if ((flags & kEfFloatAbi) != 0) {
    return refuse(HpuImageError::float_abi, "floating-point ABI; the HPU is ilp32 (-mabi=ilp32)");
  }
  HpuImage image;
  image.entry = r.u32(24);
  const std::uint32_t phoff = r.u32(28);
  const std::uint32_t shoff = r.u32(32);
  const std::uint16_t phentsize = r.u16(42), phnum = r.u16(44);
  const std::uint16_t shentsize = r.u16(46), shnum = r.u16(48);
  if (phnum != 0 && (phentsize < 32 || !r.has(phoff, std::uint64_t{phentsize} * phnum))) {
    return refuse(HpuImageError::not_elf, "program headers outside the file");
  }
  for (unsigned i = 0; i < phnum; ++i) {
    const std::uint64_t ph = phoff + std::uint64_t{i} * phentsize;
    if (r.u32(ph) != kPtLoad) continue;
    const std::uint32_t offset = r.u32(ph + 4), vaddr = r.u32(ph + 8);
    const std::uint32_t filesz = r.u32(ph + 16), memsz = r.u32(ph + 20), pflags = r.u32(ph + 24);
    if (memsz == 0) continue;
    if (filesz > memsz || !r.has(offset, filesz) || std::uint64_t{vaddr} + memsz > 1ULL << 32) {
      return refuse(HpuImageError::not_elf, "a segment lies outside the file or the address space");
    }
    HpuSegment s;
    s.vaddr = vaddr;
    const auto data = r.bytes(offset, filesz);
    s.bytes.assign(data.begin(), data.end());
    s.bytes.resize(memsz, 0);
    s.writable = (pflags & kPfW) != 0;
    s.executable = (pflags & kPfX) != 0;
    image.segments.push_back(std::move(s));
  }
  if (image.segments.empty()) return refuse(HpuImageError::no_segments, "no loadable segment");
  // Symbols: optional (a stripped image has only its entry point).
  if (shnum != 0 && shentsize >= 40 && r.has(shoff, std::uint64_t{shentsize} * shnum)) {
    for (unsigned i = 0; i < shnum; ++i) {
      const std::uint64_t sh = shoff + std::uint64_t{i} * shentsize;
      if (r.u32(sh + 4) != kShtSymtab) continue;
      const std::uint32_t off = r.u32(sh + 16), size = r.u32(sh + 20), link = r.u32(sh + 24);
      if (link >= shnum || !r.has(off, size)) continue;
      const std::uint64_t str_sh = shoff + std::uint64_t{link} * shentsize;
      const std::uint32_t str_off = r.u32(str_sh + 16), str_size = r.u32(str_sh + 20);
      if (!r.has(str_off, str_size)) continue;
      const auto strtab = r.bytes(str_off, str_size);
      for (std::uint64_t e = off; e + 16 <= std::uint64_t{off} + size; e += 16) {
        const std::uint32_t name = r.u32(e), value = r.u32(e + 4);
        const std::uint8_t type = file[e + 12] & 0xFU;  // STT_OBJECT 1, STT_FUNC 2
        if (name == 0 || name >= strtab.size() || (type != 1 && type != 2)) continue;
        const auto* s = reinterpret_cast<const char*>(strtab.data() + name);
        image.symbols[std::string(s, strnlen(s, strtab.size() - name))] = value;
      }
    }
  }
  HpuImageResult result;
  result.image = std::move(image);
  return result;
}

}  // namespace naa::rtl
