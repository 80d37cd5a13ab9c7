#include "naa/sim/memory.hpp"

#include <algorithm>
#include <cstring>

#include "naa/sim/memory_port.hpp"

namespace naa::sim {

void SparseStore::read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const {
  while (len > 0) {
    const std::uint64_t page = addr / kPageSize;
    const std::uint64_t off = addr % kPageSize;
    const std::uint64_t n = std::min(len, kPageSize - off);
    auto it = pages_.find(page);
    if (it == pages_.end()) {
      std::memset(out, 0, n);
    } else {
      std::memcpy(out, it->second.get() + off, n);
    }
    out += n;
    addr += n;
    len -= n;
  }
}

void SparseStore::write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t len) {
  while (len > 0) {
    const std::uint64_t page = addr / kPageSize;
    const std::uint64_t off = addr % kPageSize;
    const std::uint64_t n = std::min(len, kPageSize - off);
    auto& slot = pages_[page];
    if (!slot) {
      // A new page reads as zeros where this write does not cover it; a write of the whole page
      // overwrites every byte, so it is not zero-filled first (issue 31: no per-byte work the
      // hardware would not do).
      slot = n == kPageSize ? std::make_unique_for_overwrite<std::uint8_t[]>(kPageSize)
                            : std::make_unique<std::uint8_t[]>(kPageSize);
    }
    std::memcpy(slot.get() + off, in, n);
    in += n;
    addr += n;
    len -= n;
  }
}

void SparseStore::clear(std::uint64_t addr, std::uint64_t len) {
  while (len > 0) {
    const std::uint64_t page = addr / kPageSize;
    const std::uint64_t off = addr % kPageSize;
    const std::uint64_t n = std::min(len, kPageSize - off);
    auto it = pages_.find(page);
    if (it != pages_.end()) {
      if (n == kPageSize) {
        pages_.erase(it);
      } else {
        std::memset(it->second.get() + off, 0, n);
      }
    }
    addr += n;
    len -= n;
  }
}

Memory::Memory(sc_core::sc_module_name name, const SimConfig& cfg)
    : sc_module(name),
      socket("socket"),
      kernel_socket("kernel_socket"),
      handler_socket("handler_socket"),
      cfg_(cfg) {
  socket.register_b_transport(this, &Memory::b_transport);
  socket.register_transport_dbg(this, &Memory::transport_dbg);
  kernel_socket.register_b_transport(this, &Memory::b_transport);
  kernel_socket.register_transport_dbg(this, &Memory::transport_dbg);
  handler_socket.register_b_transport(this, &Memory::b_transport);
  handler_socket.register_transport_dbg(this, &Memory::transport_dbg);
}

void Memory::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  if (addr > cfg_.mem_size || len > cfg_.mem_size - addr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  // One DDR channel shared by every port: an access starts when the channel is free and
  // occupies it for latency + ceil(len / mem_width) cycles (contention is modelled).
  const std::uint64_t cycles = SimConfig::stage_cycles(len, cfg_.mem_width, cfg_.mem_latency);
  busy_cycles_ += cycles;
  const sc_core::sc_time now = sc_core::sc_time_stamp() + delay;
  const sc_core::sc_time start = busy_until_ > now ? busy_until_ : now;
  busy_until_ = start + cfg_.cycle() * static_cast<double>(cycles);
  delay = busy_until_ - sc_core::sc_time_stamp();
  // Without a data pointer the initiator moves the bytes itself, in pieces over the access's
  // time (MemoryPort::kPieceBytes): the access is timed and counted here all the same.
  std::uint8_t* const data = trans.get_data_ptr();
  if (trans.is_read()) {
    if (data != nullptr) store_.read(addr, data, len);
    ++reads_;
    bytes_read_ += len;
  } else if (trans.is_write()) {
    if (data != nullptr) store_.write(addr, data, len);
    ++writes_;
    bytes_written_ += len;
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int Memory::transport_dbg(tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  if (addr > cfg_.mem_size || len > cfg_.mem_size - addr) return 0;
  if (trans.is_read()) store_.read(addr, trans.get_data_ptr(), len);
  if (trans.is_write()) store_.write(addr, trans.get_data_ptr(), len);
  return static_cast<unsigned int>(len);
}

void Memory::report(std::ostream& os) const {
  os << "memory.cycles=" << busy_cycles_ << '\n'
     << "memory.reads=" << reads_ << '\n'
     << "memory.writes=" << writes_ << '\n'
     << "memory.bytes_read=" << bytes_read_ << '\n'
     << "memory.bytes_written=" << bytes_written_ << '\n'
     << "memory.pages_resident=" << store_.pages() << '\n';
}

bool MemoryPort::transport(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                           std::uint64_t len, CycleMeter& meter, sc_core::sc_time& delay) {
  delay = sc_core::SC_ZERO_TIME;
  if (len == 0) return true;
  tlm::tlm_generic_payload& trans = trans_;
  trans.set_command(cmd);
  trans.set_address(addr);
  trans.set_data_ptr(data);
  trans.set_data_length(static_cast<unsigned int>(len));
  trans.set_streaming_width(static_cast<unsigned int>(len));
  trans.set_byte_enable_ptr(nullptr);
  trans.set_dmi_allowed(false);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  socket->b_transport(trans, delay);
  const auto cycles = static_cast<std::uint64_t>(delay / meter.cycle() + 0.5);
  meter.account(cycles);
  return trans.is_response_ok();  // before any wait: another process may reuse trans_
}

bool MemoryPort::transfer(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                          std::uint64_t len, CycleMeter& meter, sc_core::sc_time& last,
                          std::vector<std::uint8_t>* grow) {
  if (grow != nullptr && (grow->capacity() < len || grow->data() != data)) {
    model_fatal("memory", "a read that grows a vector needs it reserved and pointed at");
  }
  if (len <= kPieceBytes) {
    if (grow != nullptr) grow->resize(len);
    return transport(cmd, addr, data, len, meter, last);
  }
  // The whole access, timed and counted, without moving bytes.
  sc_core::sc_time total;
  if (!transport(cmd, addr, nullptr, len, meter, total)) {
    last = total;
    return false;
  }
  tlm::tlm_generic_payload& piece = piece_;
  piece.set_command(cmd);
  piece.set_byte_enable_ptr(nullptr);
  const std::uint64_t pieces = (len + kPieceBytes - 1) / kPieceBytes;
  // total * (k + 1) / pieces without overflow: q (k + 1) + r (k + 1) / pieces.
  const std::uint64_t q = total.value() / pieces, r = total.value() % pieces;
  std::uint64_t done_units = 0;  // the shares waited so far, in resolution units
  for (std::uint64_t k = 0; k < pieces; ++k) {
    const std::uint64_t offset = k * kPieceBytes;
    const std::uint64_t n = std::min(kPieceBytes, len - offset);
    if (grow != nullptr) grow->resize(offset + n);  // reserved: data stays where it is
    piece.set_address(addr + offset);
    piece.set_data_ptr(data + offset);
    piece.set_data_length(static_cast<unsigned int>(n));
    piece.set_streaming_width(static_cast<unsigned int>(n));
    if (socket->transport_dbg(piece) != n) model_fatal("memory", "a piece of an access failed");
    // Share k ends at total * (k + 1) / pieces (integer units: the shares add up to total).
    const std::uint64_t end_units = q * (k + 1) + r * (k + 1) / pieces;
    const sc_core::sc_time share = sc_core::sc_time::from_value(end_units - done_units);
    done_units = end_units;
    if (k + 1 < pieces) {
      sc_core::wait(share);
    } else {
      last = share;
    }
  }
  return true;
}

bool MemoryPort::access(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                        std::uint64_t len, CycleMeter& meter) {
  sc_core::sc_time delay;
  // The short access (every one but a kernel's region) straight to transport(), as before.
  const bool ok = len <= kPieceBytes ? transport(cmd, addr, data, len, meter, delay)
                                     : transfer(cmd, addr, data, len, meter, delay);
  if (len != 0) sc_core::wait(delay);
  return ok;
}

bool MemoryPort::read_unwaited(std::uint64_t addr, std::uint8_t* out, std::uint64_t len,
                               CycleMeter& meter, sc_core::sc_time& wait,
                               std::vector<std::uint8_t>* grow) {
  return len <= kPieceBytes && grow == nullptr
             ? transport(tlm::TLM_READ_COMMAND, addr, out, len, meter, wait)
             : transfer(tlm::TLM_READ_COMMAND, addr, out, len, meter, wait, grow);
}

bool MemoryPort::read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len, CycleMeter& meter,
                      std::vector<std::uint8_t>* grow) {
  if (grow == nullptr) return access(tlm::TLM_READ_COMMAND, addr, out, len, meter);
  sc_core::sc_time delay;
  const bool ok = transfer(tlm::TLM_READ_COMMAND, addr, out, len, meter, delay, grow);
  if (len != 0) sc_core::wait(delay);
  return ok;
}

bool MemoryPort::write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t len,
                       CycleMeter& meter) {
  // TLM's payload pointer is non-const; a write never modifies it.
  return access(tlm::TLM_WRITE_COMMAND, addr, const_cast<std::uint8_t*>(in), len, meter);
}

}  // namespace naa::sim
