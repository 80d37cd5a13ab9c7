#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <iostream>

#include "seed.hpp"

namespace {

// Prints the seed of a failed randomised test case (testbench/README.md "Seeds").
struct SeedListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& /*info*/) override {
    naa::testbench::reset_test_seed_drawn();
  }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (naa::testbench::test_seed_drawn() && !stats.totals.assertions.allOk()) {
      std::cout << "\"" << stats.testInfo.name
                << "\" failed with NAA_TEST_SEED=" << naa::testbench::test_seed()
                << " (set it in the environment to repeat this run)" << std::endl;
    }
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(SeedListener)
