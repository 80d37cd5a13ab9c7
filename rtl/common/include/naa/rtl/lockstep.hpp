// Lockstep: a block's C++ model and its Verilated RTL run on the same inputs every cycle; the
// first cycle on which an output port differs is recorded as a Divergence (cycle, block, port,
// expected = model, actual = RTL) and reported once to a handler. ARCHITECTURE.md "The NAA model".
//
// Each block header (mr_table.hpp, add_const.hpp, ...) defines <Block>Lockstep, which implements
// the block's port interface, so a lockstep pair plugs in wherever the model or the RTL would.
// The model's outputs are what the rest of the system sees: the model is the reference.
//
// Payload ports qualified by a valid are compared only while that valid is high (both sides agree
// on the valid first): an unqualified payload is don't-care, and the RTL does not reset datapath
// flops (docs/rtl/README.md "Lockstep").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace naa::rtl {

// One differing output port on one cycle.
struct PortMismatch {
  std::string port;
  std::string expected;  // the model's value
  std::string actual;    // the RTL's value
};

struct Divergence {
  std::uint64_t cycle = 0;  // steps since the pair was created, first step = cycle 0
  std::string block;        // e.g. "mr_table"
  std::string port;         // e.g. "rsp_status"
  std::string expected;     // model
  std::string actual;       // RTL

  // "lockstep divergence at cycle 12 in mr_table, port rsp_status: expected (model) bounds,
  //  actual (RTL) ok"
  [[nodiscard]] std::string to_string() const;
};

// The block-independent half: counts cycles, keeps the first divergence, calls the handler once.
class LockstepChecker {
 public:
  using Handler = std::function<void(const Divergence&)>;

  explicit LockstepChecker(std::string block, Handler on_divergence = {});

  // Compares one cycle's outcome (nullopt = all ports equal) and advances the cycle count.
  void check(std::optional<PortMismatch> mismatch);

  [[nodiscard]] std::uint64_t cycles() const noexcept { return cycle_; }
  [[nodiscard]] bool diverged() const noexcept { return first_.has_value(); }
  [[nodiscard]] const std::optional<Divergence>& divergence() const noexcept { return first_; }
  [[nodiscard]] std::string_view block() const noexcept { return block_; }

 private:
  std::string block_;
  Handler handler_;
  std::uint64_t cycle_ = 0;
  std::optional<Divergence> first_;
};

// The block-dependent half: steps model and RTL, compares with first_mismatch() of the block
// (found by argument-dependent lookup), returns the model's outputs.
template <class Port>
class LockstepPair {
 public:
  using Inputs = typename Port::Inputs;
  using Outputs = typename Port::Outputs;

  LockstepPair(std::unique_ptr<Port> model, std::unique_ptr<Port> rtl,
               LockstepChecker::Handler on_divergence)
      : model_(std::move(model)),
        rtl_(std::move(rtl)),
        checker_(std::string(Port::kBlock), std::move(on_divergence)) {
    if (!model_ || !rtl_) throw std::invalid_argument("lockstep: model and RTL are both required");
  }

  Outputs step(const Inputs& in) {
    Outputs expected = model_->step(in);
    const Outputs actual = rtl_->step(in);
    checker_.check(first_mismatch(*model_, expected, actual));
    return expected;
  }

  [[nodiscard]] Port& model() noexcept { return *model_; }
  [[nodiscard]] Port& rtl() noexcept { return *rtl_; }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return checker_; }

 private:
  std::unique_ptr<Port> model_;
  std::unique_ptr<Port> rtl_;
  LockstepChecker checker_;
};

}  // namespace naa::rtl
