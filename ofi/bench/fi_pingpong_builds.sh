#!/usr/bin/env bash
# fi_pingpong latency over several builds of the naa provider against libfabric's tcp provider,
# in one interleaved run (tcp, build 1, build 2, ..., tcp, ...), printed as each build's median
# latency relative to tcp's with tcp's absolute median and best beside it (docs/host/libfabric.md
# "Performance"): how a change to the provider moves its latency on a machine whose load swings.
# Usage: ofi/bench/fi_pingpong_builds.sh [--rxm] SIZE REPEAT VARIANT...
#   --rxm    run naa under ofi_rxm (-p "naa;ofi_rxm" -e rdm -m msg) instead of -p naa -e msg
#   SIZE     message size in bytes (e.g. 64); REPEAT runs per variant and of tcp (e.g. 9)
#   VARIANT  LIBDIR[:FI_NAA_VAR=VALUE[,FI_NAA_VAR=VALUE...]]: a directory holding a libnaa-fi.so
#            (e.g. copies of build/lib/libnaa-fi.so before and after a change) and provider
#            settings for both sides, e.g. build/lib:FI_NAA_IRN=0 build/lib:FI_NAA_IRN=1
set -u
rxm=0
[ "${1:-}" = --rxm ] && { rxm=1; shift; }
[ $# -ge 3 ] || { echo "usage: $0 [--rxm] SIZE REPEAT LIBDIR[:FI_NAA_VAR=VALUE,...]..."; exit 2; }
size=$1 repeat=$2
shift 2
case $size in '' | *[!0-9]*) echo "SIZE must be a number of bytes, not '$size'"; exit 2 ;; esac
case $repeat in '' | *[!0-9]* | 0) echo "REPEAT must be a positive number, not '$repeat'"; exit 2 ;; esac
dirs=() envs=() names=()
for v in "$@"; do
  d=${v%%:*} e=""
  [ "$d" != "$v" ] && e=${v#*:}
  [ -f "$d/libnaa-fi.so" ] || { echo "no libnaa-fi.so in $d"; exit 2; }
  for kv in ${e//,/ }; do
    case $kv in FI_NAA_*=*) ;; *) echo "bad setting '$kv' in '$v' (want FI_NAA_<NAME>=<value>)"; exit 2 ;; esac
  done
  dirs+=("$(cd "$d" && pwd)") envs+=("${e//,/ }") names+=("$v")
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

# run PROV LIBDIR [VAR=VALUE...]: the client's usec/xfer, or "-".
run() {
  local prov=$1 dir=$2 spid
  shift 2
  local args=(-p "$prov" -e msg)
  [ "$prov" = naa ] && [ $rxm = 1 ] && args=(-p "naa;ofi_rxm" -e rdm -m msg)
  port=$((port + 1))
  env "$@" FI_PROVIDER_PATH="$dir" FI_PROVIDER="$prov" FI_NAA_ADDR="$server" timeout 120 \
    fi_pingpong "${args[@]}" -S "$size" -I "$iters" -B "$port" >"$work/s" 2>&1 &
  spid=$!
  for _ in $(seq 50); do
    env "$@" FI_PROVIDER_PATH="$dir" FI_PROVIDER="$prov" FI_NAA_ADDR="$client" timeout 120 \
      fi_pingpong "${args[@]}" -S "$size" -I "$iters" -P "$port" "$server" >"$work/c" 2>&1 && break
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
  # shellcheck disable=SC2086 # the settings are words
  for i in "${!dirs[@]}"; do lat[$i]+="$(run naa "${dirs[$i]}" ${envs[$i]}) "; done
done
# shellcheck disable=SC2086 # word splitting of the lists is wanted
read -r tcp_med tcp_best < <(stats ${lat[tcp]})
mode="-p naa -e msg"
[ $rxm = 1 ] && mode="-p naa;ofi_rxm -e rdm -m msg"
echo "fi_pingpong $mode -S $size -I $iters, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), $repeat interleaved runs each"
printf 'tcp: median %s usec/xfer, best %s\n' "$tcp_med" "$tcp_best"
for i in "${!dirs[@]}"; do
  # shellcheck disable=SC2086
  read -r med best < <(stats ${lat[$i]})
  printf '%s: median %s x tcp, best %s x tcp (%s / %s usec/xfer)\n' "${names[$i]}" \
    "$(awk -v a="$med" -v b="$tcp_med" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f", a / b }')" \
    "$(awk -v a="$best" -v b="$tcp_best" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f", a / b }')" \
    "$med" "$best"
done
