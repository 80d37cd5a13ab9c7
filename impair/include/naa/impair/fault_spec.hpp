// The network impairment model's configuration (docs/reliability.md, docs/adr/0003): what one
// direction of a port does to the datagrams that cross it. Used by naa-sim (--fault-rx,
// --fault-tx) and by the host's UdpRoce endpoint (UdpRoceOptions::fault_rx, fault_tx) with the same
// syntax and the same seeded decisions. Standard library only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace naa::impair {

// What a fault decision is drawn for (docs/adr/0003 "Keyed decisions"):
// - sequence: the datagram's place in its direction's sequence (five draws per datagram). The
//   same seed and the same datagram sequence give the same decisions.
// - packet: the packet itself, (destination QPN, PSN, request or acknowledgement, attempt), read
//   from its BTH: the n-th transmission of a given packet meets the same fate whatever came
//   before it, so two transports (go-back-N, IRN) that send different sequences can be run
//   against the same losses. A datagram without a BTH falls back to the sequence.
enum class FaultKey : std::uint8_t { sequence, packet };

// Probabilities per datagram. A reordered datagram is overtaken by the next `reorder_delay`
// datagrams in its direction (or released after the port's hold time if fewer come); a corrupted
// one has one bit flipped, so the receiver's ICRC check drops it.
struct FaultSpec {
  double loss = 0.0;
  double dup = 0.0;
  double reorder = 0.0;
  double corrupt = 0.0;
  std::uint32_t reorder_delay = 3;
  FaultKey key = FaultKey::sequence;  // "key=sequence" (default) or "key=packet"
  [[nodiscard]] bool active() const noexcept {
    return loss > 0 || dup > 0 || reorder > 0 || corrupt > 0;
  }
};

// Parses "loss=P,dup=P,reorder=P,reorder-delay=N,corrupt=P,key=K" (any subset, P in [0, 1], N in
// 1..1024, K sequence or packet); "none" or "" is no fault. On a bad spec returns false, leaves
// `out` alone and says why in *error (if given).
[[nodiscard]] bool parse_fault_spec(std::string_view text, FaultSpec& out,
                                    std::string* error = nullptr);
// Parses a keying alone ("sequence" or "packet"), for the programs' --fault-key options.
[[nodiscard]] bool parse_fault_key(std::string_view text, FaultKey& out);

}  // namespace naa::impair
