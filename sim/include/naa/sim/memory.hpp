// Memory: the card's DDR (ARCHITECTURE.md "The NAA model") as one byte store behind a TLM-2.0
// target. b_transport annotates latency + ceil(len / mem_width) cycles; callers wait it. Bytes
// that were never written read as zeros and take no host memory, so the default 4 GiB costs
// nothing until used. The store is contiguous, so an initiator may work on it in place through
// TLM's direct memory interface (DMI): the KernelEngine's kernels compute on their regions where
// they lie (issue 31), and its loads and stores are timed transactions that move no bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "naa/sim/block_interfaces.hpp"
#include "naa/sim/common.hpp"

namespace naa::sim {

// The bytes: one private anonymous mapping of the memory's size, reserved without swap
// (MAP_NORESERVE), so the OS provides a page only when it is first written and untouched pages
// read as zeros. `pages()` (memory.pages_resident) counts the 64 KiB pages that have been
// written and not cleared whole since, as the sparse page map before it did.
class MemoryStore {
 public:
  static constexpr std::uint64_t kPageSize = 64 * 1024;
  explicit MemoryStore(std::uint64_t size);
  ~MemoryStore();
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  void read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const;
  // Inline, as mark_written() (issue 31: a datagram's payload, a kernel's store).
  void write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t len) {
    if (len == 0) return;
    std::memcpy(base_ + addr, in, len);
    mark_written(addr, len);
  }
  // The bytes of [addr, addr + len) for an initiator that writes them in place: they may be
  // non-zero from now on (clear() zeroes them), without being counted resident.
  // Inline when the range lies in the page the last write counted (issue 31: a kernel's region
  // in place, just written by the host's WRITE or the previous call's store): that page is in the
  // map already, resident (clear() forgets it), so clear() zeroes it; nothing to mark.
  std::uint8_t* direct(std::uint64_t addr, std::uint64_t len) {
    if (!in_last_resident(addr, len)) mark(addr, len, Page::touched);
    return base_ + addr;
  }
  [[nodiscard]] std::uint8_t* base() const { return base_; }
  // Counts [addr, addr + len) as written (a timed store of bytes already in place).
  // Most writes are one datagram's payload inside the page the previous one counted: inline.
  void mark_written(std::uint64_t addr, std::uint64_t len) {
    if (!in_last_resident(addr, len)) mark(addr, len, Page::resident);
  }
  void clear(std::uint64_t addr, std::uint64_t len);  // reads as zeros afterwards
  [[nodiscard]] std::size_t pages() const { return resident_; }

 private:
  enum class Page : std::uint8_t { touched, resident };  // touched: may be non-zero
  // [addr, addr + len) non-empty and inside the page last_resident_ names.
  [[nodiscard]] bool in_last_resident(std::uint64_t addr, std::uint64_t len) const {
    return len != 0 && addr / kPageSize == last_resident_ &&
           (addr + len - 1) / kPageSize == last_resident_;
  }
  void mark(std::uint64_t addr, std::uint64_t len, Page state);
  std::uint8_t* base_ = nullptr;
  std::uint64_t mapped_ = 0;
  std::unordered_map<std::uint64_t, Page> pages_;  // absent: every byte is zero
  std::size_t resident_ = 0;
  // The page the last write counted resident (mark() sets every page of its range so), or none
  // (~0) since a clear(), the only place that takes pages out of the map.
  std::uint64_t last_resident_ = ~std::uint64_t{0};
};

// Provides the two TLM targets and MemoryScrub (to MrspHandler).
class Memory : public sc_core::sc_module, public MemoryScrub {
 public:
  // Two target ports (a simple_target_socket takes one initiator): Transport and KernelEngine.
  tlm_utils::simple_target_socket<Memory> socket;
  tlm_utils::simple_target_socket<Memory> kernel_socket;
  tlm_utils::simple_target_socket<Memory> handler_socket;  // HandlerEngine

  Memory(sc_core::sc_module_name name, const SimConfig& cfg);
  // Untimed access for the statistics and for clearing (modelled as a background scrub).
  void clear(std::uint64_t addr, std::uint64_t len) override { store_.clear(addr, len); }
  // Untimed read for checks outside the model (Naa::peek_memory).
  void peek(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const {
    store_.read(addr, out, len);
  }
  [[nodiscard]] std::uint64_t size() const { return cfg_.mem_size; }
  void report(std::ostream& os) const;

 private:
  friend class MemoryPort;  // calls transact() and direct_write() when bound to it (bind_memory)
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // b_transport's access from its arguments, without a payload; false: outside the memory (TLM
  // address error). A MemoryPort bound to this memory calls it directly (issue 31: the payload's
  // setup and reading, ~25 instructions an access).
  bool transact(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint64_t len,
                sc_core::sc_time& delay);
  // get_direct_mem_ptr's write grant for [addr, addr + len) without the payload and descriptor
  // (issue 31): the bytes, marked as possibly non-zero, or nullptr where a request is refused.
  std::uint8_t* direct_write(std::uint64_t addr, std::uint64_t len);
  // cycle_ * double(cycles), kept for the last count asked (issue 31: the double product ~15
  // instructions an access; most accesses are of one length).
  sc_core::sc_time cycles_time(std::uint64_t cycles) {
    if (cycles != last_cycles_) {
      last_cycles_ = cycles;
      last_cycles_time_ = cycle_ * static_cast<double>(cycles);
    }
    return last_cycles_time_;
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  // DMI: the whole memory, read and write. The request's address and length are the range the
  // initiator will use (MemoryPort::direct); a write request marks it as possibly non-zero.
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);

  const SimConfig& cfg_;
  const sc_core::sc_time cycle_;  // cfg_.cycle(), once (issue 31: a double construction per access)
  MemoryStore store_;
  sc_core::sc_time busy_until_ = sc_core::SC_ZERO_TIME;
  std::uint64_t last_cycles_ = 0;  // cycles_time()'s: 0 cycles take SC_ZERO_TIME
  sc_core::sc_time last_cycles_time_ = sc_core::SC_ZERO_TIME;
  std::uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0, busy_cycles_ = 0;
};

}  // namespace naa::sim
