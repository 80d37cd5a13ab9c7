#!/usr/bin/env bash
# The fabric's speed (docs/fabric.md "Speed"): packet-hops per CPU second of naa-fabric on fat
# trees of 16, 54 and 128 hosts (k = 4, 6, 8), the same workload shape on each (web search at 70 %
# load, RoCE with PFC, flows clipped to 1 MB so every size runs in seconds), printed as ratios to
# the 16-host run measured here, with its absolute figures beside. CPU seconds, not wall: on a
# shared machine the wall figure measures the neighbours too (both are in speed.csv).
#
#   scripts/fabric-speed.sh [--fabric PATH] [--flows-per-host N] [--out DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fabric=$root/build/bin/naa-fabric per_host=10 out=fabric-speed
while [ $# -gt 0 ]; do
  case "$1" in
    --fabric) fabric=${2:?}; shift 2 ;;
    --flows-per-host) per_host=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
[ -x "$fabric" ] || { echo "fabric-speed.sh: no naa-fabric at $fabric" >&2; exit 2; }
mkdir -p "$out"
echo "hosts,k,flows,packet_hops,wall_s,packet_hops_per_wall_s,cpu_s,packet_hops_per_cpu_s,sim_ms" \
  > "$out/speed.csv"
base=""
for k in 4 6 8; do
  hosts=$((k * k * k / 4))
  flows=$((hosts * per_host))
  line=$("$fabric" --fat-tree "$k" --latency-ns 2000 --flows "$flows" --max-flow-bytes 1000000 \
    --pfc 1 --seed 1 2>&1 | grep '^fabric.speed:')
  # fabric.speed: N packet-hops in W s wall (R packet-hops/s), C s CPU (Q packet-hops/s), S ms ...
  fields=$(echo "$line" | tr -d '(),' | awk '{print $2, $5, $8, $10, $13, $15}')
  read -r hops wall rate cpu crate sim <<< "$fields"
  echo "$hosts,$k,$flows,$hops,$wall,$rate,$cpu,$crate,$sim" >> "$out/speed.csv"
  [ -n "$base" ] || base=$crate
  printf '%4d hosts: %8d packet-hops per CPU second = %.2f x the 16-host run (%d); %d packet-hops, %s s CPU, %s s wall, %s ms simulated\n' \
    "$hosts" "$crate" "$(awk -v a="$crate" -v b="$base" 'BEGIN {print a / b}')" "$base" "$hops" \
    "$cpu" "$wall" "$sim"
done
