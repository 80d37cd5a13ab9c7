// The packet-level drive of a receive-path block (rx_parser, icrc_check): one whole datagram
// through the block's port, W bytes per beat with valid held high, output always ready, then the
// cycles until the result. One template so the blocks share the loop (and its cost: it runs for
// every beat naa-sim's receive path streams, docs/performance.md "RTL in the loop: cost").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "naa/rtl/stream.hpp"

namespace naa::rtl {

// The result of a drive: the port's `out` on the cycle out_valid rose, and the cycles it took.
template <class Result>
struct DatagramDrive {
  Result out{};
  std::uint64_t cycles = 0;  // ceil(size / W) beats (1 if empty) + the cycles to the result
};

// Streams `datagram` through `step` (Outputs step(const Inputs&), one clock cycle each), starting
// from `in` (the block's other inputs already set: in_valid, in, out_ready are driven here).
// Throws std::runtime_error "<block>: ..." if the port stops taking beats or gives no result
// within size / W + 16 cycles (a broken block).
template <class Inputs, class Step>
auto drive_datagram(std::string_view block, std::uint32_t width, Inputs in,
                    std::span<const std::uint8_t> datagram, Step&& step)
    -> DatagramDrive<decltype(step(in).out)> {
  DatagramDrive<decltype(step(in).out)> r;
  const std::uint64_t limit = datagram.size() / width + 16;
  const auto fail = [block](const char* what) {
    return std::runtime_error(std::string(block) + ": " + what);
  };
  in.out_ready = true;
  in.in_valid = true;
  in.in.data = {};  // bytes at and beyond W stay zero; each beat rewrites its own
  std::size_t pos = 0;
  bool sent_last = false;
  while (!sent_last) {
    const std::size_t n = std::min<std::size_t>(width, datagram.size() - pos);
    std::copy_n(datagram.begin() + static_cast<std::ptrdiff_t>(pos), n, in.in.data.begin());
    if (n < width)
      std::fill(in.in.data.begin() + static_cast<std::ptrdiff_t>(n), in.in.data.begin() + width,
                std::uint8_t{0});
    in.in.keep = keep_mask(static_cast<std::uint32_t>(n));
    in.in.last = pos + n == datagram.size();
    const auto o = step(in);
    if (++r.cycles > limit) throw fail("the block stopped taking beats");
    if (o.in_ready) {
      pos += n;
      sent_last = in.in.last;
    }
  }
  in.in_valid = false;
  for (;;) {
    const auto o = step(in);
    if (++r.cycles > limit) throw fail("no result from the block");
    if (o.out_valid) {
      r.out = o.out;
      return r;
    }
  }
}

}  // namespace naa::rtl
