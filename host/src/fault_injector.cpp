#include "fault_injector.hpp"

#include <charconv>
#include <cstdlib>
#include <string>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/icrc.hpp"

namespace naa::host {

bool parse_fault_options(std::string_view text, FaultOptions& out, std::string* error) {
  FaultOptions spec;
  auto fail = [&](std::string why) {
    if (error != nullptr) *error = std::move(why);
    return false;
  };
  if (text.empty() || text == "none") {
    out = spec;
    return true;
  }
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return fail("expected key=value, got '" + std::string(item) + "'");
    const std::string key(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    if (key == "reorder-delay") {
      unsigned v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc{} || end != value.data() + value.size() || v < 1 || v > 1024) {
        return fail("reorder-delay must be 1..1024 datagrams, not '" + value + "'");
      }
      spec.reorder_delay = v;
      continue;
    }
    char* end = nullptr;
    const double p = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(p >= 0.0 && p <= 1.0)) {
      return fail("probability for " + key + " must be in [0, 1], not '" + value + "'");
    }
    if (key == "loss") {
      spec.loss = p;
    } else if (key == "dup") {
      spec.dup = p;
    } else if (key == "reorder") {
      spec.reorder = p;
    } else if (key == "corrupt") {
      spec.corrupt = p;
    } else {
      return fail("unknown fault '" + key + "' (loss, dup, reorder, reorder-delay, corrupt)");
    }
  }
  out = spec;
  return true;
}

namespace detail {
namespace {

double unit(std::uint64_t r) {
  return static_cast<double>(r >> 11) * 0x1.0p-53;
}

}  // namespace

std::uint64_t FaultInjector::mix_seed(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

FaultInjector::Decision FaultInjector::decide() {
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

void FaultInjector::corrupt(std::uint8_t* data, std::size_t size, const protocol::Ipv4UdpHeaders& h,
                            std::uint64_t bit) {
  if (size == 0) return;
  const std::uint64_t bits = std::uint64_t{size} * 8;
  for (std::uint64_t attempt = 0; attempt < 16; ++attempt) {
    const std::uint64_t b = (bit + attempt * 0x9E3779B1U) % bits;
    data[b / 8] ^= static_cast<std::uint8_t>(1U << (b % 8));
    if (size < protocol::kBthSize + protocol::kIcrcSize ||
        !protocol::recover_ipv4_id(h, {data, size})) {
      return;
    }
    data[b / 8] ^= static_cast<std::uint8_t>(1U << (b % 8));
    ++counters_.redrawn;
  }
}

}  // namespace detail
}  // namespace naa::host
