#!/bin/sh
# Lints every RTL block (rtl/sv/<block>.sv, with rtl/sv/<block>_pkg.sv if present) with
# `verilator --lint-only -Wall` and its waivers rtl/lint/<block>.vlt, at stream widths 4, 16 and 64
# for blocks with a W parameter (and 1 for add_const, Verilated at W = 1 too), and the
# NAA_MR_TABLE_BROKEN variant. Any output is a failure.
# Then checks that the elaboration-time parameter checks really reject bad widths.
# Usage: lint.sh [verilator]      (the CTest test "rtl_lint" runs it)
set -u
here=$(cd "$(dirname "$0")" && pwd)
sv=$(cd "$here/../sv" && pwd)
verilator=${1:-verilator}
failed=0

# lint <label> <verilator arguments...>
lint() {
  label=$1
  shift
  out=$("$verilator" --lint-only -Wall "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
    echo "FAIL  $label"
    echo "$out"
    failed=1
  else
    echo "ok    $label"
  fi
}

# reject <label> <expected message> <verilator arguments...>: elaboration must fail with the message.
reject() {
  label=$1
  want=$2
  shift 2
  out=$("$verilator" --lint-only -Wall "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] && printf '%s' "$out" | grep -q "$want"; then
    echo "ok    $label (rejected)"
  else
    echo "FAIL  $label: expected an elaboration error containing '$want' (rc $rc)"
    echo "$out"
    failed=1
  fi
}

blocks=0
for file in "$sv"/*.sv; do
  block=$(basename "$file" .sv)
  case $block in *_pkg) continue ;; esac
  blocks=$((blocks + 1))
  waiver="$here/$block.vlt"
  if [ ! -f "$waiver" ]; then
    echo "FAIL  $block: no waiver file $waiver (create it, empty if no waiver is needed)"
    failed=1
    continue
  fi
  sources="$file"
  [ -f "$sv/${block}_pkg.sv" ] && sources="$sv/${block}_pkg.sv $file"
  if grep -q "parameter int unsigned W\b" "$file"; then
    for w in 1 4 16 64; do
      # W = 1 only where the block allows it (add_const; the others reject it, checked below).
      if [ "$w" -eq 1 ] && [ "$block" != add_const ]; then continue; fi
      # shellcheck disable=SC2086
      lint "$block W=$w" --top-module "$block" -GW=$w "$waiver" $sources
    done
  else
    # shellcheck disable=SC2086
    lint "$block" --top-module "$block" "$waiver" $sources
  fi
done

lint "mr_table NAA_MR_TABLE_BROKEN" --top-module mr_table +define+NAA_MR_TABLE_BROKEN \
  "$here/mr_table.vlt" "$sv/mr_table_pkg.sv" "$sv/mr_table.sv"

reject "add_const W=0" "W must be at least 1" --top-module add_const -GW=0 "$sv/add_const.sv"
reject "vadd_i32 W=6" "W must be a positive multiple of 4" --top-module vadd_i32 -GW=6 \
  "$sv/vadd_i32.sv"
reject "crc32 W=12" "W must be a power of two" --top-module crc32 -GW=12 "$sv/crc32.sv"
reject "crc32 W=2" "W must be a power of two" --top-module crc32 -GW=2 "$sv/crc32.sv"

if [ "$blocks" -eq 0 ]; then
  echo "FAIL  no RTL blocks found in $sv"
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  echo "rtl lint: FAILED"
  exit 1
fi
echo "rtl lint: $blocks blocks clean"
