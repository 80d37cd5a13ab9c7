// --trace-window N (docs/sim/rtl.md "The waveform"): the waveform keeps only the last N cycles
// the Verilated blocks were clocked, written when a lockstep divergence stops the run or at exit.
//
// FST cannot drop cycles it has written, so the window is a replay: every Verilated block runs
// twice, as the block naa-sim uses (in an untraced session) and as a shadow (in a traced session
// that does not record yet). Each cycle's inputs and start time go into a ring of N entries in
// the order the blocks were clocked; an entry that falls out of the ring is replayed into its
// shadow without recording, so the shadows stay N cycles behind. Writing the window replays the
// ring with recording on: the file holds exactly the last N cycles, at the times they had
// (the same session clock rules, RtlSession), the first one with every signal's full value.
// Costs: each Verilated cycle is simulated twice, and the ring holds N cycles' inputs.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <utility>

#include "naa/rtl/rtl_session.hpp"

namespace naa::sim::trace_window {

class Ring;

// One block's half of the ring: its inputs, oldest first.
class Lane {
 public:
  virtual ~Lane() = default;
  // Steps the shadow with the oldest buffered inputs and drops them.
  virtual void replay_oldest() = 0;
};

// The order and times of the buffered cycles, across every block of the session.
class Ring {
 public:
  Ring(std::uint64_t cycles, std::shared_ptr<rtl::RtlSession> main,
       std::shared_ptr<rtl::RtlSession> shadow);
  // A block was clocked (its inputs are already in its lane): records the cycle's start time;
  // replays the oldest cycle into its shadow, unrecorded, if the ring is full.
  void push(Lane& lane);
  // Replays the ring into the shadow session's file (recording on) and closes it. Idempotent.
  void write();
  [[nodiscard]] const std::shared_ptr<rtl::RtlSession>& shadow() const noexcept { return shadow_; }
  [[nodiscard]] std::uint64_t cycles() const noexcept { return cycles_; }
  [[nodiscard]] bool written() const noexcept { return written_; }

 private:
  void replay_front();

  std::uint64_t cycles_;
  std::shared_ptr<rtl::RtlSession> main_;
  std::shared_ptr<rtl::RtlSession> shadow_;
  std::deque<std::pair<Lane*, std::uint64_t>> order_;  // lane, cycle start (ps)
  bool written_ = false;
};

// A block port whose cycles are also buffered for the window: the block (`main`, what naa-sim
// sees) and its shadow. Port: a block's port interface (step(Inputs), kBlock).
template <class Port>
class WindowedCore : public Port, private Lane {
 public:
  using Inputs = typename Port::Inputs;
  using Outputs = typename Port::Outputs;
  WindowedCore(std::unique_ptr<Port> main, std::unique_ptr<Port> shadow, Ring& ring)
      : main_(std::move(main)), shadow_(std::move(shadow)), ring_(ring) {}

  Outputs step(const Inputs& in) override {
    Outputs out = main_->step(in);
    if (!ring_.written()) {
      inputs_.push_back(in);
      ring_.push(*this);
    }
    return out;
  }

 protected:
  std::unique_ptr<Port> main_;

 private:
  void replay_oldest() override {
    (void)shadow_->step(inputs_.front());
    inputs_.pop_front();
  }

  std::unique_ptr<Port> shadow_;
  Ring& ring_;
  std::deque<Inputs> inputs_;
};

// Stream ports also tell their width; a kernel's port its name too.
template <class Port>
class WindowedStream final : public WindowedCore<Port> {
 public:
  using WindowedCore<Port>::WindowedCore;
  [[nodiscard]] std::uint32_t width() const noexcept override { return this->main_->width(); }
};

template <class Port>
class WindowedKernel final : public WindowedCore<Port> {
 public:
  using WindowedCore<Port>::WindowedCore;
  [[nodiscard]] std::uint32_t width() const noexcept override { return this->main_->width(); }
  [[nodiscard]] std::string_view block() const noexcept override { return this->main_->block(); }
};

template <class Port>
class Windowed final : public WindowedCore<Port> {
 public:
  using WindowedCore<Port>::WindowedCore;
};

// The windowed port for `Port` (with width() if the port has one), or nullptr if either half is.
template <class Port>
std::unique_ptr<Port> make_windowed(std::unique_ptr<Port> main, std::unique_ptr<Port> shadow,
                                    Ring& ring) {
  if (!main || !shadow) return nullptr;
  if constexpr (requires(const Port& p) { p.block(); }) {
    return std::make_unique<WindowedKernel<Port>>(std::move(main), std::move(shadow), ring);
  } else if constexpr (requires(const Port& p) { p.width(); }) {
    return std::make_unique<WindowedStream<Port>>(std::move(main), std::move(shadow), ring);
  } else {
    return std::make_unique<Windowed<Port>>(std::move(main), std::move(shadow), ring);
  }
}

}  // namespace naa::sim::trace_window
