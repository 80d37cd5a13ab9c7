#!/usr/bin/env bash
# fi_pingpong latency and bandwidth over naa (FI_EP_MSG), naa;ofi_rxm (FI_EP_RDM), and
# libfabric's own tcp (FI_EP_MSG) and udp (FI_EP_DGRAM) providers, in one run, printed as ratios
# to tcp with tcp's absolute figures beside them (docs/host/libfabric.md "Performance").
# Usage: ofi/bench/fi_pingpong_compare.sh [LIBDIR] [SIZES] [REPEAT]
#   LIBDIR  where libnaa-fi.so is (default build/lib); SIZES default "64 4096 65536 1048576";
#   REPEAT  runs per provider and size (default 5), interleaved (tcp, naa, rxm, udp, tcp, ...),
#           each figure the median of its runs: on a shared machine one run swings by factors
#           of 3 with the other load, and the interleaving gives every provider the same weather.
# Each run: one fi_pingpong server and client on two loopback addresses, -S <size>, -I <n>
# iterations (10000 below 4 KiB, 1000 below 1 MiB, 200 from 1 MiB), -c off (a data check per
# message would measure memcmp). Rerun on a quiet machine: both sides busy-poll.
set -u
libdir=$(cd "${1:-build/lib}" && pwd) || { echo "no $1"; exit 2; }
sizes=${2:-"64 4096 65536 1048576"}
repeat=${3:-5}
case $repeat in '' | *[!0-9]* | 0) echo "REPEAT must be a positive number, not '$repeat'"; exit 2 ;; esac
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (apt-get install libfabric-bin)"; exit 2; }
export FI_PROVIDER_PATH=$libdir
. "$(dirname "$0")/../../testbench/support/test_addresses.sh"
naa_claim_addresses || exit 1
server=$NAA_TEST_BLOCK.1 client=$NAA_TEST_BLOCK.2
port=$((40000 + ${NAA_TEST_BLOCK##*.} % 20000))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME SIZE PROV EP: prints "usec MBps" of the client's result line, or "- -".
run() {
  local name=$1 size=$2 prov=$3 ep=$4 iters=200 spid
  [ "$size" -lt 1048576 ] && iters=1000
  [ "$size" -lt 4096 ] && iters=10000
  local args=(-p "$prov" -e "$ep" -S "$size" -I "$iters")
  port=$((port + 1))
  FI_PROVIDER=${prov%%;*} FI_NAA_ADDR=$server timeout 120 fi_pingpong "${args[@]}" -B "$port" \
    >"$work/$name.s" 2>&1 &
  spid=$!
  for _ in $(seq 50); do
    FI_PROVIDER=${prov%%;*} FI_NAA_ADDR=$client timeout 120 fi_pingpong "${args[@]}" -P "$port" \
      "$server" >"$work/$name.c" 2>&1 && break
    kill -0 $spid 2>/dev/null || break
    sleep 0.1
  done
  wait $spid 2>/dev/null
  # The result line: "bytes #sent =#ack total time MB/sec usec/xfer Mxfers/sec" (counts as 1k).
  awk 'NR > 1 && $3 ~ /^=/ && $2 == substr($3, 2) { print $7, $6; found = 1; exit }
       END { if (!found) print "- -" }' "$work/$name.c"
}

# median VALUES...: the median of the numbers among them ("-" if none).
median() {
  printf '%s\n' "$@" | grep -v '^-$' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
                             else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

echo "fi_pingpong, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), median of $repeat interleaved runs"
printf '%-8s | %-22s | %-10s %-10s %-10s | %-10s %-10s %-10s\n' size "tcp (usec/xfer, MB/s)" \
  "naa lat" "rxm lat" "udp lat" "naa bw" "rxm bw" "udp bw"
printf '%s\n' "---------+------------------------+----------------------------------+---------------------------------"
for size in $sizes; do
  declare -A us=() bw=()
  for r in $(seq "$repeat"); do
    for p in tcp naa rxm udp; do
      case $p in
        tcp) read -r u b < <(run tcp-$size-$r "$size" tcp msg) ;;
        naa) read -r u b < <(run naa-$size-$r "$size" naa msg) ;;
        rxm) read -r u b < <(run rxm-$size-$r "$size" "naa;ofi_rxm" rdm) ;;
        udp) read -r u b < <(run udp-$size-$r "$size" udp dgram) ;;
      esac
      us[$p]+="$u " bw[$p]+="$b "
    done
  done
  # shellcheck disable=SC2086 # word splitting of the lists is wanted
  {
    tcp_us=$(median ${us[tcp]}) tcp_bw=$(median ${bw[tcp]})
    naa_us=$(median ${us[naa]}) naa_bw=$(median ${bw[naa]})
    rxm_us=$(median ${us[rxm]}) rxm_bw=$(median ${bw[rxm]})
    udp_us=$(median ${us[udp]}) udp_bw=$(median ${bw[udp]})
  }
  printf '%-8s | %10s %11s | %-10s %-10s %-10s | %-10s %-10s %-10s\n' "$size" "$tcp_us" "$tcp_bw" \
    "$(ratio "$naa_us" "$tcp_us")" "$(ratio "$rxm_us" "$tcp_us")" "$(ratio "$udp_us" "$tcp_us")" \
    "$(ratio "$naa_bw" "$tcp_bw")" "$(ratio "$rxm_bw" "$tcp_bw")" "$(ratio "$udp_bw" "$tcp_bw")"
done
echo "latency columns: usec/xfer relative to tcp (below 1: faster); bandwidth columns: MB/s relative to tcp (above 1: faster); -: did not run (udp: above its datagram size)"
