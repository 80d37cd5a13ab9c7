// Helpers shared by the naa-sim integration test files: the test's addresses, MRSP entries for the
// test peer's host memory, and payload patterns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "naa/protocol/mrsp.hpp"
#include "peer.hpp"
#include "test_addresses.hpp"

namespace naa::testbench {

// naa-sim on .1 of the test's address block, test peers on .2, .3, ... (test_addresses.hpp).
inline std::string naa_address() {
  return test_addresses().ip(1);
}
inline std::string peer_address(int k = 2) {
  return test_addresses().ip(k);
}

// Legacy: 127.<net>.n.1 for naa-sim and 127.<net>.n.k for test peers (NAA_SIM_TEST_NET: peer.hpp).
inline std::string naa_ip(int n) {
  return sim_test_ip(n, 1);
}
inline std::string peer_ip(int n, int k = 2) {
  return sim_test_ip(n, k);
}

// An MRSP request entry pointing at the peer's host memory (internal regions carry no host
// address or rkey, PROTOCOL.md 5.1).
inline protocol::MrspRequestEntry entry(std::uint8_t flags, std::uint64_t naa_addr,
                                        std::uint32_t size, const Connection& c,
                                        std::uint64_t host_off = 0) {
  const bool internal = (flags & protocol::kMrspFlagInternal) != 0;
  return protocol::MrspRequestEntry{flags, naa_addr, internal ? 0 : c.host_va + host_off,
                                    internal ? 0 : c.host_rkey, size};
}

inline std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

}  // namespace naa::testbench
