// What every block of the model shares: configuration, logging, the packet pool, the peer timers,
// the QP table and the random source. Owned by the Naa top level and passed explicitly (STYLE.md:
// no global state). The blocks reach each other only through the ports of block_interfaces.hpp,
// never through this context.
#pragma once

#include <cstdint>
#include <vector>

#include "naa/sim/common.hpp"
#include "naa/sim/peer_timers.hpp"
#include "naa/sim/qp.hpp"

namespace naa::sim {

struct ModelContext {
  const SimConfig& cfg;
  const Log& log;
  PacketPool& pool;
  PeerTimers& timers;
  SecretSource& rng;         // rkey tags, comm IDs, starting PSNs (OS random unless --seed)
  std::uint64_t fault_seed;  // NetPort's fault decisions: --seed, else drawn once at start
  std::vector<Qp>& qps;      // index = qpn & 0xFF

  // The QP with this number if it is allocated, else nullptr.
  [[nodiscard]] Qp* find_qp(std::uint32_t qpn) const {
    const std::size_t idx = qpn & 0xFFU;
    if (idx >= qps.size()) return nullptr;
    Qp& qp = qps[idx];
    return (qp.state != QpState::free && qp.qpn == qpn) ? &qp : nullptr;
  }
};

}  // namespace naa::sim
