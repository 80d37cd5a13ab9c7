// naa-rtl-bench: simulated cycles per wall second of every RTL block as the C++ model, as the
// Verilated RTL and as a lockstep pair. The blocks of the receive path and the MR table get the
// same pre-generated random inputs (valid and payload random every cycle; input generation is not
// timed), open loop: they keep the stream rule the RTL asserts (rtl/prim/naa_stream_assert.sv: a
// waiting beat stays) by never making a beat wait (outputs always ready). The kernels are driven
// as naa-sim drives them, call after call through the kernel shell's driver (run_kernel: ap_start,
// src at full rate, dst always ready) on 4 KiB regions of pre-generated random bytes: a kernel
// takes src only while a call runs, so open-loop inputs would break the rule.
// Usage: naa-rtl-bench [--cycles N] [--csv FILE]
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/crc32.hpp"
#include "naa/rtl/crc32_rtl.hpp"
#include "naa/rtl/icrc_check.hpp"
#include "naa/rtl/icrc_check_rtl.hpp"
#include "naa/rtl/kernel_driver.hpp"
#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/mr_table_rtl.hpp"
#include "naa/rtl/rx_parser.hpp"
#include "naa/rtl/rx_parser_rtl.hpp"
#include "naa/rtl/sum_u64.hpp"
#include "naa/rtl/sum_u64_rtl.hpp"
#include "naa/rtl/vadd_i32.hpp"
#include "naa/rtl/vadd_i32_rtl.hpp"

using namespace naa::rtl;

namespace {

using Rng = std::mt19937_64;

StreamBeat random_beat(Rng& rng, std::uint32_t width) {
  StreamBeat b;
  for (std::uint32_t i = 0; i < width; ++i)
    b.data[i] = static_cast<std::uint8_t>(rng());
  b.keep = keep_mask(width);
  b.last = (rng() % 8) == 0;
  return b;
}

template <class Port>
double cycles_per_second(Port& port, const std::vector<typename Port::Inputs>& inputs,
                         std::uint64_t cycles) {
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t c = 0; c < cycles; ++c) {
    const auto out = port.step(inputs[c % inputs.size()]);
    asm volatile("" : : "r"(&out) : "memory");  // keep the result alive
  }
  const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
  return static_cast<double>(cycles) / s.count();
}

struct Row {
  std::string block;
  std::uint32_t width;
  double model;
  double rtl;
  double lockstep;
};

template <class Port, class Lockstep>
Row measure(const std::string& block, std::uint32_t width,
            const std::vector<typename Port::Inputs>& inputs, std::uint64_t cycles,
            const std::function<std::unique_ptr<Port>()>& make_model,
            const std::function<std::unique_ptr<Port>()>& make_rtl) {
  Row r{block, width, 0, 0, 0};
  {
    auto m = make_model();
    r.model = cycles_per_second<Port>(*m, inputs, cycles * 10);
  }
  {
    auto v = make_rtl();
    r.rtl = cycles_per_second<Port>(*v, inputs, cycles);
  }
  {
    Lockstep l(make_model(), make_rtl());
    r.lockstep = cycles_per_second<Port>(l, inputs, cycles);
  }
  return r;
}

// A kernel's cycles per second: calls of `src` (the src packets) into buffers of `dst` bytes,
// one after the other at full rate, until `cycles` cycles have run (a call never splits).
double kernel_cycles_per_second(KernelPort& port, const std::vector<std::vector<std::uint8_t>>& src,
                                const std::vector<std::uint32_t>& dst, std::uint64_t cycles) {
  std::vector<std::span<const std::uint8_t>> in(src.begin(), src.end());
  std::vector<std::vector<std::uint8_t>> buffers;
  for (const std::uint32_t n : dst)
    buffers.emplace_back(n);
  std::vector<std::span<std::uint8_t>> out(buffers.begin(), buffers.end());
  reset_kernel(port);
  std::uint64_t done = 1;
  const auto start = std::chrono::steady_clock::now();
  while (done < cycles) {
    const KernelInvocation r = run_kernel(port, 1, in, out);
    if (!r.error.empty()) {
      std::cerr << "naa-rtl-bench: " << r.error << "\n";
      std::exit(1);
    }
    done += r.cycles;
  }
  const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
  return static_cast<double>(done) / s.count();
}

Row measure_kernel(const std::string& block, std::uint32_t width,
                   const std::vector<std::vector<std::uint8_t>>& src,
                   const std::vector<std::uint32_t>& dst, std::uint64_t cycles,
                   const std::function<std::unique_ptr<KernelPort>()>& make_model,
                   const std::function<std::unique_ptr<KernelPort>()>& make_rtl) {
  Row r{block, width, 0, 0, 0};
  r.model = kernel_cycles_per_second(*make_model(), src, dst, cycles * 10);
  r.rtl = kernel_cycles_per_second(*make_rtl(), src, dst, cycles);
  KernelLockstep l(make_model(), make_rtl());
  r.lockstep = kernel_cycles_per_second(l, src, dst, cycles);
  if (l.checker().diverged()) {
    std::cerr << "naa-rtl-bench: " << l.checker().divergence()->to_string() << "\n";
    std::exit(1);
  }
  return r;
}

// The command line.
struct BenchOptions {
  std::uint64_t cycles = 200000;  // per block and implementation
  std::string csv;                // also write the table here
};

[[noreturn]] void usage_exit(int code) {
  (code == 0 ? std::cout : std::cerr) << "usage: naa-rtl-bench [--cycles N] [--csv FILE]\n";
  std::exit(code);
}

// Reads the command line; a bad option prints usage and exits 2, --help prints it and exits 0.
BenchOptions parse_options(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) usage_exit(0);
    if (std::strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) {
      const char* text = argv[++i];
      char* end = nullptr;
      errno = 0;
      const unsigned long long n = std::strtoull(text, &end, 10);
      if (errno != 0 || end == text || *end != '\0' || n == 0 || text[0] == '-') usage_exit(2);
      o.cycles = n;
    } else if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      o.csv = argv[++i];
    } else {
      usage_exit(2);
    }
  }
  return o;
}

int run(const BenchOptions& o) {
  const std::uint64_t cycles = o.cycles;
  const std::string& csv = o.csv;
  Rng rng(1);
  constexpr std::size_t kInputs = 4096;
  std::vector<Row> rows;

  {
    std::vector<MrTableInputs> in(kInputs);
    for (std::size_t c = 0; c < kInputs; ++c) {
      in[c].rst_n = c != 0;
      in[c].write = {(rng() % 4) == 0,
                     static_cast<std::uint8_t>(rng() % 32),
                     true,
                     static_cast<std::uint32_t>(rng()),
                     rng() % 4096,
                     static_cast<std::uint32_t>(rng() % 4096),
                     3,
                     static_cast<std::uint32_t>(rng() % 4)};
      in[c].write.rkey = (in[c].write.rkey & ~31U) | in[c].write.index;
      in[c].lookup = {true,
                      static_cast<std::uint32_t>(rng()),
                      rng() % 8192,
                      static_cast<std::uint32_t>(rng() % 512),
                      1,
                      static_cast<std::uint32_t>(rng() % 4)};
    }
    rows.push_back(measure<MrTablePort, MrTableLockstep>(
        "mr_table", 0, in, cycles,
        []() -> std::unique_ptr<MrTablePort> { return std::make_unique<MrTableModel>(); },
        [] { return make_mr_table_rtl(); }));
  }
  // The kernels: calls on 4 KiB regions (vadd_i32: in0 and in1 of 4 KiB, out0 of 4 KiB).
  const auto bytes = [&rng](std::size_t n) {
    std::vector<std::uint8_t> b(n);
    for (auto& x : b)
      x = static_cast<std::uint8_t>(rng());
    return b;
  };
  const std::vector<std::vector<std::uint8_t>> one{bytes(4096)};
  const std::vector<std::vector<std::uint8_t>> two{bytes(4096), bytes(4096)};
  for (const std::uint32_t w : add_const_rtl_widths()) {
    rows.push_back(measure_kernel(
        "add_const", w, one, {4096}, cycles,
        [w]() -> std::unique_ptr<KernelPort> { return std::make_unique<AddConstModel>(w); },
        [w] { return make_add_const_rtl(w); }));
  }
  for (const std::uint32_t w : vadd_i32_rtl_widths()) {
    rows.push_back(measure_kernel(
        "vadd_i32", w, two, {4096}, cycles,
        [w]() -> std::unique_ptr<KernelPort> { return std::make_unique<VaddI32Model>(w); },
        [w] { return make_vadd_i32_rtl(w); }));
  }
  for (const std::uint32_t w : crc32_rtl_widths()) {
    rows.push_back(measure_kernel(
        "crc32", w, one, {4}, cycles,
        [w]() -> std::unique_ptr<KernelPort> { return std::make_unique<Crc32Model>(w); },
        [w] { return make_crc32_rtl(w); }));
  }
  for (const std::uint32_t w : sum_u64_rtl_widths()) {
    rows.push_back(measure_kernel(
        "sum_u64", w, one, {8}, cycles,
        [w]() -> std::unique_ptr<KernelPort> { return std::make_unique<SumU64Model>(w); },
        [w] { return make_sum_u64_rtl(w); }));
  }
  for (const std::uint32_t w : rx_parser_rtl_widths()) {
    std::vector<RxParserInputs> in(kInputs);
    for (std::size_t c = 0; c < kInputs; ++c) {
      in[c].rst_n = c != 0;
      in[c].in_valid = (rng() % 4) != 0;
      in[c].in = random_beat(rng, w);
      in[c].out_ready = true;
    }
    rows.push_back(measure<RxParserPort, RxParserLockstep>(
        "rx_parser", w, in, cycles,
        [w]() -> std::unique_ptr<RxParserPort> { return std::make_unique<RxParserModel>(w); },
        [w] { return make_rx_parser_rtl(w); }));
  }
  for (const std::uint32_t w : icrc_check_rtl_widths()) {
    std::vector<IcrcCheckInputs> in(kInputs);
    for (std::size_t c = 0; c < kInputs; ++c) {
      in[c].rst_n = c != 0;
      in[c].in_valid = (rng() % 4) != 0;
      in[c].in = random_beat(rng, w);
      for (auto& b : in[c].ip_udp)
        b = static_cast<std::uint8_t>(rng());
      in[c].out_ready = true;
    }
    rows.push_back(measure<IcrcCheckPort, IcrcCheckLockstep>(
        "icrc_check", w, in, cycles,
        [w]() -> std::unique_ptr<IcrcCheckPort> { return std::make_unique<IcrcCheckModel>(w); },
        [w] { return make_icrc_check_rtl(w); }));
  }

  std::printf("%-10s %5s %16s %16s %16s\n", "block", "W", "model cyc/s", "rtl cyc/s",
              "lockstep cyc/s");
  for (const Row& r : rows) {
    const std::string w = r.width == 0 ? "-" : std::to_string(r.width);
    std::printf("%-10s %5s %16.0f %16.0f %16.0f\n", r.block.c_str(), w.c_str(), r.model, r.rtl,
                r.lockstep);
  }
  if (!csv.empty()) {
    std::ofstream f(csv);
    f << "block,width,model_cycles_per_s,rtl_cycles_per_s,lockstep_cycles_per_s\n";
    for (const Row& r : rows) {
      f << r.block << ',' << r.width << ',' << r.model << ',' << r.rtl << ',' << r.lockstep << '\n';
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run(parse_options(argc, argv));
}
