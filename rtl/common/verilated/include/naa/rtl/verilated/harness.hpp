// The adapter kit, Verilator side (docs/rtl/plug-in-your-rtl.md): Harness owns one Verilated
// model in a VerilatedContext (its own, or an RtlSession shared with other blocks), clocks it one
// cycle per step, traces it on request;
// put_*/get_* pack the C++ port structs into Verilated ports. Include it only from code that is
// compiled against a naa_verilate() target (it needs Verilator's headers). Follows Verilator's
// examples: the harness owns the context (never a global), tracing is compiled in and switched on
// at run time, final() at the end.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <verilated.h>
#include <verilated_fst_c.h>

#include "naa/rtl/rtl_options.hpp"
#include "naa/rtl/rtl_session.hpp"

namespace naa::rtl::verilated {

template <class V>
class Harness {
 public:
  Harness(const RtlOptions& options, std::string_view block)
      : name_(options.name.empty() ? std::string(block) : options.name),
        session_(options.session
                     ? options.session
                     : std::make_shared<RtlSession>(RtlSessionOptions{
                           options.trace_fst, options.x_seed, options.clock_period_ps})) {
    // attach() first: it throws when the waveform has started, and a model created before the
    // throw would be deleted while coverage (NAA_RTL_COVERAGE) still points at its counters.
    VerilatedFstC* fst = session_->attach();
    top_ = std::make_unique<V>(&session_->context(), name_.c_str());
    if (fst) {
      top_->trace(fst, 99);
      traced_ = true;
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
    // The waveform refers to this model: complete it before the model goes away.
    if (traced_) session_->close_trace();
    top_->final();
    // Coverage: the session writes this model's counters later, so it keeps the model till then.
    if (RtlSession::collects_coverage()) {
      session_->retire(
          std::shared_ptr<void>(top_.release(), [](void* p) { delete static_cast<V*>(p); }));
    }
  }

  [[nodiscard]] V& top() noexcept { return *top_; }
  [[nodiscard]] RtlSession& session() noexcept { return *session_; }

  // The inputs of the current cycle are on the ports: settle with the clock low, so outputs
  // (including combinational paths from inputs) are those of the cycle. Not skippable: Verilator
  // 5.006 sees a rising edge only in an eval() that finds clk_i high after an eval() that found
  // it low (it keeps the value of the last eval(); setting clk_i low without an eval() leaves no
  // edge for the next), so every cycle takes two (docs/rtl/simulation-cost.md). dump() only for
  // a traced model (attach() gave it the waveform; dump() would return at once otherwise).
  void settle() {
    start_ps_ = session_->begin_cycle();
    // Verilator reports a failed assertion ($error -> $stop) to the thread's current context:
    // make that this block's, so RtlSessionOptions::fatal_assertions and assertion_failed() apply.
    Verilated::threadContextp(&session_->context());
    top_->clk_i = 0;
    top_->eval();
    if (traced_) session_->dump(start_ps_);
  }

  // The rising edge that ends the cycle.
  void rising_edge() {
    const std::uint64_t edge = start_ps_ + session_->period_ps() / 2;
    session_->context().time(edge);
    top_->clk_i = 1;
    top_->eval();
    if (traced_) session_->dump(edge);
  }

 private:
  std::string name_;
  std::shared_ptr<RtlSession> session_;
  std::unique_ptr<V> top_;
  bool traced_ = false;
  std::uint64_t start_ps_ = 0;
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
  if constexpr (std::endian::native == std::endian::little) {
    // Word w holds bytes 4w .. 4w+3, byte 4w lowest: the host's own layout, so a copy (this runs
    // for every beat of every Verilated stream block; the loop below cost ~10x more).
    std::memset(port.data(), 0, N * sizeof(EData));
    std::memcpy(port.data(), bytes, std::min<std::size_t>(n, N * sizeof(EData)));
    return;
  }
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
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(bytes, port.data(), std::min<std::size_t>(n, N * sizeof(EData)));
    return;
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    bytes[i] = static_cast<std::uint8_t>(port.at(i / 4) >> (8 * (i % 4)));
  }
}

}  // namespace naa::rtl::verilated
