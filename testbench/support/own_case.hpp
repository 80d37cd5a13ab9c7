// Runs one test case of the current test program in a child process, for tests of what makes a
// test case fail (the naa-sim fixture's end-of-test check): the parent asserts that the child
// failed, and failed for the stated reason, where Catch2's [!shouldfail] would accept any failure
// (naa-sim not starting included).
#pragma once

#include <string>

namespace naa::testbench {

struct OwnCaseRun {
  int exit_code = -1;  // Catch2's: the number of failed test cases; -1 if killed by a signal
  std::string output;  // stdout and stderr
};

// Runs this program (/proc/self/exe) with the test case named `name` (usually hidden, tag [.]
// so that CTest never registers it): the name must hold no Catch2 test-spec characters (, [ ] *
// ~ ").
OwnCaseRun run_own_case(const std::string& name);

}  // namespace naa::testbench
