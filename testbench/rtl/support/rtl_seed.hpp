// Seeds for randomised RTL testbenches: the test seed of testbench/support/seed.hpp
// (NAA_TEST_SEED, with NAA_RTL_SEED kept as an alias; random when unset), printed so a failing run
// can be repeated exactly (STYLE.md "Randomised tests print their seed").
#pragma once

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <string_view>

#include "seed.hpp"

namespace naa::testbench::rtl {

using namespace naa::rtl;  // the blocks under test and their port types

using Rng = std::mt19937_64;

// The run's seed: NAA_TEST_SEED (or NAA_RTL_SEED; decimal or 0x hex) or a fresh random one.
inline std::uint64_t run_seed() {
  return naa::testbench::test_seed();
}

// A generator for one test case: the run seed mixed with the test's name, so test cases do not
// depend on which others ran. Prints how to reproduce.
inline Rng seeded_rng(std::string_view test) {
  const std::uint64_t seed = run_seed();
  std::cout << "[" << test << "] NAA_TEST_SEED=" << seed << " (set it to reproduce this run)\n";
  std::uint64_t h = seed ^ 0x9E3779B97F4A7C15ULL;
  for (const char c : test)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
  return Rng(h);
}

inline bool chance(Rng& rng, double p) {
  return std::bernoulli_distribution(p)(rng);
}

template <class T>
T uniform(Rng& rng, T lo, T hi) {
  return std::uniform_int_distribution<T>(lo, hi)(rng);
}

}  // namespace naa::testbench::rtl
