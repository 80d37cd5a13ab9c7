// Exact heap accounting of the naa-sim process (docs/sim/naa-sim.md, statistics
// naa-sim.heap_bytes and naa-sim.heap_peak_bytes): live bytes and their peak, kept by naa-sim's
// replacement of the global operator new/delete (sim/tools/heap_accounting.cpp). A program that
// does not install it (or a sanitizer build, whose runtime owns operator new) reports nothing.
// Used to bound what a connection costs, e.g. a half-open one under a REQ flood, more precisely
// than the process RSS can.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace naa::sim::heap_stats {

struct Snapshot {
  std::uint64_t live = 0;  // bytes allocated and not freed
  std::uint64_t peak = 0;  // largest `live` since the last reset_peak()
};

// Called by the operator new/delete replacement only.
void installed();
void on_alloc(std::size_t bytes) noexcept;
void on_free(std::size_t bytes) noexcept;

[[nodiscard]] bool enabled() noexcept;
[[nodiscard]] Snapshot snapshot() noexcept;
void reset_peak() noexcept;  // peak := live

}  // namespace naa::sim::heap_stats
