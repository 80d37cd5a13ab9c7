#!/bin/sh
# Lints every RTL block with `verilator --lint-only -Wall`, its waivers and the shared primitives
# (rtl/prim/), as registered by naa_rtl_block() (cmake/NaaRtlBlock.cmake) in a manifest: each
# Verilated and linted width, each variant. Any output is a failure. Then checks that the
# elaboration-time parameter checks really reject the widths the blocks list as bad.
# Usage: lint.sh <verilator> <build>/rtl/lint_manifest.txt      (the CTest test "rtl_lint")
set -u
verilator=${1:?usage: lint.sh <verilator> <lint_manifest.txt>}
manifest=${2:?usage: lint.sh <verilator> <lint_manifest.txt>}
failed=0
if [ ! -r "$manifest" ]; then
  echo "FAIL  cannot read the lint manifest $manifest"
  echo "rtl lint: FAILED"
  exit 1
fi

blocks=""
# Manifest line: kind|label|top|W|define|waiver|sources (kind: lint, or reject:<message>).
# synth|... lines are scripts/synth.sh's (cmake/NaaRtlBlock.cmake).
while IFS='|' read -r kind label top w define waiver sources; do
  case $kind in '#'*|''|synth) continue ;; esac
  set -- --top-module "$top"
  [ -n "$w" ] && set -- "$@" "-GW=$w"
  [ -n "$define" ] && set -- "$@" "+define+$define"
  if [ ! -f "$waiver" ]; then
    echo "FAIL  $label: no waiver file $waiver (create it, empty if no waiver is needed)"
    failed=1
    continue
  fi
  # shellcheck disable=SC2086
  out=$("$verilator" --lint-only -Wall "$@" "$waiver" $sources 2>&1)
  rc=$?
  case $kind in
    lint)
      case " $blocks " in *" $top "*) ;; *) blocks="$blocks $top" ;; esac
      if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
        echo "FAIL  $label"
        echo "$out"
        failed=1
      else
        echo "ok    $label"
      fi
      ;;
    reject:*)
      want=${kind#reject:}
      if [ "$rc" -ne 0 ] && printf '%s' "$out" | grep -q "$want"; then
        echo "ok    $label (rejected)"
      else
        echo "FAIL  $label: expected an elaboration error containing '$want' (rc $rc)"
        echo "$out"
        failed=1
      fi
      ;;
  esac
done < "$manifest"

count=$(echo "$blocks" | wc -w)
if [ "$count" -eq 0 ]; then
  echo "FAIL  no RTL blocks in $manifest"
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  echo "rtl lint: FAILED"
  exit 1
fi
echo "rtl lint: $count blocks clean"
