// The adapter kit, Verilator side (docs/rtl/plug-in-your-rtl.md): Harness owns one
// VerilatedContext and one Verilated model, clocks it one cycle per step, traces it on request;
// put_*/get_* pack the C++ port structs into Verilated ports. Include it only from code that is
// compiled against a naa_verilate() target (it needs Verilator's headers). Follows Verilator's
// examples: the harness owns the context (never a global), tracing is compiled in and switched on
// at run time, final() at the end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <verilated.h>
#include <verilated_fst_c.h>

#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl::verilated {

template <class V>
class Harness {
 public:
  Harness(const RtlOptions& options, std::string_view block)
      : name_(options.name.empty() ? std::string(block) : options.name),
        period_ps_(options.clock_period_ps),
        context_(std::make_unique<VerilatedContext>()) {
    // Flops without reset start random (--x-initial unique) unless x_seed is 0.
    context_->randReset(options.x_seed != 0 ? 2 : 0);
    if (options.x_seed != 0) context_->randSeed(static_cast<int>(options.x_seed & 0x7FFFFFFFU));
    if (!options.trace_fst.empty()) context_->traceEverOn(true);
    top_ = std::make_unique<V>(context_.get(), name_.c_str());
    if (!options.trace_fst.empty()) {
      trace_ = std::make_unique<VerilatedFstC>();
      top_->trace(trace_.get(), 99);
      trace_->open(options.trace_fst.c_str());
    }
    // Start with the clock low and reset released, so that a first cycle with rst_ni low is a
    // falling edge that the asynchronous reset sees (Verilator evaluates edges, not levels: a
    // port that starts at 0 and is driven 0 has no negedge and the flops keep their x-initial
    // values).
    top_->clk_i = 0;
    top_->rst_ni = 1;
    top_->eval();
  }

  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  ~Harness() {
    top_->final();
    if (trace_) trace_->close();
  }

  [[nodiscard]] V& top() noexcept { return *top_; }

  // The inputs of the current cycle are on the ports: settle with the clock low, so outputs
  // (including combinational paths from inputs) are those of the cycle.
  void settle() {
    top_->clk_i = 0;
    top_->eval();
    if (trace_) trace_->dump(cycle_ * period_ps_);
  }

  // The rising edge that ends the cycle.
  void rising_edge() {
    top_->clk_i = 1;
    top_->eval();
    if (trace_) trace_->dump(cycle_ * period_ps_ + period_ps_ / 2);
    ++cycle_;
    context_->time(cycle_ * period_ps_);
  }

 private:
  std::string name_;
  std::uint64_t period_ps_;
  std::uint64_t cycle_ = 0;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> top_;
  std::unique_ptr<VerilatedFstC> trace_;
};

// Verilated ports of up to 64 bits are unsigned integers (CData/SData/IData/QData); wider ones
// are VlWide<N> (N 32-bit words, word 0 least significant). Inputs must be clean: no bits above
// the port width, so every value is masked to `bits`.
template <class T>
requires std::is_unsigned_v<T>
void put_bits(T& port, std::uint64_t value, std::uint32_t bits) {
  const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1U;
  port = static_cast<T>(value & mask);
}

template <class T>
requires std::is_unsigned_v<T>
void put_bytes(T& port, const std::uint8_t* bytes, std::uint32_t n) {
  std::uint64_t v = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    v |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  port = static_cast<T>(v);
}

template <std::size_t N>
void put_bytes(VlWide<N>& port, const std::uint8_t* bytes, std::uint32_t n) {
  for (std::size_t w = 0; w < N; ++w) {
    std::uint32_t word = 0;
    for (std::uint32_t k = 0; k < 4; ++k) {
      const std::size_t i = 4 * w + k;
      if (i < n) word |= static_cast<std::uint32_t>(bytes[i]) << (8 * k);
    }
    port.at(w) = word;
  }
}

template <class T>
requires std::is_unsigned_v<T>
void get_bytes(const T& port, std::uint8_t* bytes, std::uint32_t n) {
  const auto v = static_cast<std::uint64_t>(port);
  for (std::uint32_t i = 0; i < n; ++i)
    bytes[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

template <std::size_t N>
void get_bytes(const VlWide<N>& port, std::uint8_t* bytes, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) {
    bytes[i] = static_cast<std::uint8_t>(port.at(i / 4) >> (8 * (i % 4)));
  }
}

}  // namespace naa::rtl::verilated
