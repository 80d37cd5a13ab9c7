#include "naa/impair/injector.hpp"

#include <ostream>

namespace naa::impair {
namespace {

// A uniform draw in [0, 1) from 53 bits.
double unit(std::uint64_t r) {
  return static_cast<double>(r >> 11) * 0x1.0p-53;
}

}  // namespace

std::uint64_t mix_seed(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t direction_seed(std::uint64_t seed, Direction d) noexcept {
  return mix_seed(seed ^ (d == Direction::rx ? 0x5258ULL : 0x5458ULL));  // "RX", "TX"
}

Injector::Decision Injector::decide() {
  ++counters_.seen;
  const std::uint64_t r_loss = rng_(), r_dup = rng_(), r_reorder = rng_(), r_corrupt = rng_(),
                      r_bit = rng_();
  Decision d;
  d.drop = unit(r_loss) < spec_.loss;
  if (d.drop) {
    ++counters_.dropped;
    return d;
  }
  d.duplicate = unit(r_dup) < spec_.dup;
  d.reorder = unit(r_reorder) < spec_.reorder;
  d.corrupt = unit(r_corrupt) < spec_.corrupt;
  d.bit = r_bit;
  counters_.duplicated += d.duplicate ? 1U : 0U;
  counters_.reordered += d.reorder ? 1U : 0U;
  counters_.corrupted += d.corrupt ? 1U : 0U;
  return d;
}

void Injector::report(std::ostream& os, std::string_view prefix) const {
  os << prefix << "datagrams=" << counters_.seen << '\n'
     << prefix << "loss=" << counters_.dropped << '\n'
     << prefix << "dup=" << counters_.duplicated << '\n'
     << prefix << "reorder=" << counters_.reordered << '\n'
     << prefix << "corrupt=" << counters_.corrupted << '\n'
     << prefix << "corrupt_redrawn=" << counters_.redrawn << '\n'
     << prefix << "corrupt_already_bad=" << counters_.already_bad << '\n';
}

}  // namespace naa::impair
