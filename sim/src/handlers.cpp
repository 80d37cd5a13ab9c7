// The built-in streaming handlers (docs/sim/handler_engine.md "Built-in handlers"). Each computes
// per packet with the kernel of its function code when there is one (KernelRegistry: the C++
// model, or the Verilated RTL in rtl mode), so a packet costs the handler's overhead plus the
// kernel's cycles at the HPU width. Payload handlers never depend on packet order: results go to
// the packet's own offset, partial results to HPU memory that the completion handler combines.
#include <algorithm>
#include <cstring>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/crc32.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/sim/handler_engine.hpp"

namespace naa::sim {
namespace {

constexpr std::uint64_t kOverhead = 4;  // cycles: invocation, argument registers, return

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

// Runs `kernel` (or `fallback` when the registry has none) over one packet as a one-call kernel
// run; returns its cycles at the HPU width.
template <class Fallback>
std::uint64_t run_kernel(const HandlerContext& hc, std::uint8_t fn, std::span<KernelRegion> regs,
                         Fallback fallback) {
  KernelCall call{fn, 0, regs};
  if (hc.kernel != nullptr && hc.kernel->check(call) == 0) {
    if (hc.kernel_runs != nullptr) ++*hc.kernel_runs;
    return hc.kernel->execute(call, hc.width).cycles;
  }
  return fallback(call);
}

// The first OUTPUT region that is not a STREAM input (the result region of sum/crc/unpack).
std::size_t result_region(const HandlerContext& hc) {
  for (std::size_t i = 0; i < hc.regions.size(); ++i) {
    const auto f = hc.regions[i].flags;
    if ((f & protocol::kMrspFlagInternal) != 0 || (f & protocol::kMrspFlagOutput) == 0) continue;
    if ((f & protocol::kMrspFlagStream) != 0 && (f & protocol::kMrspFlagInput) != 0) continue;
    return i;
  }
  return hc.regions.size();
}

// add1 / add2 on an in/out STREAM region: each packet's result is deposited at its offset (the
// region then holds input + k, as after the stored kernel) and, if the region is OUTPUT, written
// back to the host at once from HPU memory.
class AddConstantHandler final : public Handler {
 public:
  AddConstantHandler(std::uint8_t fn, std::string_view name, std::uint8_t k)
      : fn_(fn), name_(name), k_(k) {}
  std::uint8_t function_code() const override { return fn_; }
  std::string_view name() const override { return name_; }
  std::uint64_t state_bytes(std::uint32_t, std::uint32_t) const override { return 0; }
  HandlerRun payload(HandlerContext& hc, const PayloadArgs& p) const override {
    std::vector<std::uint8_t> out(p.data.begin(), p.data.end());
    KernelRegion r;
    r.flags = protocol::kMrspFlagInput | protocol::kMrspFlagOutput;
    r.size = static_cast<std::uint32_t>(out.size());
    r.bytes = out;
    const std::uint64_t c = run_kernel(hc, fn_, {&r, 1}, [&](KernelCall&) {
      for (auto& b : out)
        b = static_cast<std::uint8_t>(b + k_);
      return 2 + ceil_div(out.size(), hc.width);
    });
    hc.deposit(p.region, p.offset, out);
    if ((hc.regions[p.region].flags & protocol::kMrspFlagOutput) != 0) {
      hc.reply(p.region, p.offset, out);
    }
    return {HandlerRc::success, kOverhead + c};
  }
  HandlerRun completion(HandlerContext&, const CompletionArgs&) const override {
    return {HandlerRc::success, kOverhead};  // every result already left with its packet
  }

 private:
  std::uint8_t fn_;
  std::string_view name_;
  std::uint8_t k_;
};

// sum_u64: per packet the kernel's sum, added to this HPU's partial sum in HPU memory (seed 3:
// PTL_MY_HPU-indexed private data); the completion handler adds the partial sums and writes the
// 8-byte result. Packets start at multiples of the MTU, so no uint32 straddles two packets.
class SumHandler final : public Handler {
 public:
  std::uint8_t function_code() const override { return 5; }
  std::string_view name() const override { return "sum_u64"; }
  std::uint64_t state_bytes(std::uint32_t hpus, std::uint32_t) const override {
    return 8ULL * hpus;
  }
  HandlerRun payload(HandlerContext& hc, const PayloadArgs& p) const override {
    std::vector<std::uint8_t> in(p.data.begin(), p.data.end());
    std::array<std::uint8_t, 8> sum{};
    std::array<KernelRegion, 2> r{};
    r[0].flags = protocol::kMrspFlagInput;
    r[0].size = static_cast<std::uint32_t>(in.size());
    r[0].bytes = in;
    r[1].flags = protocol::kMrspFlagOutput;
    r[1].size = 8;
    r[1].bytes = sum;
    const std::uint64_t c = run_kernel(hc, 5, r, [&](KernelCall&) {
      std::uint64_t s = 0;
      for (std::size_t i = 0; i + 4 <= in.size(); i += 4)
        s += protocol::load_le32(in.data() + i);
      protocol::store_le32(sum.data(), static_cast<std::uint32_t>(s));
      protocol::store_le32(sum.data() + 4, static_cast<std::uint32_t>(s >> 32));
      return 4 + ceil_div(in.size(), hc.width);
    });
    std::uint8_t* slot = hc.state.data() + 8ULL * hc.hpu;
    const std::uint64_t partial = load64(slot) + load64(sum.data());
    store64(slot, partial);
    return {HandlerRc::success, kOverhead + c};
  }
  HandlerRun completion(HandlerContext& hc, const CompletionArgs&) const override {
    const std::size_t o = result_region(hc);
    if (o == hc.regions.size() || hc.regions[o].size < 8) return {HandlerRc::fail, kOverhead};
    std::uint64_t total = 0;
    for (std::uint32_t h = 0; h < hc.hpus; ++h)
      total += load64(hc.state.data() + 8ULL * h);
    std::array<std::uint8_t, 8> out{};
    store64(out.data(), total);
    hc.deposit(o, 0, out);
    hc.reply(o, 0, out);
    return {HandlerRc::success, kOverhead + hc.hpus};
  }

 private:
  static std::uint64_t load64(const std::uint8_t* p) {
    return protocol::load_le32(p) | std::uint64_t{protocol::load_le32(p + 4)} << 32;
  }
  static void store64(std::uint8_t* p, std::uint64_t v) {
    protocol::store_le32(p, static_cast<std::uint32_t>(v));
    protocol::store_le32(p + 4, static_cast<std::uint32_t>(v >> 32));
  }
};

// crc32: per packet the kernel's CRC of the packet, kept in HPU memory as (offset, length, crc)
// in the next free slot; the completion handler folds them in offset order (zlib's
// crc32_combine: crc(a || b) = shift(crc(a), |b|) ^ crc(b)), so packets may arrive in any order.
class Crc32Handler final : public Handler {
 public:
  static constexpr std::size_t kSlot = 16;  // offset (8) | length (4) | crc (4)
  std::uint8_t function_code() const override { return 6; }
  std::string_view name() const override { return "crc32"; }
  std::uint64_t state_bytes(std::uint32_t, std::uint32_t packets) const override {
    return 8 + kSlot * std::uint64_t{packets};
  }
  HandlerRun payload(HandlerContext& hc, const PayloadArgs& p) const override {
    std::vector<std::uint8_t> in(p.data.begin(), p.data.end());
    std::array<std::uint8_t, 4> crc{};
    std::array<KernelRegion, 2> r{};
    r[0].flags = protocol::kMrspFlagInput;
    r[0].size = static_cast<std::uint32_t>(in.size());
    r[0].bytes = in;
    r[1].flags = protocol::kMrspFlagOutput;
    r[1].size = 4;
    r[1].bytes = crc;
    const std::uint64_t c = run_kernel(hc, 6, r, [&](KernelCall&) {
      protocol::store_le32(crc.data(), protocol::crc32(in));
      return 4 + ceil_div(in.size(), hc.width);
    });
    const std::uint32_t n = protocol::load_le32(hc.state.data());
    if (8 + kSlot * (std::uint64_t{n} + 1) > hc.state.size()) return {HandlerRc::segv, kOverhead};
    std::uint8_t* s = hc.state.data() + 8 + kSlot * n;
    protocol::store_le32(s, static_cast<std::uint32_t>(p.offset));
    protocol::store_le32(s + 4, static_cast<std::uint32_t>(p.offset >> 32));
    protocol::store_le32(s + 8, static_cast<std::uint32_t>(in.size()));
    std::memcpy(s + 12, crc.data(), 4);
    protocol::store_le32(hc.state.data(), n + 1);
    return {HandlerRc::success, kOverhead + c};
  }
  HandlerRun completion(HandlerContext& hc, const CompletionArgs&) const override {
    const std::size_t o = result_region(hc);
    if (o == hc.regions.size() || hc.regions[o].size < 4) return {HandlerRc::fail, kOverhead};
    struct Piece {
      std::uint64_t offset;
      std::uint32_t length, crc;
    };
    std::vector<Piece> pieces;
    const std::uint32_t n = hc.state.empty() ? 0 : protocol::load_le32(hc.state.data());
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint8_t* s = hc.state.data() + 8 + kSlot * i;
      pieces.push_back({protocol::load_le32(s) | std::uint64_t{protocol::load_le32(s + 4)} << 32,
                        protocol::load_le32(s + 8), protocol::load_le32(s + 12)});
    }
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
    std::uint32_t crc = 0;
    for (const Piece& p : pieces)
      crc = protocol::crc32_shift(crc, p.length) ^ p.crc;
    std::array<std::uint8_t, 4> out{};
    protocol::store_le32(out.data(), crc);
    hc.deposit(o, 0, out);
    hc.reply(o, 0, out);
    return {HandlerRc::success, kOverhead + 32 * pieces.size()};  // one combine per piece
  }
};

// unpack_strided (seed 5.2, the datatype example): the message is `count` blocks of `blocksize`
// bytes, deposited into the result region at multiples of `stride` (descriptor argument: stride
// in the high 32 bits, blocksize in the low 32). Each packet knows its offset, so the blocks it
// carries go straight to their places; the completion handler writes the region back. A block
// that would land past the region is an access outside: the call fails (SEGV), nothing written.
class UnpackStridedHandler final : public Handler {
 public:
  std::uint8_t function_code() const override { return 7; }
  std::string_view name() const override { return "unpack_strided"; }
  std::uint64_t state_bytes(std::uint32_t, std::uint32_t) const override { return 0; }
  HandlerRun payload(HandlerContext& hc, const PayloadArgs& p) const override {
    const std::uint64_t stride = hc.arg >> 32;
    const std::uint64_t block = hc.arg & 0xFFFFFFFFU;
    const std::size_t o = result_region(hc);
    if (block == 0 || stride < block || o == hc.regions.size()) return {HandlerRc::fail, kOverhead};
    std::uint64_t cycles = kOverhead;
    std::uint64_t pos = p.offset;
    std::size_t i = 0;
    while (i < p.data.size()) {
      const std::uint64_t within = pos % block;
      const std::uint64_t n = std::min<std::uint64_t>(block - within, p.data.size() - i);
      hc.deposit(o, (pos / block) * stride + within, p.data.subspan(i, n));
      cycles += 2 + ceil_div(n, hc.width);  // one DMA command per piece
      pos += n;
      i += n;
    }
    return {HandlerRc::success, cycles};
  }
  HandlerRun completion(HandlerContext& hc, const CompletionArgs&) const override {
    const std::size_t o = result_region(hc);
    if (o == hc.regions.size()) return {HandlerRc::fail, kOverhead};
    hc.write_back(o, hc.regions[o].size);
    return {HandlerRc::success, kOverhead};
  }
};

}  // namespace

void HandlerContext::deposit(std::size_t region, std::uint64_t offset,
                             std::span<const std::uint8_t> bytes) {
  actions.push_back({Action::Kind::deposit, region, offset, {bytes.begin(), bytes.end()}, 0});
}

void HandlerContext::reply(std::size_t region, std::uint64_t offset,
                           std::span<const std::uint8_t> bytes) {
  actions.push_back({Action::Kind::reply, region, offset, {bytes.begin(), bytes.end()}, 0});
}

void HandlerContext::write_back(std::size_t region, std::uint64_t length) {
  actions.push_back({Action::Kind::write_back, region, 0, {}, length});
}

std::size_t HandlerContext::find(std::uint8_t flags, std::size_t i) const {
  for (std::size_t k = 0; k < regions.size(); ++k) {
    const auto f = regions[k].flags;
    if ((f & protocol::kMrspFlagInternal) == 0 && (f & flags) == flags && i-- == 0) return k;
  }
  return regions.size();
}

// The default header handler has nothing to do and costs nothing (a handler that is not
// installed does not run); it still counts as the message's header handler invocation.
HandlerRun Handler::header(HandlerContext&, const HeaderArgs&) const {
  return {HandlerRc::success, 0};
}

void HandlerRegistry::register_handler(std::unique_ptr<Handler> h) {
  const std::uint8_t fn = h->function_code();
  by_fn_.at(fn & 0x7FU) = std::move(h);
}

const Handler* HandlerRegistry::find(std::uint8_t fn) const {
  return fn < by_fn_.size() ? by_fn_[fn].get() : nullptr;
}

HandlerRegistry HandlerRegistry::with_builtins() {
  HandlerRegistry r;
  r.register_handler(std::make_unique<AddConstantHandler>(1, "add1", 1));
  r.register_handler(std::make_unique<AddConstantHandler>(2, "add2", 2));
  r.register_handler(std::make_unique<SumHandler>());
  r.register_handler(std::make_unique<Crc32Handler>());
  r.register_handler(std::make_unique<UnpackStridedHandler>());
  return r;
}

}  // namespace naa::sim
