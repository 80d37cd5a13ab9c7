// What the tests that call naa-sim through host::Session share (test_streaming.cpp,
// test_spin_handlers.cpp): naa-sim on .1 of the test's address block, the host on .(10 + m),
// Session options with the timeouts they use, seeded pseudo-random bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "naa/host/session.hpp"
#include "test_addresses.hpp"

namespace naa::testbench {

inline std::string sim_ip() {
  return test_addresses().ip(1);
}
inline std::string host_ip(int m = 1) {
  return test_addresses().ip(10 + m);
}

// A streaming session (function `stream_fn`, descriptor argument `arg`) from host address m.
inline host::SessionOptions stream_session_options(
    std::uint8_t stream_fn, int m = 1, std::uint64_t arg = 0,
    std::chrono::milliseconds call_timeout = std::chrono::seconds(20)) {
  host::SessionOptions o;
  o.naa_address = sim_ip();
  o.local_address = host_ip(m);
  o.connect_timeout = std::chrono::milliseconds(3000);
  o.mrsp_timeout = std::chrono::milliseconds(3000);
  o.call_timeout = call_timeout;
  o.stream_function = stream_fn;
  o.stream_argument = arg;
  return o;
}

inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v)
    b = static_cast<std::uint8_t>(rng());
  return v;
}

}  // namespace naa::testbench
