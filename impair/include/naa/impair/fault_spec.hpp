// The network impairment model's configuration (docs/reliability.md, docs/adr/0003): what one
// direction of a port does to the datagrams that cross it. Used by naa-sim (--fault-rx,
// --fault-tx) and by the host's UdpRoce endpoint (UdpRoceOptions::fault_rx, fault_tx) with the same
// syntax and the same seeded decisions. Standard library only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace naa::impair {

// Probabilities per datagram. A reordered datagram is overtaken by the next `reorder_delay`
// datagrams in its direction (or released after the port's hold time if fewer come); a corrupted
// one has one bit flipped, so the receiver's ICRC check drops it.
struct FaultSpec {
  double loss = 0.0;
  double dup = 0.0;
  double reorder = 0.0;
  double corrupt = 0.0;
  std::uint32_t reorder_delay = 3;
  [[nodiscard]] bool active() const noexcept {
    return loss > 0 || dup > 0 || reorder > 0 || corrupt > 0;
  }
};

// Parses "loss=P,dup=P,reorder=P,reorder-delay=N,corrupt=P" (any subset, P in [0, 1], N in
// 1..1024); "none" or "" is no fault. On a bad spec returns false, leaves `out` alone and says why
// in *error (if given).
[[nodiscard]] bool parse_fault_spec(std::string_view text, FaultSpec& out,
                                    std::string* error = nullptr);

}  // namespace naa::impair
