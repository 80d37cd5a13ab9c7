#include "naa/sim/memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "naa/sim/memory_port.hpp"

namespace naa::sim {

MemoryStore::MemoryStore(std::uint64_t size) : mapped_(std::max<std::uint64_t>(size, 1)) {
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw std::system_error(errno, std::generic_category(),
                            "memory: cannot reserve " + std::to_string(size) +
                                " bytes of address space for the NAA's memory (--mem)");
  }
  base_ = static_cast<std::uint8_t*>(p);
}

MemoryStore::~MemoryStore() {
  ::munmap(base_, mapped_);
}

void MemoryStore::read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const {
  if (len != 0) std::memcpy(out, base_ + addr, len);
}

void MemoryStore::mark(std::uint64_t addr, std::uint64_t len, Page state) {
  if (len == 0) return;
  const std::uint64_t last = (addr + len - 1) / kPageSize;
  for (std::uint64_t page = addr / kPageSize; page <= last; ++page) {
    auto [it, inserted] = pages_.try_emplace(page, state);
    if (state == Page::resident && (inserted || it->second != Page::resident)) {
      it->second = Page::resident;
      ++resident_;
    }
  }
  if (state == Page::resident) last_resident_ = last;
}

void MemoryStore::clear(std::uint64_t addr, std::uint64_t len) {
  last_resident_ = ~std::uint64_t{0};
  while (len > 0) {
    const std::uint64_t page = addr / kPageSize;
    const std::uint64_t off = addr % kPageSize;
    const std::uint64_t n = std::min(len, kPageSize - off);
    auto it = pages_.find(page);
    if (it != pages_.end()) {  // else every byte of the page is zero already
      std::memset(base_ + addr, 0, n);
      if (n == kPageSize) {  // the whole page: zeros, as if never written
        if (it->second == Page::resident) --resident_;
        pages_.erase(it);
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
      cfg_(cfg),
      cycle_(cfg.cycle()),
      store_(cfg.mem_size) {
  socket.register_b_transport(this, &Memory::b_transport);
  socket.register_transport_dbg(this, &Memory::transport_dbg);
  kernel_socket.register_b_transport(this, &Memory::b_transport);
  kernel_socket.register_transport_dbg(this, &Memory::transport_dbg);
  handler_socket.register_b_transport(this, &Memory::b_transport);
  handler_socket.register_transport_dbg(this, &Memory::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
  kernel_socket.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
  handler_socket.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
}

// Inlined into its two callers here, MemoryPort::transport and b_transport (issue 31: a call and
// its six register saves less per access).
[[gnu::always_inline]] inline bool Memory::transact(tlm::tlm_command cmd, std::uint64_t addr,
                                                    std::uint8_t* data, std::uint64_t len,
                                                    sc_core::sc_time& delay) {
  if (addr > cfg_.mem_size || len > cfg_.mem_size - addr) return false;
  // One DDR channel shared by every port: an access starts when the channel is free and
  // occupies it for latency + ceil(len / mem_width) cycles (contention is modelled).
  const std::uint64_t cycles = SimConfig::stage_cycles(len, cfg_.mem_width, cfg_.mem_latency);
  busy_cycles_ += cycles;
  const sc_core::sc_time stamp = sim_now();
  const sc_core::sc_time now = stamp + delay;
  const sc_core::sc_time start = busy_until_ > now ? busy_until_ : now;
  busy_until_ = start + cycles_time(cycles);
  delay = busy_until_ - stamp;
  // Without a data pointer the initiator moves the bytes itself, in pieces over the access's
  // time (MemoryPort::kPieceBytes), or they are in place already (DMI: a kernel computed on
  // them); the access is timed and counted here all the same, and a write counts its pages.
  if (cmd == tlm::TLM_READ_COMMAND) {
    if (data != nullptr) store_.read(addr, data, len);
    ++reads_;
    bytes_read_ += len;
  } else if (cmd == tlm::TLM_WRITE_COMMAND) {
    if (data != nullptr) {
      store_.write(addr, data, len);
    } else {
      store_.mark_written(addr, len);
    }
    ++writes_;
    bytes_written_ += len;
  }
  return true;
}

void Memory::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const bool ok = transact(trans.get_command(), trans.get_address(), trans.get_data_ptr(),
                           trans.get_data_length(), delay);
  trans.set_response_status(ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

unsigned int Memory::transport_dbg(tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  if (addr > cfg_.mem_size || len > cfg_.mem_size - addr) return 0;
  if (trans.is_read()) store_.read(addr, trans.get_data_ptr(), len);
  if (trans.is_write()) store_.write(addr, trans.get_data_ptr(), len);
  return static_cast<unsigned int>(len);
}

bool Memory::get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  if (addr > cfg_.mem_size || len > cfg_.mem_size - addr || cfg_.mem_size == 0) return false;
  // The range asked for is the one the initiator uses; written in place, it may become non-zero.
  if (trans.is_write()) (void)store_.direct(addr, len);
  dmi.allow_read_write();
  dmi.set_dmi_ptr(store_.base());
  dmi.set_start_address(0);
  dmi.set_end_address(cfg_.mem_size - 1);
  dmi.set_read_latency(sc_core::SC_ZERO_TIME);  // the timed transactions carry the time
  dmi.set_write_latency(sc_core::SC_ZERO_TIME);
  return true;
}

// Inlined into MemoryPort::direct_write, its caller (issue 31).
[[gnu::always_inline]] inline std::uint8_t* Memory::direct_write(std::uint64_t addr,
                                                                 std::uint64_t len) {
  // What direct_request() gets through get_direct_mem_ptr() for a write: the same refusals (a
  // length a payload cannot carry, a range outside the memory, no memory) and the same marking.
  if (len > 0xFFFFFFFFU || addr > cfg_.mem_size || len > cfg_.mem_size - addr ||
      cfg_.mem_size == 0) {
    return nullptr;
  }
  return store_.direct(addr, len);
}

void Memory::report(std::ostream& os) const {
  os << "memory.cycles=" << busy_cycles_ << '\n'
     << "memory.reads=" << reads_ << '\n'
     << "memory.writes=" << writes_ << '\n'
     << "memory.bytes_read=" << bytes_read_ << '\n'
     << "memory.bytes_written=" << bytes_written_ << '\n'
     << "memory.pages_resident=" << store_.pages() << '\n';
}

void MemoryPort::bind_memory(Memory& memory, tlm_utils::simple_target_socket<Memory>& target) {
  socket.bind(target);
  memory_ = &memory;
}

void MemoryPort::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (memory_ != nullptr) {
    memory_->b_transport(trans, delay);
  } else {
    socket->b_transport(trans, delay);
  }
}

bool MemoryPort::transport(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                           std::uint64_t len, CycleMeter& meter, sc_core::sc_time& delay) {
  delay = sc_core::SC_ZERO_TIME;
  if (len == 0) return true;
  if (memory_ != nullptr) {  // the bound Memory's access without a payload (issue 31)
    // The length as the payload carries it (32 bits).
    const bool ok = memory_->transact(cmd, addr, data, static_cast<unsigned int>(len), delay);
    meter.account(rounded_cycles(delay, meter.cycle()));
    return ok;
  }
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
  meter.account(rounded_cycles(delay, meter.cycle()));
  return trans.is_response_ok();  // before any wait: another process may reuse trans_
}

bool MemoryPort::transfer(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                          std::uint64_t len, CycleMeter& meter, sc_core::sc_time& last) {
  if (len <= kPieceBytes) {
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
    if (data != nullptr) {  // else the bytes are in place (DMI): only the time passes
      piece.set_address(addr + offset);
      piece.set_data_ptr(data + offset);
      piece.set_data_length(static_cast<unsigned int>(n));
      piece.set_streaming_width(static_cast<unsigned int>(n));
      if (socket->transport_dbg(piece) != n) model_fatal("memory", "a piece of an access failed");
    }
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

std::uint8_t* MemoryPort::direct_request(std::uint64_t addr, std::uint64_t len, bool write) {
  tlm::tlm_generic_payload& trans = trans_;
  trans.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  trans.set_address(addr);
  trans.set_data_ptr(nullptr);
  trans.set_data_length(static_cast<unsigned int>(len));
  trans.set_streaming_width(static_cast<unsigned int>(len));
  trans.set_byte_enable_ptr(nullptr);
  trans.set_dmi_allowed(false);
  tlm::tlm_dmi dmi;
  if (len > 0xFFFFFFFFU || !socket->get_direct_mem_ptr(trans, dmi)) return nullptr;
  if (!(write ? dmi.is_write_allowed() : dmi.is_read_allowed()) || addr < dmi.get_start_address() ||
      (len != 0 && addr + len - 1 > dmi.get_end_address())) {
    return nullptr;
  }
  if (!write && dmi.is_read_allowed()) {
    read_dmi_ptr_ = dmi.get_dmi_ptr();
    read_dmi_start_ = dmi.get_start_address();
    read_dmi_end_ = dmi.get_end_address();
  }
  return dmi.get_dmi_ptr() + (addr - dmi.get_start_address());
}

std::uint8_t* MemoryPort::direct_write(std::uint64_t addr, std::uint64_t len) {
  return memory_->direct_write(addr, len);
}

}  // namespace naa::sim
