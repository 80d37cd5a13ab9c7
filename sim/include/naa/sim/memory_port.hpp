// MemoryPort: how a block reaches Memory (the card's DDR, memory.hpp) for timed data access: a
// TLM-2.0 initiator socket, bound to one of Memory's target sockets by the Naa. A block that
// uses memory includes this header, not Memory's.
#pragma once

#include <cstdint>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "naa/sim/common.hpp"

namespace naa::sim {

// An initiator helper for blocks that access Memory: timed read/write that waits the annotated
// delay in the calling SC_THREAD and accounts it to the caller's meter.
class MemoryPort {
 public:
  explicit MemoryPort(const char* name) : socket(name) {}
  tlm_utils::simple_initiator_socket<MemoryPort> socket;
  // Return false on a TLM error (address beyond the memory).
  bool read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len, CycleMeter& meter);
  bool write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t len, CycleMeter& meter);
  // read() without its wait: the data is read now (as read() does at its start), the access's
  // time is accounted to the meter and returned in `wait` for the caller to wait, alone or
  // together with a time that follows it directly (KernelEngine: the load, then the kernel).
  bool read_unwaited(std::uint64_t addr, std::uint8_t* out, std::uint64_t len, CycleMeter& meter,
                     sc_core::sc_time& wait);

 private:
  bool access(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint64_t len,
              CycleMeter& meter);
  bool transport(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint64_t len,
                 CycleMeter& meter, sc_core::sc_time& delay);
  // One payload for every access (issue 31: constructing one allocates its extension array).
  // Two processes may share a port; b_transport never waits, so each is done with the payload
  // before the other can run.
  tlm::tlm_generic_payload trans_;
};

}  // namespace naa::sim
