// The one cycle loop every kernel testbench runs: N seeded stream sources feed a block's input
// ports, one seeded sink takes its output port. A block is described by where its stream signals
// live in its Inputs/Outputs structs (StreamPorts), so add_const, vadd_i32, crc32 and any new
// kernel share this loop instead of each copying it.
//
// The draws from the shared Rng happen in a fixed order each cycle (sources' begin_cycle in port
// order, then the sink's, then each source's offered beat in port order, then `extra`), which is
// the order the testbenches used when each had its own loop: the same seed gives the same traffic.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stream_traffic.hpp"

namespace naa::testbench::rtl {

// Where one block's stream signals are: for each input stream its valid and beat (Inputs) and
// its ready (Outputs); for the output stream its ready (Inputs) and valid and beat (Outputs).
template <class Inputs, class Outputs, std::size_t N>
struct StreamPorts {
  struct Input {
    bool Inputs::*valid;
    StreamBeat Inputs::*beat;
    bool Outputs::*ready;
  };
  std::array<Input, N> inputs;
  bool Inputs::*out_ready;
  bool Outputs::*out_valid;
  StreamBeat Outputs::*out;
};

template <class Inputs, class Outputs, std::size_t N>
class BlockDriver {
 public:
  BlockDriver(Rng& rng, std::uint32_t width, const StreamPorts<Inputs, Outputs, N>& ports)
      : ports_(ports), sources_(make_sources(rng)), sink_(rng, width) {}

  StreamSource& source(std::size_t i = 0) { return sources_[i]; }
  StreamSink& sink() { return sink_; }
  // The sources' and the sink's rates for one phase of a random run.
  void set_phase(const Phase& phase) {
    for (auto& s : sources_)
      s.set_rate(phase.p_valid);
    sink_.set_rate(phase.p_ready);
  }

  // One clock cycle out of reset: offer the sources' beats, let `extra(in)` set the block's other
  // inputs, step `dut`, retire what it accepted and hand the output to the sink. Returns false if
  // the output broke the valid/ready rules (StreamSink::end_cycle).
  template <class Dut, class Extra>
  bool cycle(Dut& dut, Inputs& in, Extra&& extra) {
    for (auto& s : sources_)
      s.begin_cycle();
    sink_.begin_cycle();
    in.rst_n = true;
    for (std::size_t i = 0; i < N; ++i) {
      in.*(ports_.inputs[i].valid) = sources_[i].valid();
      in.*(ports_.inputs[i].beat) = sources_[i].beat();
    }
    extra(in);
    in.*(ports_.out_ready) = sink_.ready();
    const Outputs out = dut.step(in);
    for (std::size_t i = 0; i < N; ++i)
      sources_[i].end_cycle(out.*(ports_.inputs[i].ready));
    return sink_.end_cycle(out.*(ports_.out_valid), out.*(ports_.out));
  }
  template <class Dut>
  bool cycle(Dut& dut, Inputs& in) {
    return cycle(dut, in, [](Inputs&) {});
  }

 private:
  std::vector<StreamSource> make_sources(Rng& rng) {
    std::vector<StreamSource> s;
    s.reserve(N);
    for (std::size_t i = 0; i < N; ++i)
      s.emplace_back(rng);
    return s;
  }

  StreamPorts<Inputs, Outputs, N> ports_;
  std::vector<StreamSource> sources_;
  StreamSink sink_;
};

}  // namespace naa::testbench::rtl
