#!/bin/sh
# Issue 12 finding 11: a test whose tool is missing reports "Skipped" (never "Passed"), and fails
# when NAA_REQUIRE_TOOLS=1 (.ci/run). tshark is hidden by running with a PATH that has no tshark.
#   1. testbench/host/interop/pcap_decodes.sh: exit 77 (SKIP_RETURN_CODE), 1 when required;
#   2. sim_integration's pcap test (when its binary is given): prints "NAA_SKIP:" (CTest's
#      SKIP_REGULAR_EXPRESSION) and passes its own checks, and fails when required.
# Usage: tool_skips.sh SOURCE_DIR [SIM_INTEGRATION_BINARY]
set -u
src=$1 sim_tests=${2:-}
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
status=0
expect() {  # expect WHAT WANT_EXIT GOT_EXIT OUTPUT [WANT_TEXT]
  echo "$1: exit $3 (want $2)"
  echo "$4" | tail -5 | sed 's/^/    /'
  [ "$3" -eq "$2" ] || { echo "FAIL: $1"; status=1; }
  [ -z "${5:-}" ] || echo "$4" | grep -q "$5" || { echo "FAIL: $1 does not say '$5'"; status=1; }
}
decodes=$src/testbench/host/interop/pcap_decodes.sh
out=$(env PATH="$empty" NAA_REQUIRE_TOOLS= /bin/sh "$decodes" /bin/false /bin/false "$empty/d" 2>&1)
expect "pcap_decodes.sh without tshark" 77 $? "$out" "SKIPPED: tshark"
out=$(env PATH="$empty" NAA_REQUIRE_TOOLS=1 /bin/sh "$decodes" /bin/false /bin/false "$empty/d" 2>&1)
expect "pcap_decodes.sh without tshark, NAA_REQUIRE_TOOLS=1" 1 $? "$out"
if [ -n "$sim_tests" ]; then
  # The test process claims an address block of its own (testbench/support/test_addresses.hpp),
  # so it may run beside the same test case under ctest -j.
  name="the pcap of a full session verifies and decodes in tshark without errors"
  out=$(env PATH="$empty" NAA_REQUIRE_TOOLS= "$sim_tests" "$name" 2>&1)
  expect "sim_integration pcap test without tshark" 0 $? "$out" "NAA_SKIP: tshark not found"
  out=$(env PATH="$empty" NAA_REQUIRE_TOOLS=1 "$sim_tests" "$name" 2>&1)
  rc=$?
  [ "$rc" -ne 0 ] && rc=1
  expect "sim_integration pcap test without tshark, NAA_REQUIRE_TOOLS=1" 1 $rc "$out"
fi
exit $status
