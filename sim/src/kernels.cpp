// The built-in kernels of PROTOCOL.md 5.3. Each is a class with its cost model; the registry maps
// the function code to it. Cost models are per-byte at the datapath width W: a kernel streams its
// regions one beat of W bytes per cycle. Kernels that also exist as RTL cost exactly what their
// RTL takes at its ports (beats + 1 for the registered output), so --kernels=model and rtl give
// the same simulated time (docs/sim/rtl.md "Kernels", docs/sim/kernel_engine.md): the cycle
// counts come from the kernels' cycle models (naa/rtl/<kernel>.hpp, *_call_cycles), which the
// RTL is checked against, so the formula exists once.
#include "naa/sim/kernels.hpp"

#include <algorithm>
#include <cstring>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/crc32.hpp"
#include "naa/rtl/add_const.hpp"
#include "naa/rtl/crc32.hpp"
#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/vadd_i32.hpp"

namespace naa::sim {
namespace {

constexpr std::uint32_t kOk = 0;
constexpr auto kInvalidArguments =
    static_cast<std::uint32_t>(protocol::ReturnCode::invalid_arguments);

// add1 / add2: add a constant (mod 256) to every byte of every non-internal region, in place
// (reference-compatible: the reference software NAA does exactly this).
class AddConstant final : public Kernel {
 public:
  AddConstant(std::uint8_t fn, std::string_view name, std::uint8_t k)
      : fn_(fn), name_(name), k_(k) {}
  std::uint8_t function_code() const override { return fn_; }
  bool computes_only() const override { return true; }
  std::string_view name() const override { return name_; }
  std::uint32_t check(const KernelCall&) const override { return kOk; }
  // One add_const call per non-empty, non-internal region (docs/rtl/kernel-shell.md "Regions").
  std::uint64_t cycles(const KernelCall& call, std::uint32_t width) const override {
    std::uint64_t cycles = 0;
    for (const auto& r : call.regions) {
      if (!r.is_internal() && r.size != 0) cycles += rtl::add_const_call_cycles(r.size, width);
    }
    return cycles;
  }
  std::uint32_t run(KernelCall& call) const override {
    // Eight bytes per step (SWAR, issue 19: the byte loop was 2.5 instructions per byte and GCC
    // does not vectorise it at -O2): add the low 7 bits of every byte with the carry stopping at
    // bit 7, then set bit 7 to a7 ^ k7 ^ carry.
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    const std::uint64_t k = 0x0101010101010101ULL * k_;
    for (auto& r : call.regions) {
      if (r.is_internal()) continue;
      std::uint8_t* b = r.bytes.data();
      const std::size_t n = r.bytes.size();
      std::size_t i = 0;
      for (; i + 8 <= n; i += 8) {
        std::uint64_t x;
        std::memcpy(&x, b + i, 8);
        x = ((x & ~kHigh) + (k & ~kHigh)) ^ ((x ^ k) & kHigh);
        std::memcpy(b + i, &x, 8);
      }
      for (; i < n; ++i)
        b[i] = static_cast<std::uint8_t>(b[i] + k_);
    }
    return kOk;
  }

 private:
  std::uint8_t fn_;
  std::string_view name_;
  std::uint8_t k_;
};

class Nop final : public Kernel {
 public:
  std::uint8_t function_code() const override { return 3; }
  bool computes_only() const override { return true; }
  std::string_view name() const override { return "nop"; }
  std::uint32_t check(const KernelCall&) const override { return kOk; }
  std::uint64_t cycles(const KernelCall&, std::uint32_t) const override { return 1; }
  std::uint32_t run(KernelCall&) const override { return kOk; }
};

// out0[i] = in0[i] + in1[i] over little-endian int32, wrapping; n = in0 size / 4 elements.
class VaddI32 final : public Kernel {
 public:
  std::uint8_t function_code() const override { return 4; }
  bool computes_only() const override { return true; }
  std::string_view name() const override { return "vadd_i32"; }
  std::uint32_t check(const KernelCall& c) const override {
    const KernelRegion* a = c.input(0);
    const KernelRegion* b = c.input(1);
    const KernelRegion* o = c.output(0);
    if (a == nullptr || b == nullptr || o == nullptr) return kInvalidArguments;
    const std::uint32_t n = a->size / 4 * 4;
    if (b->size < n || o->size < n) return kInvalidArguments;
    return kOk;
  }
  std::uint64_t cycles(const KernelCall& c, std::uint32_t width) const override {
    return rtl::vadd_i32_call_cycles(c.input(0)->size, c.input(1)->size, width);
  }
  std::uint32_t run(KernelCall& c) const override {
    KernelRegion* a = c.input(0);
    KernelRegion* b = c.input(1);
    KernelRegion* o = c.output(0);
    // in0 must fit the kernel's buffer (rtl/vadd_i32: it holds in0 while in1 streams in).
    if (a->size > rtl::kVaddI32MaxBytes) {
      o->result_length = 0;
      return rtl::kVaddI32TooBig;
    }
    const std::uint32_t n = a->size / 4;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t s = protocol::load_le32(a->bytes.data() + 4 * i) +
                              protocol::load_le32(b->bytes.data() + 4 * i);
      protocol::store_le32(o->bytes.data() + 4 * i, s);
    }
    o->result_length = n * 4;
    return kOk;
  }
};

// out0 = 64-bit little-endian sum of in0 read as uint32 elements.
class SumU64 final : public Kernel {
 public:
  std::uint8_t function_code() const override { return 5; }
  bool computes_only() const override { return true; }
  std::string_view name() const override { return "sum_u64"; }
  std::uint32_t check(const KernelCall& c) const override {
    if (c.input(0) == nullptr || c.output(0) == nullptr || c.output(0)->size < 8) {
      return kInvalidArguments;
    }
    return kOk;
  }
  std::uint64_t cycles(const KernelCall& c, std::uint32_t width) const override {
    return rtl::sum_u64_call_cycles(c.input(0)->size, width);
  }
  std::uint32_t run(KernelCall& c) const override {
    const KernelRegion* in = c.input(0);
    KernelRegion* o = c.output(0);
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i + 4 <= in->size; i += 4)
      sum += protocol::load_le32(in->bytes.data() + i);
    protocol::store_le32(o->bytes.data(), static_cast<std::uint32_t>(sum));
    protocol::store_le32(o->bytes.data() + 4, static_cast<std::uint32_t>(sum >> 32));
    o->result_length = 8;
    return kOk;
  }
};

// out0 = zlib CRC-32 of in0, 4 bytes little-endian; result length 4.
class Crc32 final : public Kernel {
 public:
  std::uint8_t function_code() const override { return 6; }
  bool computes_only() const override { return true; }
  std::string_view name() const override { return "crc32"; }
  std::uint32_t check(const KernelCall& c) const override {
    if (c.input(0) == nullptr || c.output(0) == nullptr || c.output(0)->size < 4) {
      return kInvalidArguments;
    }
    return kOk;
  }
  std::uint64_t cycles(const KernelCall& c, std::uint32_t width) const override {
    return rtl::crc32_call_cycles(c.input(0)->size, width);
  }
  std::uint32_t run(KernelCall& c) const override {
    const KernelRegion* in = c.input(0);
    KernelRegion* o = c.output(0);
    protocol::store_le32(o->bytes.data(), protocol::crc32(in->bytes));
    o->result_length = 4;
    return kOk;
  }
};

}  // namespace

KernelRegion* KernelCall::input(std::size_t i) const {
  for (auto& r : regions) {
    if (r.is_input() && !r.is_internal() && i-- == 0) return &r;
  }
  return nullptr;
}

KernelRegion* KernelCall::output(std::size_t i) const {
  for (auto& r : regions) {
    if (r.is_output() && !r.is_internal() && i-- == 0) return &r;
  }
  return nullptr;
}

void KernelRegistry::register_kernel(std::unique_ptr<Kernel> k) {
  const std::uint8_t fn = k->function_code();
  by_fn_.at(fn & 0x7FU) = std::move(k);
}

std::unique_ptr<Kernel> KernelRegistry::take(std::uint8_t fn) {
  return fn < by_fn_.size() ? std::move(by_fn_[fn]) : nullptr;
}

std::size_t KernelRegistry::size() const {
  std::size_t n = 0;
  for (const auto& k : by_fn_)
    n += k ? 1U : 0U;
  return n;
}

KernelRegistry KernelRegistry::with_builtins() {
  KernelRegistry r;
  r.register_kernel(std::make_unique<AddConstant>(1, "add1", 1));
  r.register_kernel(std::make_unique<AddConstant>(2, "add2", 2));
  r.register_kernel(std::make_unique<Nop>());
  r.register_kernel(std::make_unique<VaddI32>());
  r.register_kernel(std::make_unique<SumU64>());
  r.register_kernel(std::make_unique<Crc32>());
  return r;
}

}  // namespace naa::sim
