// Waiting for something another thread or process does: poll a condition until it holds or a
// liveness limit passes. The limit is no measurement (a test never asserts how long something
// took, testbench/README.md "Time"); it only stops a test that would otherwise hang, so it is
// generous enough for a loaded 2-core CI machine.
#pragma once

#include <chrono>
#include <thread>

namespace naa::testbench {

inline constexpr std::chrono::milliseconds kLivenessLimit{30000};

// Polls `done` every 5 ms; returns its last value (false only if the limit passed).
template <class Pred>
bool eventually(Pred&& done, std::chrono::milliseconds limit = kLivenessLimit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace naa::testbench
