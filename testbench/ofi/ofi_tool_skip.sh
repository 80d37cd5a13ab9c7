#!/bin/sh
# fi_rxm.sh and mpi_ofi.sh without their tools (a PATH with no fi_pingpong, fi_info, mpirun): exit
# 77, which CTest reports "Skipped", and 1 when NAA_REQUIRE_TOOLS=1 (.ci/run).
# Usage: ofi_tool_skip.sh SCRIPT_DIR LIBDIR
set -u
dir=$1 libdir=$2
empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT
status=0
for args in "fi_rxm.sh rdm msg $libdir" "fi_rxm.sh params $libdir" "mpi_ofi.sh 2 $libdir /nonexistent"; do
  set -- $args
  script=$1
  shift
  out=$(env PATH="$empty" NAA_REQUIRE_TOOLS= /bin/bash "$dir/$script" "$@" 2>&1)
  rc=$?
  echo "$args without the tool: exit $rc (want 77): $out"
  [ $rc -eq 77 ] && echo "$out" | grep -q '^SKIPPED: ' || { echo "FAIL: $args"; status=1; }
  out=$(env PATH="$empty" NAA_REQUIRE_TOOLS=1 /bin/bash "$dir/$script" "$@" 2>&1)
  rc=$?
  echo "$args without the tool, NAA_REQUIRE_TOOLS=1: exit $rc (want 1): $out"
  [ $rc -eq 1 ] || { echo "FAIL: $args with NAA_REQUIRE_TOOLS=1"; status=1; }
done
exit $status
