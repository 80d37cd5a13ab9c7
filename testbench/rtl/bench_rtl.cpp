// naa-rtl-bench: simulated cycles per wall second of every RTL block as the C++ model, as the
// Verilated RTL and as a lockstep pair, on the same pre-generated random inputs (valid and payload
// random every cycle; input generation is not timed). The inputs are open loop, so they keep the
// stream rule the RTL asserts (rtl/prim/naa_stream_assert.sv: a waiting beat stays) by never
// making a beat wait: outputs always ready, and vadd_i32's a and b valid together.
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
#include <string>
#include <vector>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/crc32.hpp"
#include "naa/rtl/crc32_rtl.hpp"
#include "naa/rtl/icrc_check.hpp"
#include "naa/rtl/icrc_check_rtl.hpp"
#include "naa/rtl/mr_table.hpp"
#include "naa/rtl/mr_table_rtl.hpp"
#include "naa/rtl/rx_parser.hpp"
#include "naa/rtl/rx_parser_rtl.hpp"
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
  for (const std::uint32_t w : add_const_rtl_widths()) {
    std::vector<AddConstInputs> in(kInputs);
    for (std::size_t c = 0; c < kInputs; ++c) {
      in[c].rst_n = c != 0;
      in[c].in_valid = (rng() % 4) != 0;
      in[c].in = random_beat(rng, w);
      in[c].addend = 1;
      in[c].out_ready = true;
    }
    rows.push_back(measure<AddConstPort, AddConstLockstep>(
        "add_const", w, in, cycles,
        [w]() -> std::unique_ptr<AddConstPort> { return std::make_unique<AddConstModel>(w); },
        [w] { return make_add_const_rtl(w); }));
  }
  for (const std::uint32_t w : vadd_i32_rtl_widths()) {
    std::vector<VaddI32Inputs> in(kInputs);
    for (std::size_t c = 0; c < kInputs; ++c) {
      in[c].rst_n = c != 0;
      in[c].a_valid = (rng() % 4) != 0;
      in[c].a = random_beat(rng, w);
      in[c].b_valid = in[c].a_valid;
      in[c].b = random_beat(rng, w);
      in[c].out_ready = true;
    }
    rows.push_back(measure<VaddI32Port, VaddI32Lockstep>(
        "vadd_i32", w, in, cycles,
        [w]() -> std::unique_ptr<VaddI32Port> { return std::make_unique<VaddI32Model>(w); },
        [w] { return make_vadd_i32_rtl(w); }));
  }
  for (const std::uint32_t w : crc32_rtl_widths()) {
    std::vector<Crc32Inputs> in(kInputs);
    for (std::size_t c = 0; c < kInputs; ++c) {
      in[c].rst_n = c != 0;
      in[c].in_valid = (rng() % 4) != 0;
      in[c].in = random_beat(rng, w);
      in[c].out_ready = true;
    }
    rows.push_back(measure<Crc32Port, Crc32Lockstep>(
        "crc32", w, in, cycles,
        [w]() -> std::unique_ptr<Crc32Port> { return std::make_unique<Crc32Model>(w); },
        [w] { return make_crc32_rtl(w); }));
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
