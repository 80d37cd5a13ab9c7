#include "naa/sim/heap_stats.hpp"

namespace naa::sim::heap_stats {
namespace {

// Plain atomics with constant initialisation: operator new may run before any constructor.
constinit std::atomic<bool> g_enabled{false};
constinit std::atomic<std::uint64_t> g_live{0};
constinit std::atomic<std::uint64_t> g_peak{0};

}  // namespace

void installed() {
  g_enabled.store(true, std::memory_order_relaxed);
}

void on_alloc(std::size_t bytes) noexcept {
  const std::uint64_t now = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::uint64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void on_free(std::size_t bytes) noexcept {
  g_live.fetch_sub(bytes, std::memory_order_relaxed);
}

bool enabled() noexcept {
  return g_enabled.load(std::memory_order_relaxed);
}

Snapshot snapshot() noexcept {
  return Snapshot{g_live.load(std::memory_order_relaxed), g_peak.load(std::memory_order_relaxed)};
}

void reset_peak() noexcept {
  g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace naa::sim::heap_stats
