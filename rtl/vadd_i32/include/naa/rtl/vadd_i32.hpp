// vadd_i32 port contract, C++ cycle model and lockstep pair (rtl/vadd_i32/README.md; RTL
// rtl/vadd_i32/vadd_i32.sv). out[i] = a[i] + b[i] over little-endian 32-bit lanes, wrapping: kernel
// vadd_i32 of PROTOCOL.md 5.3. Latency 1 cycle, one beat per cycle.
//
// The inputs a and b are joined beat by beat: both move at the same edge, when both are valid and
// the output register is free (a_ready = b_valid && free, b_ready = a_valid && free, free =
// !out_valid || out_ready). out.keep = a.keep & b.keep, out.last = a.last | b.last; bytes with
// keep 0 count as 0 and are 0 on the output. One step() is one clock cycle (see add_const.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/stream.hpp"

namespace naa::rtl {

struct VaddI32Inputs {
  bool rst_n = true;
  bool a_valid = false;
  StreamBeat a;
  bool b_valid = false;
  StreamBeat b;
  bool out_ready = false;
};

struct VaddI32Outputs {
  bool a_ready = false;
  bool b_ready = false;
  bool out_valid = false;
  StreamBeat out;  // don't-care while !out_valid
};

// The interface the model, the Verilated RTL adapter and the lockstep pair implement.
// Concurrency: an instance (model, RTL or lockstep) is used by one thread at a time; distinct
// instances are independent (each Verilated instance owns its VerilatedContext), except the
// blocks of one shared RtlSession, which are used by one thread at a time together.
class VaddI32Port {
 public:
  using Inputs = VaddI32Inputs;
  using Outputs = VaddI32Outputs;
  static constexpr std::string_view kBlock = "vadd_i32";

  virtual ~VaddI32Port() = default;
  [[nodiscard]] virtual std::uint32_t width() const noexcept = 0;
  virtual VaddI32Outputs step(const VaddI32Inputs& in) = 0;
};

class VaddI32Model final : public VaddI32Port {
 public:
  // width: a multiple of 4 in 4..kMaxStreamBytes, else std::invalid_argument.
  explicit VaddI32Model(std::uint32_t width);
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  VaddI32Outputs step(const VaddI32Inputs& in) override;

 private:
  std::uint32_t width_;
  bool out_valid_ = false;
  StreamBeat out_{};
};

[[nodiscard]] std::optional<PortMismatch> first_mismatch(const VaddI32Port& shape,
                                                         const VaddI32Outputs& expected,
                                                         const VaddI32Outputs& actual);

class VaddI32Lockstep final : public VaddI32Port {
 public:
  VaddI32Lockstep(std::unique_ptr<VaddI32Port> model, std::unique_ptr<VaddI32Port> rtl,
                  LockstepChecker::Handler on_divergence = {});
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  VaddI32Outputs step(const VaddI32Inputs& in) override { return pair_.step(in); }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return pair_.checker(); }

 private:
  LockstepPair<VaddI32Port> pair_;
  std::uint32_t width_;
};

}  // namespace naa::rtl
