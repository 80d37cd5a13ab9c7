// run_hpu_call() and HpuMemory (include/naa/rtl/hpu_run.hpp).
#include <algorithm>
#include <stdexcept>

#include "naa/rtl/hpu_run.hpp"

namespace naa::rtl {

void reset_hpu(HpuPort& core) {
  HpuInputs in;
  in.rst_n = false;
  (void)core.step(in);
}

HpuCallResult run_hpu_call(HpuPort& core, HpuBus& bus, const HpuCall& call) {
  HpuInputs in;
  in.start = true;
  in.entry = call.entry;
  in.sp = call.sp;
  in.args = call.args;
  bool pending = false;
  std::uint64_t due = 0;
  HpuBusResponse response;
  HpuCallResult result;
  for (std::uint64_t cycle = 0;; ++cycle) {
    if (cycle >= call.max_cycles) {
      reset_hpu(core);
      result.outcome = HpuOutcome::watchdog;
      result.cycles = cycle;
      return result;
    }
    const bool respond = pending && due == cycle;
    in.mem_rvalid = respond;
    in.mem_err = respond && response.error;
    in.mem_rdata = respond ? response.rdata : 0;
    const HpuOutputs out = core.step(in);
    in.start = false;
    if (respond) pending = false;
    if (out.done || out.trap) {
      result.outcome = out.done ? HpuOutcome::returned : HpuOutcome::trapped;
      result.ret = out.ret;
      result.trap = out.trap ? out.trap_cause : HpuTrap::none;
      result.trap_pc = out.trap ? out.trap_pc : 0;
      result.cycles = cycle + 1;
      return result;
    }
    if (out.mem_req) {
      response = bus.access({out.mem_fetch, out.mem_we, out.mem_addr, out.mem_be, out.mem_wdata});
      pending = true;
      due = cycle + std::max<std::uint32_t>(1, response.latency);
    }
  }
}

HpuMemory::Region& HpuMemory::add(std::uint32_t base, std::uint32_t size, bool writable,
                                  bool executable) {
  const std::uint64_t end = std::uint64_t{base} + size;
  for (const Region& r : regions_) {
    if (base < r.base + std::uint64_t{r.bytes.size()} && r.base < end) {
      throw std::invalid_argument("HpuMemory: regions overlap");
    }
  }
  Region r;
  r.base = base;
  r.bytes.assign(size, 0);
  r.writable = writable;
  r.executable = executable;
  regions_.push_back(std::move(r));
  return regions_.back();
}

HpuMemory::Region* HpuMemory::find(std::uint32_t addr, std::uint32_t len) {
  for (Region& r : regions_) {
    if (addr >= r.base && std::uint64_t{addr} + len <= r.base + std::uint64_t{r.bytes.size()}) {
      return &r;
    }
  }
  return nullptr;
}

bool HpuMemory::write(std::uint32_t addr, std::span<const std::uint8_t> data) {
  Region* r = find(addr, static_cast<std::uint32_t>(data.size()));
  if (r == nullptr) return false;
  std::copy(data.begin(), data.end(), r->bytes.begin() + (addr - r->base));
  return true;
}

bool HpuMemory::read(std::uint32_t addr, std::span<std::uint8_t> out) {
  Region* r = find(addr, static_cast<std::uint32_t>(out.size()));
  if (r == nullptr) return false;
  const auto first = r->bytes.begin() + (addr - r->base);
  std::copy(first, first + static_cast<std::ptrdiff_t>(out.size()), out.begin());
  return true;
}

HpuBusResponse HpuMemory::access(const HpuAccess& a) {
  ++accesses_;
  HpuBusResponse rsp;
  rsp.latency = latency_;
  const std::uint32_t word = a.addr & ~3U;
  Region* r = find(word, 4);
  if (r == nullptr || (a.fetch && !r->executable) || (a.write && !r->writable)) {
    rsp.error = true;
    return rsp;
  }
  std::uint8_t* p = r->bytes.data() + (word - r->base);
  for (unsigned i = 0; i < 4; ++i) {
    if (a.write && ((a.be >> i) & 1U)) p[i] = static_cast<std::uint8_t>(a.wdata >> (8 * i));
    rsp.rdata |= std::uint32_t{p[i]} << (8 * i);
  }
  return rsp;
}

}  // namespace naa::rtl
