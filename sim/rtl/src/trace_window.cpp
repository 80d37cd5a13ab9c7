#include "trace_window.hpp"

namespace naa::sim::trace_window {

Ring::Ring(std::uint64_t cycles, std::shared_ptr<rtl::RtlSession> main,
           std::shared_ptr<rtl::RtlSession> shadow)
    : cycles_(cycles), main_(std::move(main)), shadow_(std::move(shadow)) {
  shadow_->set_recording(false);
}

void Ring::push(Lane& lane) {
  order_.emplace_back(&lane, main_->last_cycle_ps());
  while (order_.size() > cycles_)
    replay_front();
}

void Ring::replay_front() {
  const auto [lane, start_ps] = order_.front();
  order_.pop_front();
  // The shadow's cycle starts where the block's did (both sessions follow the same rules).
  shadow_->advance_to(start_ps);
  lane->replay_oldest();
}

void Ring::write() {
  if (written_) return;
  written_ = true;
  shadow_->set_recording(true);
  while (!order_.empty())
    replay_front();
  shadow_->close_trace();
}

}  // namespace naa::sim::trace_window
