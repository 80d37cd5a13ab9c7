// The seed of randomised tests (testbench/README.md "Seeds"): NAA_TEST_SEED from the environment
// (decimal or 0x hex) or, when unset, a fresh random one. One seed per test process; a test that
// needs several streams derives them from it (seed + k, or seed_for("name")). Any test case that
// drew the seed and failed prints "NAA_TEST_SEED=<seed>" (the listener in catch_main.cpp), so the
// failing run can be repeated exactly.
#pragma once

#include <cstdint>
#include <string_view>

namespace naa::testbench {

// NAA_TEST_SEED, or its alias NAA_RTL_SEED (the RTL testbenches' former name), or a random
// seed. A malformed value throws std::invalid_argument naming the variable.
std::uint64_t test_seed();

// test_seed() mixed with a name (FNV-1a), for independent streams that do not depend on which
// other test cases ran before.
std::uint64_t seed_for(std::string_view name);

// Whether the current test case has drawn the seed (reset at each test case's start).
bool test_seed_drawn();
void reset_test_seed_drawn();

// Parses a seed as NAA_TEST_SEED is parsed (decimal or 0x hex, the whole string); throws
// std::invalid_argument on anything else.
std::uint64_t parse_seed(std::string_view text, std::string_view variable);

}  // namespace naa::testbench
