// sum_u64 port contract, C++ cycle model and lockstep pair (rtl/sum_u64/README.md; RTL
// rtl/sum_u64/sum_u64.sv). The 64-bit sum of each packet of a stream read as little-endian uint32
// elements: kernel sum_u64 of PROTOCOL.md 5.3.
//
// Lane i of an input beat (bytes 4i..4i+3) is added when its four keep bits are all set; partial
// lanes and keep = 0 beats add nothing. One output beat per packet, one cycle after the packet's
// last beat is accepted: the sum little-endian in bytes 0..7, keep = 0xFF, last = 1.
// in_ready = !out_valid || out_ready. One step() is one clock cycle (see add_const.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/stream.hpp"

namespace naa::rtl {

struct SumU64Inputs {
  bool rst_n = true;
  bool in_valid = false;
  StreamBeat in;
  bool out_ready = false;
};

struct SumU64Outputs {
  bool in_ready = false;
  bool out_valid = false;
  StreamBeat out;  // don't-care while !out_valid
};

// The interface the model, the Verilated RTL adapter and the lockstep pair implement.
// Concurrency: as Crc32Port (one thread at a time per instance or shared RtlSession).
class SumU64Port {
 public:
  using Inputs = SumU64Inputs;
  using Outputs = SumU64Outputs;
  static constexpr std::string_view kBlock = "sum_u64";

  virtual ~SumU64Port() = default;
  [[nodiscard]] virtual std::uint32_t width() const noexcept = 0;
  virtual SumU64Outputs step(const SumU64Inputs& in) = 0;
};

class SumU64Model final : public SumU64Port {
 public:
  // width: a multiple of 4 in 8..kMaxStreamBytes, else std::invalid_argument.
  explicit SumU64Model(std::uint32_t width);
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  SumU64Outputs step(const SumU64Inputs& in) override;

 private:
  std::uint32_t width_;
  bool result_valid_ = false;  // the FSM's Result state
  std::uint64_t sum_ = 0;      // running sum of the current packet
  std::uint64_t result_ = 0;   // sum of the last packet
};

[[nodiscard]] std::optional<PortMismatch> first_mismatch(const SumU64Port& shape,
                                                         const SumU64Outputs& expected,
                                                         const SumU64Outputs& actual);

class SumU64Lockstep final : public SumU64Port {
 public:
  SumU64Lockstep(std::unique_ptr<SumU64Port> model, std::unique_ptr<SumU64Port> rtl,
                 LockstepChecker::Handler on_divergence = {});
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  SumU64Outputs step(const SumU64Inputs& in) override { return pair_.step(in); }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return pair_.checker(); }

 private:
  LockstepPair<SumU64Port> pair_;
  std::uint32_t width_;
};

}  // namespace naa::rtl
