// add_const port contract, C++ cycle model and lockstep pair (rtl/add_const/README.md; RTL
// rtl/add_const/add_const.sv). Adds a byte constant (mod 256) to every byte of a stream: kernels
// add1 and add2 of PROTOCOL.md 5.3 (addend 1 for fn 1, 2 for fn 2). Latency 1 cycle, one beat per
// cycle.
//
// One step() is one clock cycle: inputs driven during the cycle -> outputs during that cycle
// (before the rising edge). in_ready depends combinationally on out_ready (in_ready = !out_valid ||
// out_ready), so the caller must drive out_ready in the same Inputs. A beat moves where
// valid && ready in the returned outputs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/stream.hpp"

namespace naa::rtl {

struct AddConstInputs {
  bool rst_n = true;
  bool in_valid = false;
  StreamBeat in;
  std::uint8_t addend = 0;  // sampled with each accepted beat
  bool out_ready = false;
};

struct AddConstOutputs {
  bool in_ready = false;
  bool out_valid = false;
  StreamBeat out;  // bytes with keep 0 are 0; don't-care while !out_valid
};

// The interface the model, the Verilated RTL adapter and the lockstep pair implement.
// Concurrency: an instance (model, RTL or lockstep) is used by one thread at a time; distinct
// instances are independent (each Verilated instance owns its VerilatedContext), except the
// blocks of one shared RtlSession, which are used by one thread at a time together.
class AddConstPort {
 public:
  using Inputs = AddConstInputs;
  using Outputs = AddConstOutputs;
  static constexpr std::string_view kBlock = "add_const";

  virtual ~AddConstPort() = default;
  // Bytes per beat (the RTL parameter W).
  [[nodiscard]] virtual std::uint32_t width() const noexcept = 0;
  // One clock cycle. Never throws.
  virtual AddConstOutputs step(const AddConstInputs& in) = 0;
};

class AddConstModel final : public AddConstPort {
 public:
  // width: 1..kMaxStreamBytes, else std::invalid_argument.
  explicit AddConstModel(std::uint32_t width);
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  AddConstOutputs step(const AddConstInputs& in) override;

 private:
  std::uint32_t width_;
  bool out_valid_ = false;
  StreamBeat out_{};
};

[[nodiscard]] std::optional<PortMismatch> first_mismatch(const AddConstPort& shape,
                                                         const AddConstOutputs& expected,
                                                         const AddConstOutputs& actual);

class AddConstLockstep final : public AddConstPort {
 public:
  // Throws std::invalid_argument if the widths differ.
  AddConstLockstep(std::unique_ptr<AddConstPort> model, std::unique_ptr<AddConstPort> rtl,
                   LockstepChecker::Handler on_divergence = {});
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  AddConstOutputs step(const AddConstInputs& in) override { return pair_.step(in); }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return pair_.checker(); }

 private:
  LockstepPair<AddConstPort> pair_;
  std::uint32_t width_;
};

}  // namespace naa::rtl
