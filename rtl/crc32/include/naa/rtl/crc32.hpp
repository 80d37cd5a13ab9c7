// crc32 port contract, C++ cycle model and lockstep pair (rtl/crc32/README.md; RTL
// rtl/crc32/crc32.sv). zlib CRC-32 of each packet of a stream: kernel crc32 of PROTOCOL.md 5.3.
//
// Input beats carry a prefix keep (the low popcount(keep) bytes are used); any beat may be
// partial and a keep = 0 beat adds nothing. One output beat per packet, one cycle after the
// packet's last beat is accepted: the CRC little-endian in bytes 0..3, keep = 0xF, last = 1.
// in_ready = !out_valid || out_ready. One step() is one clock cycle (see add_const.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/stream.hpp"

namespace naa::rtl {

struct Crc32Inputs {
  bool rst_n = true;
  bool in_valid = false;
  StreamBeat in;
  bool out_ready = false;
};

struct Crc32Outputs {
  bool in_ready = false;
  bool out_valid = false;
  StreamBeat out;  // don't-care while !out_valid
};

// The interface the model, the Verilated RTL adapter and the lockstep pair implement.
// Concurrency: an instance (model, RTL or lockstep) is used by one thread at a time; distinct
// instances are independent (each Verilated instance owns its VerilatedContext), except the
// blocks of one shared RtlSession, which are used by one thread at a time together.
class Crc32Port {
 public:
  using Inputs = Crc32Inputs;
  using Outputs = Crc32Outputs;
  static constexpr std::string_view kBlock = "crc32";

  virtual ~Crc32Port() = default;
  [[nodiscard]] virtual std::uint32_t width() const noexcept = 0;
  virtual Crc32Outputs step(const Crc32Inputs& in) = 0;
};

class Crc32Model final : public Crc32Port {
 public:
  // width: a power of two in 4..kMaxStreamBytes, else std::invalid_argument.
  explicit Crc32Model(std::uint32_t width);
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  Crc32Outputs step(const Crc32Inputs& in) override;

 private:
  std::uint32_t width_;
  bool result_valid_ = false;  // the FSM's Result state
  std::uint32_t crc_ = ~0U;    // running register of the current packet
  std::uint32_t result_ = 0;   // final CRC of the last packet
};

[[nodiscard]] std::optional<PortMismatch> first_mismatch(const Crc32Port& shape,
                                                         const Crc32Outputs& expected,
                                                         const Crc32Outputs& actual);

class Crc32Lockstep final : public Crc32Port {
 public:
  Crc32Lockstep(std::unique_ptr<Crc32Port> model, std::unique_ptr<Crc32Port> rtl,
                LockstepChecker::Handler on_divergence = {});
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  Crc32Outputs step(const Crc32Inputs& in) override { return pair_.step(in); }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return pair_.checker(); }

 private:
  LockstepPair<Crc32Port> pair_;
  std::uint32_t width_;
};

}  // namespace naa::rtl
