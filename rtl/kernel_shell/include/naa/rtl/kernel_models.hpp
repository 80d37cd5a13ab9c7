// C++ twins of the kernels' shared SystemVerilog (rtl/prim/naa_kernel_ctrl.sv,
// rtl/prim/naa_reduce_stream.sv), for cycle models of kernels built on them: the built-in
// kernels' models use them, and so can the model of a user's kernel (docs/rtl/kernel-shell.md
// "A C++ model").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "naa/rtl/kernel_port.hpp"

namespace naa::rtl {

// naa_kernel_ctrl: Idle -(ap_start)-> Run -(finish)-> Done -> Idle.
class KernelCtrlModel {
 public:
  void reset() { state_ = State::idle; }
  [[nodiscard]] bool running() const { return state_ == State::run; }
  // The call is accepted at this cycle's edge.
  [[nodiscard]] bool load(const KernelInputs& in) const {
    return state_ == State::idle && in.ap_start;
  }
  // ap_idle, ap_ready and ap_done of the cycle.
  void outputs(const KernelInputs& in, KernelOutputs& out) const {
    out.ap_idle = state_ == State::idle;
    out.ap_ready = load(in);
    out.ap_done = state_ == State::done;
  }
  // The edge that ends the cycle; finish: the kernel's work is over (only while running).
  void edge(const KernelInputs& in, bool finish) {
    switch (state_) {
      case State::idle:
        if (in.ap_start) state_ = State::run;
        break;
      case State::run:
        if (finish) state_ = State::done;
        break;
      case State::done:
        state_ = State::idle;
        break;
    }
  }

 private:
  enum class State : std::uint8_t { idle, run, done };
  State state_ = State::idle;
};

// naa_reduce_stream with an accumulator: one src packet in, one dst beat of result_bytes bytes
// (little-endian) out, `latency` cycles after the packet's last beat is taken (the accumulator's
// pipeline; the beat is on dst the cycle after). A kernel model derives from it and says how a
// beat accumulates; ap_return is 0.
class ReduceKernelModel : public KernelPort {
 public:
  [[nodiscard]] std::string_view block() const noexcept override { return block_; }
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  KernelOutputs step(const KernelInputs& in) final;

 protected:
  ReduceKernelModel(std::string_view block, std::uint32_t width, std::uint32_t result_bytes,
                    std::uint32_t latency);
  // The accumulator starts over (a call is accepted, or reset).
  virtual void restart() = 0;
  // A beat that is not the packet's last (the contract makes it full: TKEEP all ones).
  virtual void absorb(const StreamBeat& beat) = 0;
  // The packet's last beat (TKEEP a prefix, possibly 0): the result; the accumulator restarts.
  virtual std::uint64_t finish(const StreamBeat& beat) = 0;

 private:
  std::string block_;
  std::uint32_t width_;
  std::uint32_t result_bytes_;
  KernelCtrlModel ctrl_;
  bool took_last_ = false;
  bool dst_valid_ = false;
  std::uint64_t result_ = 0;
  std::vector<std::optional<std::uint64_t>> pipeline_;  // [k]: visible k + 1 cycles after the take
};

}  // namespace naa::rtl
