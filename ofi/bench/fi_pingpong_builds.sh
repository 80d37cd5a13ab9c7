#!/usr/bin/env bash
# fi_pingpong latency over several builds of the naa provider against libfabric's tcp provider,
# in one interleaved run (tcp, build 1, build 2, ..., tcp, ...), printed as each build's median
# latency relative to tcp's with tcp's absolute median and best beside it (docs/host/libfabric.md
# "Performance"): how a change to the provider moves its latency on a machine whose load swings.
# Usage: ofi/bench/fi_pingpong_builds.sh SIZE REPEAT LIBDIR...
#   SIZE    message size in bytes (e.g. 64); REPEAT runs per build and of tcp (e.g. 9)
#   LIBDIR  a directory holding a libnaa-fi.so (e.g. copies of build/lib/libnaa-fi.so before and
#           after a change)
set -u
[ $# -ge 3 ] || { echo "usage: $0 SIZE REPEAT LIBDIR..."; exit 2; }
size=$1 repeat=$2
shift 2
case $size in '' | *[!0-9]*) echo "SIZE must be a number of bytes, not '$size'"; exit 2 ;; esac
case $repeat in '' | *[!0-9]* | 0) echo "REPEAT must be a positive number, not '$repeat'"; exit 2 ;; esac
dirs=()
for d in "$@"; do
  [ -f "$d/libnaa-fi.so" ] || { echo "no libnaa-fi.so in $d"; exit 2; }
  dirs+=("$(cd "$d" && pwd)")
done
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (apt-get install libfabric-bin)"; exit 2; }
. "$(dirname "$0")/../../testbench/support/test_addresses.sh"
naa_claim_addresses || exit 1
server=$NAA_TEST_BLOCK.1 client=$NAA_TEST_BLOCK.2
port=$((40000 + ${NAA_TEST_BLOCK##*.} % 20000))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
iters=10000
[ "$size" -ge 4096 ] && iters=1000
[ "$size" -ge 1048576 ] && iters=200

# run PROV LIBDIR: the client's usec/xfer, or "-".
run() {
  local prov=$1 spid
  port=$((port + 1))
  FI_PROVIDER_PATH=$2 FI_PROVIDER=$prov FI_NAA_ADDR=$server timeout 120 fi_pingpong -p "$prov" \
    -e msg -S "$size" -I "$iters" -B "$port" >"$work/s" 2>&1 &
  spid=$!
  for _ in $(seq 50); do
    FI_PROVIDER_PATH=$2 FI_PROVIDER=$prov FI_NAA_ADDR=$client timeout 120 fi_pingpong -p "$prov" \
      -e msg -S "$size" -I "$iters" -P "$port" "$server" >"$work/c" 2>&1 && break
    kill -0 $spid 2>/dev/null || break
    sleep 0.1
  done
  wait $spid 2>/dev/null
  awk 'NR > 1 && $3 ~ /^=/ && $2 == substr($3, 2) { print $7; found = 1; exit }
       END { if (!found) print "-" }' "$work/c"
}
# stats VALUES...: "median best" of the numbers among them.
stats() {
  printf '%s\n' "$@" | grep -v '^-$' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "- -"; else print v[int((NR + 1) / 2)], v[1] }'
}

declare -A lat=()
for _ in $(seq "$repeat"); do
  lat[tcp]+="$(run tcp "${dirs[0]}") "
  for i in "${!dirs[@]}"; do lat[$i]+="$(run naa "${dirs[$i]}") "; done
done
# shellcheck disable=SC2086 # word splitting of the lists is wanted
read -r tcp_med tcp_best < <(stats ${lat[tcp]})
echo "fi_pingpong -S $size -I $iters, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), $repeat interleaved runs each"
printf 'tcp: median %s usec/xfer, best %s\n' "$tcp_med" "$tcp_best"
for i in "${!dirs[@]}"; do
  # shellcheck disable=SC2086
  read -r med best < <(stats ${lat[$i]})
  printf '%s: median %s x tcp, best %s x tcp (%s / %s usec/xfer)\n' "${dirs[$i]}" \
    "$(awk -v a="$med" -v b="$tcp_med" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f", a / b }')" \
    "$(awk -v a="$best" -v b="$tcp_best" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f", a / b }')" \
    "$med" "$best"
done
