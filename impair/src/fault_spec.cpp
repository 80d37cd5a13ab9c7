#include "naa/impair/fault_spec.hpp"

#include <charconv>
#include <cstdlib>
#include <string>

namespace naa::impair {

bool parse_fault_key(std::string_view text, FaultKey& out) {
  if (text == "sequence") {
    out = FaultKey::sequence;
  } else if (text == "packet") {
    out = FaultKey::packet;
  } else {
    return false;
  }
  return true;
}

bool parse_fault_spec(std::string_view text, FaultSpec& out, std::string* error) {
  FaultSpec spec;
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
    if (eq == std::string_view::npos) {
      return fail("expected key=value, got '" + std::string(item) + "'");
    }
    const std::string key(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    if (key == "key") {
      if (!parse_fault_key(value, spec.key)) {
        return fail("key must be sequence or packet, not '" + value + "'");
      }
      continue;
    }
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
      return fail("unknown fault '" + key + "' (loss, dup, reorder, reorder-delay, corrupt, key)");
    }
  }
  out = spec;
  return true;
}

}  // namespace naa::impair
