// The golden model of rtl/crc32/crc32.sv: a byte-at-a-time table-driven CRC-32 (the RTL folds
// power-of-two chunks through constant XOR matrices, crc32_pkg), so the two are independent
// implementations.
#include "naa/rtl/crc32.hpp"

#include <array>
#include <bit>
#include <stdexcept>
#include <string>

#include "compare.hpp"

namespace naa::rtl {

namespace {

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k)
      c = (c & 1U) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    t[n] = c;
  }
  return t;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

}  // namespace

Crc32Model::Crc32Model(std::uint32_t width) : width_(width) {
  if (!is_supported_width(width) || width < 4 || !std::has_single_bit(width)) {
    throw std::invalid_argument("crc32: width " + std::to_string(width) +
                                " is not a power of two in 4..64");
  }
}

Crc32Outputs Crc32Model::step(const Crc32Inputs& in) {
  if (!in.rst_n) {
    result_valid_ = false;
    crc_ = ~0U;
  }
  Crc32Outputs o{!result_valid_ || in.out_ready, result_valid_, StreamBeat{}};
  for (int i = 0; i < 4; ++i)
    o.out.data[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(result_ >> (8 * i));
  o.out.keep = 0xF;
  o.out.last = true;
  if (!in.rst_n) return o;

  if (result_valid_ && in.out_ready) result_valid_ = false;
  if (in.in_valid && o.in_ready) {
    // The low popcount(keep) bytes of the beat (keep is a prefix by contract).
    const auto n = static_cast<std::uint32_t>(std::popcount(in.in.keep & keep_mask(width_)));
    std::uint32_t c = crc_;
    for (std::uint32_t i = 0; i < n; ++i)
      c = kTable[(c ^ in.in.data[i]) & 0xFFU] ^ (c >> 8);
    if (in.in.last) {
      result_ = ~c;
      crc_ = ~0U;
      result_valid_ = true;
    } else {
      crc_ = c;
    }
  }
  return o;
}

std::optional<PortMismatch> first_mismatch(const Crc32Port& shape, const Crc32Outputs& expected,
                                           const Crc32Outputs& actual) {
  if (auto m = detail::compare_bool("in_ready", expected.in_ready, actual.in_ready)) return m;
  return detail::compare_stream("out", shape.width(), expected.out_valid, expected.out,
                                actual.out_valid, actual.out);
}

Crc32Lockstep::Crc32Lockstep(std::unique_ptr<Crc32Port> model, std::unique_ptr<Crc32Port> rtl,
                             LockstepChecker::Handler on_divergence)
    : pair_(std::move(model), std::move(rtl), std::move(on_divergence)),
      width_(pair_.model().width()) {
  if (pair_.rtl().width() != width_) throw std::invalid_argument("crc32 lockstep: widths differ");
}

}  // namespace naa::rtl
