// A UdpRoce endpoint on .n of the test's own address block (test_addresses.hpp), with the given
// progress mode and a seed fixed by n (its PSNs and comm IDs repeat from run to run); the test
// fails with the endpoint's reason if it cannot open. Shared by the host unit tests that open
// endpoints of their own (test_udp_passive.cpp, test_threads.cpp).
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "naa/host/udp_roce.hpp"
#include "test_addresses.hpp"

namespace naa::testbench {

// `pcap_path`: the endpoint's capture (UdpRoceOptions::pcap_path), none if empty.
inline std::shared_ptr<host::Transport> open_at(int n, host::Progress progress,
                                                const std::string& pcap_path = {}) {
  host::UdpRoceOptions o;
  o.local_ip = test_addresses().ip_u32(n);
  o.progress = progress;
  o.pcap_path = pcap_path;
  o.seed = 4000 + static_cast<std::uint64_t>(n);
  std::error_code ec;
  std::string detail;
  auto ep = host::open_udp_roce(o, ec, &detail);
  INFO(detail);
  REQUIRE(ep);
  return ep;
}

}  // namespace naa::testbench
