#!/bin/sh
# fi_tools.sh without libfabric-bin (a PATH with no fi_info / fi_pingpong): exit 77, which CTest
# reports "Skipped", and 1 when NAA_REQUIRE_TOOLS=1 (.ci/run). Usage: tool_skip.sh FI_TOOLS LIBDIR
set -u
tools=$1 libdir=$2
empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT
status=0
for mode in info pingpong; do
  out=$(env PATH="$empty" NAA_REQUIRE_TOOLS= /bin/bash "$tools" $mode "$libdir" 2>&1)
  rc=$?
  echo "$mode without the tool: exit $rc (want 77): $out"
  [ $rc -eq 77 ] && echo "$out" | grep -q '^SKIPPED: fi_' || { echo "FAIL: $mode"; status=1; }
  out=$(env PATH="$empty" NAA_REQUIRE_TOOLS=1 /bin/bash "$tools" $mode "$libdir" 2>&1)
  rc=$?
  echo "$mode without the tool, NAA_REQUIRE_TOOLS=1: exit $rc (want 1): $out"
  [ $rc -eq 1 ] || { echo "FAIL: $mode with NAA_REQUIRE_TOOLS=1"; status=1; }
done
exit $status
