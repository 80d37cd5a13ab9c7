// Loopback addresses for tests (testbench/README.md "Addresses"). Every test that binds anything
// claims a block of 254 addresses 127.A.B.1 .. 127.A.B.254 from 127.64.0.0/10 (A = 64..127):
// block i (0 .. 16383) is 127.(64 + i / 256).(i % 256). A block is claimed by an exclusive flock
// on <lock dir>/127.A.B.lock, held for the claim's lifetime, and only if UDP 4791 can be bound on
// each of its addresses (nothing outside the scheme, e.g. a stale naa-sim, uses it). Shell
// scripts claim blocks the same way with naa_claim_addresses (test_addresses.sh), so C++ tests
// and scripts never share an address. The lock dir is $NAA_TEST_LOCK_DIR, default
// /tmp/naa-test-addresses-<uid>.
#pragma once

#include <cstdint>
#include <string>

namespace naa::testbench {

class AddressBlock {
 public:
  // Claims the first free block; throws std::runtime_error (with the reason) if none is free.
  AddressBlock();
  ~AddressBlock();
  AddressBlock(const AddressBlock&) = delete;
  AddressBlock& operator=(const AddressBlock&) = delete;

  // "127.A.B.<host>", host 1..254 (throws std::out_of_range otherwise).
  [[nodiscard]] std::string ip(int host) const;
  [[nodiscard]] std::uint32_t ip_u32(int host) const;                  // the same, host byte order
  [[nodiscard]] const std::string& prefix() const { return prefix_; }  // "127.A.B"

 private:
  int fd_ = -1;
  std::string prefix_;
};

// The block of this test process: claimed on first use and held until the process exits (CTest
// runs every test case in a process of its own, so this is the test's lifetime).
const AddressBlock& test_addresses();

// The lock directory (created if missing).
std::string address_lock_dir();

// Whether UDP port 4791 can be bound on `ip` right now.
bool udp_4791_free(const std::string& ip);

}  // namespace naa::testbench
