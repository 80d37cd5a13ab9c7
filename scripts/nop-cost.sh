#!/usr/bin/env bash
# naa-sim's instructions per 64 B nop call over UDP (issue 31 goal: at most a third of 45 k):
# naa-sim under callgrind, `naa-call --fn nop -n N -b gen:64 -q` against it, once with N1 and once
# with N2 calls; the difference of the two profiles divided by N2 - N1 cancels start-up,
# elaboration and connection set-up. Prints the total per call, each bucket of own instructions
# per call (the buckets of cost-per-packet.sh, scripts/cost-buckets.awk), the SystemC calls per
# call (activations, notifications) and the functions that cost most per call.
#
#   scripts/nop-cost.sh BUILD_DIR [N1 N2 [IP_PREFIX [TOP]]]
#   default: 100 600 127.43.7 25; naa-sim listens on IP_PREFIX.1, naa-call binds IP_PREFIX.2
#   (pick a /24 under 127/8 that nothing else on the machine uses). NAA_COST_KEEP=DIR keeps the
#   profiles (DIR/cg.N1, DIR/cg.N2; with several runs DIR/run.K/...) for callgrind_annotate.
#   NAA_COST_RUNS=R (default 1) measures R times: each run's total, their median, and the mean
#   of the buckets, counters and functions.
#
# callgrind counts are exact, but naa-sim's runner serves the wall clock between datagrams
# (whether the next one is already in the socket, how many sc_start turns the model takes), so
# two runs of one binary differ by up to ~400 instructions per call: compare medians of runs.
set -euo pipefail
build=${1:?usage: nop-cost.sh BUILD_DIR [N1 N2 [IP_PREFIX [TOP]]]}
n1=${2:-100}
n2=${3:-600}
ip=${4:-127.43.7}
top=${5:-25}
runs=${NAA_COST_RUNS:-1}
here=$(cd "$(dirname "$0")" && pwd)
sim="$build/bin/naa-sim"
call="$build/bin/naa-call"
command -v valgrind >/dev/null || { echo "nop-cost: valgrind missing" >&2; exit 77; }
[ -x "$sim" ] && [ -x "$call" ] || { echo "nop-cost: $sim or $call missing (build naa-sim naa-call)" >&2; exit 2; }
[ "$n2" -gt "$n1" ] || { echo "nop-cost: N2 ($n2) must be larger than N1 ($n1)" >&2; exit 2; }
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "nop-cost: NAA_COST_RUNS must be a positive number" >&2; exit 2; }
if ss -Hlun "src $ip.1" | grep -q .; then
  echo "nop-cost: something already listens on $ip.1; choose another IP_PREFIX" >&2
  exit 2
fi
top_dir=${NAA_COST_KEEP:-$(mktemp -d /tmp/nop-cost.XXXXXX)}
mkdir -p "$top_dir"
[ -n "${NAA_COST_KEEP:-}" ] || trap 'rm -rf "$top_dir"' EXIT

profile() {  # N -> $work/cg.N, .total, .buckets, .calls, .functions
  local n=$1 vp i
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$n" "$sim" --listen "$ip.1" \
    >"$work/sim.$n.out" 2>"$work/sim.$n.err" &
  vp=$!
  for i in $(seq 1 300); do  # naa-sim under valgrind takes a few seconds to bind
    ss -Hlun "src $ip.1" | grep -q . && break
    kill -0 "$vp" 2>/dev/null || { cat "$work/sim.$n.err" >&2; exit 1; }
    sleep 0.1
  done
  if ! "$call" -a "$ip.1" -l "$ip.2" --fn nop -n "$n" -b gen:64 -q >"$work/call.$n.out" 2>&1; then
    cat "$work/call.$n.out" >&2
    kill -INT "$vp"
    wait "$vp" || true
    echo "nop-cost: naa-call -n $n failed" >&2
    exit 1
  fi
  kill -INT "$vp"
  wait "$vp" || true
  callgrind_annotate "$work/cg.$n" 2>/dev/null |
    awk '/PROGRAM TOTALS/ { v = $1; gsub(",", "", v); print v }' >"$work/$n.total"
  callgrind_annotate --inclusive=no --threshold=100 --auto=no "$work/cg.$n" 2>/dev/null \
    >"$work/$n.annotate"
  awk -f "$here/cost-buckets.awk" "$work/$n.annotate" >"$work/$n.buckets"
  awk -f "$here/cost-calls.awk" "$work/cg.$n" >"$work/$n.calls"
  # "instructions<TAB>function" (object and file path dropped), one line per function.
  awk '/PROGRAM TOTALS/ { next }
    /^ *[0-9,]+ +\( *[0-9.]+%\) / {
      v = $1; gsub(",", "", v); f = $0
      sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", f); sub(/^[^:]*:/, "", f); sub(/ \[[^]]*\]$/, "", f)
      s[f] += v }
    END { for (f in s) printf "%s\t%d\n", f, s[f] }' "$work/$n.annotate" >"$work/$n.functions"
}
d=$((n2 - n1))
per_call() {  # file -> "name<TAB>per call" of this run
  join -t $'\t' -a1 -a2 -e 0 -o 0,1.2,2.2 <(sort -t $'\t' -k1,1 "$work/$n1.$1") \
    <(sort -t $'\t' -k1,1 "$work/$n2.$1") |
    awk -F'\t' -v c="$d" '{ printf "%s\t%.4f\n", $1, ($3 - $2) / c }'
}
rm -f "$top_dir"/all.*
totals=()
for r in $(seq 1 "$runs"); do
  work=$top_dir
  [ "$runs" -eq 1 ] || work=$top_dir/run.$r
  mkdir -p "$work"
  profile "$n1"
  profile "$n2"
  totals+=($((($(cat "$work/$n2.total") - $(cat "$work/$n1.total")) / d)))
  for f in buckets calls functions; do per_call "$f" >>"$top_dir/all.$f"; done
done
mean_per_call() {  # file -> "name<TAB>mean per call over the runs", largest first
  awk -F'\t' -v r="$runs" '{ s[$1] += $2 } END { for (k in s) printf "%s\t%.2f\n", k, s[k] / r }' \
    "$top_dir/all.$1" | sort -t $'\t' -k2,2 -g -r
}
median=$(printf '%s\n' "${totals[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "naa-sim, naa-call --fn nop -b gen:64: -n $n2 minus -n $n1 = $d calls, $runs run(s)"
printf "%-40s %10s\n" "instructions per call" "$median"
[ "$runs" -eq 1 ] || printf "%-40s %s\n" "  each run" "${totals[*]}"
printf "%-40s %10s\n" "bucket (own instructions)" "per call"
mean_per_call buckets | awk -F'\t' '{ printf "%-40s %10.0f\n", $1, $2 }'
mean_per_call calls | awk -F'\t' '{ printf "%-40s %10.2f\n", $1, $2 }'
echo "top $top functions (own instructions per call)"
mean_per_call functions | head -n "$top" | awk -F'\t' '{ printf "%10.0f  %s\n", $2, substr($1, 1, 150) }'
