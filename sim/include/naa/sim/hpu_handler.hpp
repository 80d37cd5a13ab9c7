// HpuHandler (docs/spin.md, issue 28): a sPIN handler image written in C against naa/spin.h,
// built for riscv32 (naa_add_handler) and run by the HandlerEngine instruction by instruction on
// HPU cores (rtl/hpu: the C++ model, the Verilated RTL or both in lockstep, one core per HPU). A
// handler's simulated time is the cycles its core executes; a fault (an access outside the HPU's
// memory map) is PTL_SEGV, the watchdog stops a handler that runs too long.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "naa/rtl/hpu.hpp"
#include "naa/rtl/hpu_image.hpp"
#include "naa/sim/config.hpp"
#include "naa/sim/handler_engine.hpp"

namespace naa::sim {

// The riscv32 layout of naa/spin.h's structs and the memory map (docs/spin.md "Memory map").
struct SpinLayout {
  static constexpr std::uint32_t kMagic = 0x4E535049U;
  static constexpr std::uint32_t kAbi = 2;              // naa_spin_info_t with user_hdr_bytes
  static constexpr std::uint32_t kAbiNoUserHeader = 1;  // the first ABI, still loaded
  static constexpr std::uint32_t kMaxUserHeader = 256;  // NAA_SPIN_MAX_USER_HDR
  static constexpr std::uint32_t kImageBase = 0x0001'0000U;
  static constexpr std::uint32_t kImageMax = 0x1'0000U;  // 64 KiB: larger images are refused
  static constexpr std::uint32_t kState = 0x2000'0000U;
  static constexpr std::uint32_t kPacket = 0x3000'0000U;
  static constexpr std::uint32_t kArgs = 0x3100'0000U;   // the handler's argument struct
  static constexpr std::uint32_t kEnv = kArgs + 0x100U;  // naa_spin_env_t
  static constexpr std::uint32_t kArgsSize = 0x200U;
  static constexpr std::uint32_t kMaxRegions = 16;  // listed in naa_spin_env_t
  static constexpr std::uint32_t kStackTop = 0x7000'0000U;
  static constexpr std::uint32_t kStackSize = 0x1000U;
  static constexpr std::uint32_t kMmio = 0xF000'0000U;
  static constexpr std::uint32_t kMmioSize = 0x20U;
};

// Why an image was refused (naa-sim prints the message and exits 2; an image installed over
// MRSP is answered with mrsp_error_of(), docs/protocol.md "Handler images").
enum class SpinImageError : std::uint8_t {
  none = 0,
  wrong_machine,  // not an ELF32 little-endian RISC-V file (EM_RISCV, ELFCLASS32, ELFDATA2LSB)
  bad_elf,        // rtl::load_hpu_image refused it otherwise (truncated, compressed, ...)
  too_large,      // a segment outside [kImageBase, kImageBase + kImageMax)
  no_info,        // no naa_spin_info symbol, or not inside a segment
  bad_info,       // wrong magic or ABI, function code outside 1..127, user header too large
  bad_entry,      // no payload handler, or a handler's address outside the executable segments
};
// The MRSP error code (protocol/mrsp.hpp) that answers an install refused for `e`: wrong
// machine 0x04, too large 0x05, missing entry point (no naa_spin_info, no payload handler, a
// handler outside the code) 0x06, anything else 0x07.
[[nodiscard]] std::uint8_t mrsp_error_of(SpinImageError e) noexcept;
// The largest image file (and initial state behind it) a HANDLER_IMAGE region may hold.
inline constexpr std::uint32_t kSpinMaxImageFile = 1024 * 1024;

// The HPU cores, one per HPU (--hpus), shared by every handler image: a core runs one
// invocation at a time, to its end. Each is the model, the RTL or a lockstep pair (--hpu).
class HpuCores {
 public:
  explicit HpuCores(std::vector<std::unique_ptr<rtl::HpuPort>> cores);  // resets each
  [[nodiscard]] rtl::HpuPort& core(std::uint32_t index) { return *cores_.at(index); }
  [[nodiscard]] std::size_t size() const noexcept { return cores_.size(); }

 private:
  std::vector<std::unique_ptr<rtl::HpuPort>> cores_;
};

// Without --hpu-max-cycles or --kernel-timeout-cycles a handler still stops after this many.
inline constexpr std::uint64_t kHpuDefaultMaxCycles = 10'000'000;

class HpuHandler final : public Handler {
 public:
  struct Loaded {
    std::unique_ptr<HpuHandler> handler;
    SpinImageError error = SpinImageError::none;
    std::string message;
  };
  // `max_cycles`: the longest a handler may run before the watchdog stops it. `cores` may be
  // null to check an image without running it.
  static Loaded load(std::span<const std::uint8_t> file, std::string name,
                     std::shared_ptr<HpuCores> cores, std::uint64_t max_cycles);

  [[nodiscard]] std::uint8_t function_code() const override { return fn_; }
  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] std::uint64_t state_bytes(std::uint32_t hpus, std::uint32_t) const override {
    return std::uint64_t{state_per_hpu_} * hpus;
  }
  [[nodiscard]] std::uint32_t user_header_bytes() const override { return user_hdr_; }
  HandlerRun header(HandlerContext& ctx, const HeaderArgs& h) const override;
  HandlerRun payload(HandlerContext& ctx, const PayloadArgs& p) const override;
  HandlerRun completion(HandlerContext& ctx, const CompletionArgs& c) const override;

  // Statistics: invocations, cycles, traps by cause.
  [[nodiscard]] std::uint64_t invocations() const noexcept { return invocations_; }
  [[nodiscard]] std::uint64_t cycles() const noexcept { return cycles_; }
  [[nodiscard]] std::uint64_t traps() const noexcept { return traps_; }

 private:
  HpuHandler() = default;
  // The image's writable segments: HPU `index`'s own copy (static data is private to an HPU).
  std::vector<rtl::HpuSegment>& data_of(std::uint32_t index) const;
  HandlerRun invoke(HandlerContext& ctx, std::uint32_t entry, std::span<const std::uint8_t> args,
                    std::span<const std::uint8_t> packet, bool header) const;

  mutable rtl::HpuImage image_;  // read-only segments are mapped read-only
  std::uint8_t fn_ = 0;
  std::string name_;
  std::uint32_t state_per_hpu_ = 0;
  std::uint32_t header_ = 0, payload_ = 0, completion_ = 0;
  std::uint32_t user_hdr_ = 0;
  std::uint64_t max_cycles_ = 0;
  std::shared_ptr<HpuCores> cores_;
  mutable std::vector<std::vector<rtl::HpuSegment>> data_;
  mutable std::uint64_t invocations_ = 0, cycles_ = 0, traps_ = 0;
};

// Reads a handler image file (naa-sim --handler, naa-cosim --handler) and checks it as the Naa
// will load it: an image that cannot run, or whose function code a built-in handler or an image
// already in cfg takes, is refused. Appends it to cfg.handler_images; false with the reason.
bool add_handler_image_file(SimConfig& cfg, const std::string& path, std::string& why);

}  // namespace naa::sim
