#include "naa/rtl/lockstep.hpp"

namespace naa::rtl {

std::string Divergence::to_string() const {
  return "lockstep divergence at cycle " + std::to_string(cycle) + " in " + block + ", port " +
         port + ": expected (model) " + expected + ", actual (RTL) " + actual;
}

LockstepChecker::LockstepChecker(std::string block, Handler on_divergence)
    : block_(std::move(block)), handler_(std::move(on_divergence)) {}

void LockstepChecker::check(std::optional<PortMismatch> mismatch) {
  if (mismatch && !first_) {
    first_ = Divergence{cycle_, block_, std::move(mismatch->port), std::move(mismatch->expected),
                        std::move(mismatch->actual)};
    if (handler_) handler_(*first_);
  }
  ++cycle_;
}

}  // namespace naa::rtl
