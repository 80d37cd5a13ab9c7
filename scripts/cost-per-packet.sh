#!/usr/bin/env bash
# Instructions per call and per datagram, by block (issue 31, docs/performance.md "Cost per
# packet"): naa-cosim (the host library and the NAA model in one process, no sockets, so the
# count is exact and repeatable) under callgrind, twice with different numbers of calls; the
# difference divided by the extra calls (or datagrams) cancels start-up and connection set-up.
# Each function's own instructions (exclusive) go to one bucket by its name: the model's blocks,
# the SystemC kernel, the host library, protocol code (ICRC, headers), memcpy/memset, malloc.
#
#   scripts/cost-per-packet.sh BUILD_DIR [N1 N2 [naa-cosim arguments...]]
#   default: --fn nop --in gen:64 -n 50 and -n 250 (a 64 B nop call)
set -euo pipefail
build=${1:?usage: cost-per-packet.sh BUILD_DIR [N1 N2 [naa-cosim args...]]}
n1=${2:-50}
n2=${3:-250}
shift $(($# < 3 ? $# : 3))
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--fn nop --in gen:64)
cosim="$build/bin/naa-cosim"
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "cost-per-packet: valgrind missing" >&2; exit 77; }
work=$(mktemp -d /tmp/cost-per-packet.XXXXXX)
trap 'rm -rf "$work"' EXIT

profile() {  # N -> $work/N.buckets (bucket instructions), $work/N.stats
  local n=$1
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$n" "$cosim" "${args[@]}" -n "$n" \
    --stats -q >"$work/$n.stats" 2>"$work/$n.err"
  callgrind_annotate --inclusive=no --threshold=100 --auto=no "$work/cg.$n" 2>/dev/null |
    awk -f "$here/cost-buckets.awk" >"$work/$n.buckets"
  awk -f "$here/cost-calls.awk" "$work/cg.$n" >"$work/$n.calls"
  callgrind_annotate "$work/cg.$n" 2>/dev/null | awk '/PROGRAM TOTALS/ { v = $1; gsub(",", "", v); print v }' \
    >"$work/$n.total"
}
profile "$n1"
profile "$n2"
stat() { grep -m1 "^$2=" "$work/$1.stats" | cut -d= -f2 || echo 0; }
datagrams() { echo $(($(stat "$1" net_port.rx_datagrams) + $(stat "$1" net_port.tx_datagrams))); }
dcalls=$((n2 - n1))
ddg=$(($(datagrams "$n2") - $(datagrams "$n1")))
[ "$ddg" -gt 0 ] || ddg=1
echo "naa-cosim ${args[*]}: -n $n2 minus -n $n1 = $dcalls calls, $ddg datagrams (received + sent by the NAA)"
printf "%-36s %14s %12s\n" "bucket (own instructions)" "per call" "per datagram"
t1=$(cat "$work/$n1.total")
t2=$(cat "$work/$n2.total")
join -t $'\t' -a1 -a2 -e 0 -o 0,1.2,2.2 <(sort "$work/$n1.buckets") <(sort "$work/$n2.buckets") |
  awk -F'\t' -v c="$dcalls" -v d="$ddg" '{ x = $3 - $2; printf "%-36s %14.0f %12.0f\n", $1, x / c, x / d }' |
  sort -t$'\t' -k1,1
printf "%-36s %14.0f %12.0f\n" "total" "$(((t2 - t1) / dcalls))" "$(((t2 - t1) / ddg))"
join -t $'\t' -a1 -a2 -e 0 -o 0,1.2,2.2 <(sort "$work/$n1.calls") <(sort "$work/$n2.calls") |
  awk -F'\t' -v c="$dcalls" -v d="$ddg" '{ x = $3 - $2; printf "%-36s %14.2f %12.2f\n", $1, x / c, x / d }'
for k in activity.delta_cycles activity.time_steps activity.sc_start_calls; do
  grep -q "^$k=" "$work/$n2.stats" || continue  # a build before these counters
  printf "%-36s %14.2f %12.2f\n" "$k" "$(echo "($(stat "$n2" $k) - $(stat "$n1" $k)) / $dcalls" | bc -l)" \
    "$(echo "($(stat "$n2" $k) - $(stat "$n1" $k)) / $ddg" | bc -l)"
done
