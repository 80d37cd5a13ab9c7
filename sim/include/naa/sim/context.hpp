// What every block of the model can reach: configuration, logging, the packet pool, the peer
// timers, the QP table, the random source and the other blocks. Owned by the Naa top level and
// passed explicitly (STYLE.md: no global state).
#pragma once

#include <cstdint>
#include <vector>

#include "naa/sim/common.hpp"
#include "naa/sim/peer_timers.hpp"
#include "naa/sim/qp.hpp"

namespace naa::sim {

class NetPort;
class RxPipe;
class CmAgent;
class Transport;
class MrTable;
class MrspHandler;
class Memory;
class KernelEngine;
class TxPipe;

struct Blocks {
  NetPort* net = nullptr;
  RxPipe* rx = nullptr;
  CmAgent* cm = nullptr;
  Transport* transport = nullptr;
  MrTable* mr = nullptr;
  MrspHandler* mrsp = nullptr;
  Memory* mem = nullptr;
  KernelEngine* kernels = nullptr;
  TxPipe* tx = nullptr;
};

struct ModelContext {
  const SimConfig& cfg;
  const Log& log;
  PacketPool& pool;
  PeerTimers& timers;
  SecretSource& rng;         // rkey tags, comm IDs, starting PSNs (OS random unless --seed)
  std::uint64_t fault_seed;  // NetPort's fault decisions: --seed, else drawn once at start
  std::vector<Qp>& qps;      // index = qpn & 0xFF
  Blocks blocks{};

  // The QP with this number if it is allocated, else nullptr.
  [[nodiscard]] Qp* find_qp(std::uint32_t qpn) const {
    const std::size_t idx = qpn & 0xFFU;
    if (idx >= qps.size()) return nullptr;
    Qp& qp = qps[idx];
    return (qp.state != QpState::free && qp.qpn == qpn) ? &qp : nullptr;
  }
};

}  // namespace naa::sim
