// A fake NAA (FakePeer as a mini NAA or as the NAAICE reference software NAA) for the host unit
// tests, on this test process's address block (test_addresses.hpp): fake NAA n on .(100 + n), the
// host endpoint talking to it on .n, so tests in one process never share an address pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fake_peer.hpp"
#include "test_addresses.hpp"

namespace naa::testbench {

enum class FakeNaaKind : std::uint8_t {
  mini,       // an NAA as PROTOCOL.md 5 specifies it: regions placed where the host asks
  reference,  // behaves like the reference software NAA (FakePeer::Options::reference_naa)
};

struct FakeNaaOptions {
  FakeNaaKind kind = FakeNaaKind::mini;
  std::size_t memory_size = 4 << 20;  // at NAA address 0
  std::uint8_t mrsp_error = 0;        // non-zero: answer MRSP with this error code
};

inline std::string fake_naa_ip(int n) {
  return test_addresses().ip(100 + n);
}
inline std::string fake_naa_host_ip(int n) {
  return test_addresses().ip(n);
}

inline std::unique_ptr<FakePeer> make_fake_naa(int n, const FakeNaaOptions& f = {}) {
  FakePeer::Options o;
  o.ip = test_addresses().ip_u32(100 + n);
  o.mini_naa = f.kind == FakeNaaKind::mini;
  o.reference_naa = f.kind == FakeNaaKind::reference;
  o.mrsp_error = f.mrsp_error;
  o.memory_va = 0;
  o.memory_size = f.memory_size;
  return std::make_unique<FakePeer>(o);
}

}  // namespace naa::testbench
