#include "seed.hpp"

#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

namespace naa::testbench {

namespace {

bool g_drawn = false;

std::uint64_t draw() {
  for (const char* name : {"NAA_TEST_SEED", "NAA_RTL_SEED"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return parse_seed(v, name);
  }
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

std::uint64_t parse_seed(std::string_view text, std::string_view variable) {
  const std::string s(text);
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    if (!s.empty() && s[0] != '-' && s[0] != '+' && s[0] != ' ') v = std::stoull(s, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size()) {
    throw std::invalid_argument(std::string(variable) + "=" + s +
                                ": not a seed (a decimal or 0x hex 64-bit number)");
  }
  return v;
}

std::uint64_t test_seed() {
  static const std::uint64_t seed = draw();
  g_drawn = true;
  return seed;
}

std::uint64_t seed_for(std::string_view name) {
  std::uint64_t h = test_seed() ^ 0x9E3779B97F4A7C15ULL;
  for (const char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
  return h;
}

bool test_seed_drawn() {
  return g_drawn;
}

void reset_test_seed_drawn() {
  g_drawn = false;
}

}  // namespace naa::testbench
