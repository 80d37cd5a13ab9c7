// Network fault injection for the UdpRoce endpoint (UdpRoceOptions::fault_rx / fault_tx,
// docs/reliability.md): per direction, each datagram may be lost, duplicated, held back and
// overtaken by the next `reorder_delay` datagrams (or released after kReorderHold), or corrupted by
// one flipped bit. Decisions come from a generator seeded by UdpRoceOptions::fault_seed and the
// direction; five numbers are drawn per datagram whatever the outcome, so a run is reproducible for
// a given seed and datagram sequence. The twin of naa-sim's NetFault (sim/src/net_port.cpp): the
// two sides meet only on the wire, so each carries its own copy.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "naa/host/udp_roce.hpp"
#include "naa/protocol/ipv4_udp.hpp"

namespace naa::host::detail {

class FaultInjector {
 public:
  static constexpr std::chrono::milliseconds kReorderHold{1};

  struct Decision {
    bool drop = false;
    bool duplicate = false;
    bool reorder = false;
    bool corrupt = false;
    std::uint64_t bit = 0;
  };
  struct Counters {
    std::uint64_t seen = 0, dropped = 0, duplicated = 0, reordered = 0, corrupted = 0, redrawn = 0;
  };

  FaultInjector(const FaultOptions& spec, std::uint64_t seed) : spec_(spec), rng_(seed) {}
  [[nodiscard]] bool active() const {
    return spec_.loss > 0 || spec_.dup > 0 || spec_.reorder > 0 || spec_.corrupt > 0;
  }
  [[nodiscard]] const FaultOptions& spec() const { return spec_; }
  void set_spec(const FaultOptions& spec) { spec_ = spec; }
  [[nodiscard]] Decision decide();
  // Flips one bit so that a receiver knowing `h` rejects the ICRC: with an unknown IPv4 ID the
  // check is 16-bit strong (PROTOCOL.md 2), so a flip it cannot see is undone and another bit taken
  // (counted in redrawn).
  void corrupt(std::uint8_t* data, std::size_t size, const protocol::Ipv4UdpHeaders& h,
               std::uint64_t bit);
  [[nodiscard]] const Counters& counters() const { return counters_; }

  // splitmix64 of the endpoint's fault seed and a direction tag.
  [[nodiscard]] static std::uint64_t mix_seed(std::uint64_t x);

 private:
  FaultOptions spec_;
  std::mt19937_64 rng_;
  Counters counters_;
};

}  // namespace naa::host::detail
