#!/usr/bin/env bash
# Smoke run of naa-bench (tiny sizes): checks the harness, never timing. Usage: smoke.sh NAA_BENCH DIR
set -euo pipefail
bench=$1
out=$2
rm -rf "$out"
fail() { echo "naa-bench smoke: FAIL: $*" >&2; exit 1; }

# Whole output first: `prog | grep -q` fails under pipefail when grep exits before prog has
# written everything (SIGPIPE; seen in CI once the help text grew).
help=$("$bench" --help) || fail "--help exit status"
grep -q '^usage: naa-bench' <<<"$help" || fail "--help"
set +e
"$bench" --no-such-option >/dev/null 2>&1; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "a bad option exits $rc, not 2"

# Addresses: a block of its own (testbench/support/test_addresses.sh) for naa-sim (.1), the
# endpoint (.2) and the UDP baseline (.200/.201).
# shellcheck source=../support/test_addresses.sh
. "$(dirname "$0")/../support/test_addresses.sh"
naa_claim_addresses || fail "no address block"
plot=none
command -v gnuplot >/dev/null 2>&1 && plot=png
"$bench" --net "$NAA_TEST_BLOCK" --max 4K --reps 2 --stream 256K --write-max 64K --sessions 2 --call-size 16K \
  --calls 2 --target-reps 5 --idle-seconds 0.3 --plot "$plot" -q -o "$out"

# header_has FILE COLUMN...: every named column is in the header.
header_has() {
  local f=$1; shift
  local h; h=$(head -1 "$out/$f")
  for col in "$@"; do
    [[ ",$h," == *",$col,"* ]] || fail "$f has no column $col (header: $h)"
  done
}
# positive FILE COLUMN...: the named columns are numbers > 0 on every data line (and there are lines).
positive() {
  local f=$1; shift
  for col in "$@"; do
    awk -F, -v col="$col" -v f="$f" '
      NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
      { n++; if (!($c ~ /^[0-9.eE+-]+$/) || $c + 0 <= 0) { print f ": " col " = \"" $c "\" on line " NR; bad = 1 } }
      END { if (n == 0) { print f ": no data lines"; bad = 1 } exit bad }' "$out/$f" || fail "$f $col"
  done
}

for f in latency.csv latency_naaice.csv stream.csv sessions.csv targets.csv summary.txt; do
  [ -s "$out/$f" ] || fail "$f missing or empty"
done
header_has latency.csv bytes reps setup_s wall_median_s sim_cycles sim_ns transport_cycles \
  memory_cycles kernel_cycles udp_median_s
positive latency.csv bytes setup_s wall_min_s wall_median_s sim_cycles sim_ns transport_cycles \
  memory_cycles kernel_cycles udp_median_s
[ "$(head -1 "$out/latency_naaice.csv")" = "byte_length,setup_time,transfer_time" ] ||
  fail "NAAICE header"
awk -F, 'NR > 1 && (NF != 3 || $1 !~ /^[0-9]+$/ || $2 + 0 <= 0 || $3 + 0 <= 0) { bad = 1 }
         END { exit bad }' "$out/latency_naaice.csv" || fail "NAAICE rows"
# One NAAICE line per call: sizes 1, 2, 3, 5, ... up to 4096, 2 calls each.
lines=$(($(wc -l < "$out/latency_naaice.csv") - 1))
points=$(($(wc -l < "$out/latency.csv") - 1))
[ "$lines" -eq $((2 * points)) ] || fail "NAAICE has $lines lines for $points points x 2 calls"
[ "$(tail -1 "$out/latency.csv" | cut -d, -f1)" = 4096 ] || fail "sweep does not end at --max"
header_has stream.csv write_size wall_gbps sim_goodput_gbps line_rate_goodput_gbps udp_gbps \
  sim_work_cycles_per_wall_s
positive stream.csv write_size wall_gbps sim_ns sim_goodput_gbps line_rate_goodput_gbps udp_gbps \
  transport_cycles memory_cycles sim_work_cycles_per_wall_s
header_has sessions.csv sessions wall_gbps sim_gbps
positive sessions.csv sessions wall_gbps calls_per_s sim_ns sim_gbps
[ "$(tail -1 "$out/sessions.csv" | cut -d, -f1)" = 2 ] || fail "sessions sweep does not reach 2"
for t in "call wall throughput" "nop call latency" "simulated goodput" "simulator speed" \
  "naa-sim idle CPU"; do
  grep -q "$t" "$out/summary.txt" || fail "summary has no '$t'"
done
if [ "$plot" = png ]; then
  for p in latency stream sessions; do [ -s "$out/$p.png" ] || fail "$p.png missing"; done
fi
# --modes: one naa-sim per block mode, a streaming point each, one table (issue 14 item 5). Needs
# a naa-sim built with RTL (its --help says the blocks default to rtl).
sim_help=$("$(dirname "$bench")/naa-sim" --help 2>&1 || true)
if grep -q 'default rtl' <<<"$sim_help"; then
"$bench" --net "$NAA_TEST_BLOCK" --modes model,rtl,lockstep --stream 64K --write-max 16K \
  --idle-seconds 0 --plot none --out "$out/modes" -q >"$out/modes.txt" 2>&1 ||
  { cat "$out/modes.txt"; fail "--modes run"; }
grep -q '^speed per block mode' "$out/modes.txt" || fail "--modes printed no table"
[ "$(head -1 "$out/modes/modes.csv")" = "mode,stream_bytes,wall_gbps,sim_cycles_per_wall_s,ratio" ] ||
  fail "modes.csv header"
[ "$(cut -d, -f1 "$out/modes/modes.csv" | tail -n +2 | tr '\n' ' ')" = "model rtl lockstep " ] ||
  fail "modes.csv rows"
awk -F, 'NR > 1 && ($3 + 0 <= 0 || $4 + 0 <= 0) { bad = 1 } END { exit bad }' \
  "$out/modes/modes.csv" || fail "modes.csv figures not positive"
grep -q "sim_mode=lockstep" "$out/modes/lockstep/env.txt" || fail "lockstep mode's env.txt"
fi
"$bench" --modes fast >/dev/null 2>&1 && fail "--modes fast accepted"
# --what ratios (issue 19): every target as a ratio to raw UDP, in pairs, with the spread.
"$bench" --net "$NAA_TEST_BLOCK" --what ratios --ratios 2 --max 64K --stream 64K --sessions 2 \
  --call-size 16K --calls 1 --target-reps 4 --idle-seconds 0 --plot none -q -o "$out/ratios" ||
  fail "--what ratios run"
[ -s "$out/ratios/ratios.csv" ] || fail "ratios.csv missing"
[ "$(cut -d, -f1 "$out/ratios/ratios.csv" | tail -n +2 | sort -u | tr '\n' ' ')" = \
  "big nop64 sessions1 sessions2 stream4k " ] || fail "ratios.csv targets"
[ "$(($(wc -l < "$out/ratios/ratios.csv") - 1))" = 10 ] || fail "ratios.csv: not 2 pairs of 5 targets"
main_out=$out
out=$main_out/ratios
header_has ratios.csv target pair call_value udp_value unit ratio
positive ratios.csv call_value udp_value ratio
header_has ratio_summary.csv target goal pairs ratio_min ratio_median ratio_max met call_median udp_median unit
positive ratio_summary.csv pairs ratio_min ratio_median ratio_max call_median udp_median
# Floor ratios (issue 31): the UDP minimum round trip per pair, and the call median against the
# run's floor (smallest round trip, best throughput pair).
header_has ratios.csv udp_floor
positive ratios.csv udp_floor
awk -F, 'NR > 1 && $1 == "nop64" && $7 > $4 { print "nop64 pair " $2 ": UDP min " $7 " above its median " $4; bad = 1 }
  END { exit bad }' "$out/ratios.csv" || fail "ratios.csv: a UDP minimum round trip above the median"
header_has floor_summary.csv target floor_goal pairs call_median udp_floor unit floor_ratio met
positive floor_summary.csv pairs call_median udp_floor floor_ratio
[ "$(cut -d, -f1 "$out/floor_summary.csv" | tail -n +2 | sort | tr '\n' ' ')" = \
  "big nop64 sessions1 sessions2 stream4k " ] || fail "floor_summary.csv targets"
awk -F, 'NR > 1 { r = $4 / $5; if (r / $7 > 1.0001 || r / $7 < 0.9999) { print $1 ": floor_ratio " $7 " is not " r; bad = 1 } }
  END { exit bad }' "$out/floor_summary.csv" || fail "floor_summary.csv: floor_ratio is not call_median / udp_floor"
pair_min=$(awk -F, 'NR > 1 && $1 == "nop64" && (m == "" || $7 + 0 < m + 0) { m = $7 } END { print m }' "$out/ratios.csv")
floor_nop=$(awk -F, '$1 == "nop64" { print $5 }' "$out/floor_summary.csv")
[ "$pair_min" = "$floor_nop" ] || fail "nop64 floor $floor_nop is not the smallest pair minimum $pair_min"
out=$main_out
"$bench" --ratios 0 >/dev/null 2>&1 && fail "--ratios 0 accepted"
echo "naa-bench smoke: OK"
