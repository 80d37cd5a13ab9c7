// MemoryPort: how a block reaches Memory (the card's DDR, memory.hpp) for timed data access: a
// TLM-2.0 initiator socket, bound to one of Memory's target sockets by the Naa. A block that
// uses memory includes this header, not Memory's.
#pragma once

#include <cstdint>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "naa/sim/common.hpp"

namespace naa::sim {

class Memory;

// An initiator helper for blocks that access Memory: timed read/write that waits the annotated
// delay in the calling SC_THREAD and accounts it to the caller's meter.
//
// An access longer than kPieceBytes moves its bytes in pieces spread over its time (issue 31):
// one timed transaction reserves the channel for the whole access and counts it (Memory moves
// no bytes for a payload without a data pointer), then piece k is copied (debug transport) at
// the start of its share k / n of the access's time and the process waits that share. The
// access ends at the same simulated time as one copy at its start followed by one wait; what
// changes is the wall time: a 64 MiB region is no longer one ~30 ms copy at one simulated
// instant, during which no other process (e.g. the Transport's queued ACKs) could run. The
// bytes of piece k are those in memory at that share's start (the same as at the access's start
// unless another port writes the same addresses during the access).
class MemoryPort {
 public:
  static constexpr std::uint64_t kPieceBytes = 256 * 1024;

  explicit MemoryPort(const char* name) : socket(name) {
    socket.register_invalidate_direct_mem_ptr(this, &MemoryPort::invalidate_direct_mem_ptr);
  }
  tlm_utils::simple_initiator_socket<MemoryPort> socket;
  // Binds `socket` to one of Memory's target sockets, and from then on calls Memory directly:
  // the target is fixed, so the simple target socket's dispatch (~27 instructions an access) is
  // left out; the same call in the same process (issue 31). Its own accesses skip the payload
  // too (Memory::transact), and so does a write grant (Memory::direct_write). A port bound with
  // socket.bind() (a test's own target) goes through the socket.
  void bind_memory(Memory& memory, tlm_utils::simple_target_socket<Memory>& target);
  // The target's b_transport: Memory's directly after bind_memory(), else through the socket
  // (for a caller with its own payload: the Transport's posted writes).
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // Return false on a TLM error (address beyond the memory).
  bool read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len, CycleMeter& meter) {
    return access(tlm::TLM_READ_COMMAND, addr, out, len, meter);
  }
  bool write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t len, CycleMeter& meter) {
    // TLM's payload pointer is non-const; a write never modifies it.
    return access(tlm::TLM_WRITE_COMMAND, addr, const_cast<std::uint8_t*>(in), len, meter);
  }
  // `out` / `in` may be nullptr: the access is timed and counted, and no bytes move (they are in
  // place, written or read through direct()); a write counts its pages as written.
  //
  // Direct access (TLM DMI) to [addr, addr + len): the memory's own bytes, untimed, or nullptr
  // if the range is outside the memory. `write`: the caller may change them (they are then
  // cleared with the memory's regions like written bytes). The time of moving them is the
  // caller's to account with a timed access without data (KernelEngine: its kernels compute
  // on the regions in place; issue 31).
  // Inline for a read inside the kept read grant (below; a non-empty range of at most 4 GiB, as a
  // request would be); a write to the Memory bound with bind_memory() asks it directly, without
  // the payload and DMI descriptor of a request (direct_write, out of line; issue 31: ~180
  // instructions a kernel call); anything else asks the target (direct_request, out of line).
  std::uint8_t* direct(std::uint64_t addr, std::uint64_t len, bool write) {
    if (!write && read_dmi_ptr_ != nullptr && len != 0 && len <= 0xFFFFFFFFU &&
        addr >= read_dmi_start_ && len - 1 <= read_dmi_end_ && addr <= read_dmi_end_ - (len - 1)) {
      return read_dmi_ptr_ + (addr - read_dmi_start_);
    }
    if (write && memory_ != nullptr) return direct_write(addr, len);
    return direct_request(addr, len, write);
  }
  // delay / cycle rounded to the nearest whole cycle (halves up), as the double expression
  // `delay / cycle + 0.5` truncated gives it, in integers (issue 31: ~15 instructions of
  // conversions an access): identical while both values are below 2^50 units (4d + 2c < 2^53:
  // the quotient's two double roundings stay closer than 1 / (2c) to the exact value, and a
  // fraction of exactly one half is exact in a double; testbench/sim/test_memory_pieces.cpp
  // compares the two on random values), else the double expression itself.
  [[nodiscard]] static std::uint64_t rounded_cycles(sc_core::sc_time delay,
                                                    sc_core::sc_time cycle) {
    const std::uint64_t d = delay.value(), c = cycle.value();
    constexpr std::uint64_t kExact = std::uint64_t{1} << 50;
    if (c != 0 && d < kExact && c < kExact) return (2 * d + c) / (2 * c);
    return static_cast<std::uint64_t>(delay / cycle + 0.5);
  }
  // read() without its (last) wait: the data is read now (as read() does at its start), the
  // access's time is accounted to the meter and returned in `wait` for the caller to wait, alone
  // or together with a time that follows it directly (KernelEngine: the load, then the kernel).
  // An access in pieces waits every share but the last here; `wait` is the last share.
  // Inline: a short access (every kernel region up to kPieceBytes) goes straight to transport(),
  // as read() does (issue 31: two calls less per kernel load).
  bool read_unwaited(std::uint64_t addr, std::uint8_t* out, std::uint64_t len, CycleMeter& meter,
                     sc_core::sc_time& wait) {
    return len <= kPieceBytes ? transport(tlm::TLM_READ_COMMAND, addr, out, len, meter, wait)
                              : transfer(tlm::TLM_READ_COMMAND, addr, out, len, meter, wait);
  }

 private:
  // Inline (issue 31: read() and write() are a call less); the short access (every one but a
  // kernel's long region) straight to transport().
  bool access(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint64_t len,
              CycleMeter& meter) {
    sc_core::sc_time delay;
    const bool ok = len <= kPieceBytes ? transport(cmd, addr, data, len, meter, delay)
                                       : transfer(cmd, addr, data, len, meter, delay);
    if (len != 0) sc_core::wait(delay);
    return ok;
  }
  bool transport(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint64_t len,
                 CycleMeter& meter, sc_core::sc_time& delay);
  // transport(), in pieces when longer than kPieceBytes: waits all shares but the last, which
  // it returns in `last` (the whole delay for an access in one piece or a failed one).
  bool transfer(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint64_t len,
                CycleMeter& meter, sc_core::sc_time& last);
  // One payload for every access (issue 31: constructing one allocates its extension array).
  // Two processes may share a port; b_transport never waits, so each is done with the payload
  // before the other can run.
  tlm::tlm_generic_payload trans_;
  tlm::tlm_generic_payload piece_;  // the debug transport of an access's pieces
  // The range a read DMI request was granted, kept until the target invalidates it (TLM-2.0
  // DMI hint; issue 31: one request per write-back snapshot). A write request still asks each
  // time: the target marks the range it will be written in (Memory::get_direct_mem_ptr).
  std::uint8_t* read_dmi_ptr_ = nullptr;
  std::uint64_t read_dmi_start_ = 0;
  std::uint64_t read_dmi_end_ = 0;
  std::uint8_t* direct_request(std::uint64_t addr, std::uint64_t len, bool write);
  std::uint8_t* direct_write(std::uint64_t addr, std::uint64_t len);  // memory_->direct_write
  Memory* memory_ = nullptr;                                          // bind_memory()'s target
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    if (start <= read_dmi_end_ && end >= read_dmi_start_) read_dmi_ptr_ = nullptr;
  }
};

}  // namespace naa::sim
