#!/usr/bin/env bash
# The calibrated co-simulation against the NAAICE FPGA's published measurements (issue 15 item 4,
# docs/sim/calibration.md): naa-cosim --calibrated --naaice-sweep up to 4 MiB writes the NAAICE
# CSV form and its mean relative deviation from the FPGA's means stays within a modest bound.
# Simulated time is deterministic: this is no wall-clock assertion.
# Usage: naaice_deviation.sh <naa-cosim> <reference csv> <work dir>
set -euo pipefail
cosim=$1
ref=$2
dir=$3
mkdir -p "$dir"
out=$("$cosim" --calibrated --naaice-sweep "$dir/latency_naaice.csv" --max 4M --reference "$ref" 2>&1) ||
  { echo "FAILED: naa-cosim exited $?: $out"; exit 1; }
echo "$out" | grep -v SystemC | grep -v Copyright | grep -v RESERVED
[ "$(head -1 "$dir/latency_naaice.csv")" = "byte_length,setup_time,transfer_time" ] ||
  { echo "FAILED: not the NAAICE CSV header"; exit 1; }
lines=$(($(wc -l <"$dir/latency_naaice.csv") - 1))
[ "$lines" -eq 38 ] || { echo "FAILED: $lines sizes, expected the 38 reference sizes up to 4 MiB"; exit 1; }
dev=$(echo "$out" | awk '/all up to 64 MiB/ {print $NF}')
[ -n "$dev" ] || { echo "FAILED: no deviation line"; exit 1; }
awk -v d="$dev" 'BEGIN { exit !(d <= 0.15) }' || { echo "FAILED: deviation $dev > 0.15"; exit 1; }
echo "PASSED: mean relative deviation $dev over $lines sizes (bound 0.15)"
