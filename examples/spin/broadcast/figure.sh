#!/usr/bin/env bash
# The broadcast figure (seed 004 Fig. 5a, docs/spin.md "Puts to other nodes"): simulated time
# until the last of N NAAs holds a message the host broadcasts, three ways: the NAAs' handlers
# forward it down a binomial tree packet by packet as it arrives (broadcast.c, sPIN streaming);
# the same tree store-and-forward, each NAA forwarding once it holds the whole message
# (broadcast_store.c, the paper's RDMA baseline); the host sending it to every NAA itself (RDMA in,
# no peers). One host and N NAAs on a 100 Gb/s star (naa-broadcast, fabric/broadcast.hpp); every
# NAA's memory is compared with the message by naa-broadcast (a row whose verified column is not
# 1 fails the script). Simulated time: the figures repeat exactly.
# usage: figure.sh NAA_BROADCAST IMAGE STORE_IMAGE [NAAS] [SIZES]
#        (IMAGE: broadcast.elf, STORE_IMAGE: broadcast_store.elf; NAAS default "4 8", SIZES
#        "8 4K 64K 1M")
# output: naas,size,stream_ns,store_ns,host_ns,stream_over_store,stream_over_host
set -euo pipefail
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
if [ $# -lt 3 ]; then
  echo "usage: figure.sh NAA_BROADCAST IMAGE STORE_IMAGE [NAAS] [SIZES]" >&2
  exit 2
fi
tool=$1
image=$2
store_image=$3
naas=${4:-"4 8"}
sizes=${5:-"8 4K 64K 1M"}
row() {  # time_ns of one run; fails unless every NAA holds the message
  local out
  out=$("$tool" --handler "$4" --naas "$1" --bytes "$2" --mode "$3")
  echo "$out" | awk -F, '$5 != 1 || $6 != "0x0" { exit 1 } { print $4 }' ||
    { echo "figure.sh: $3 $1 NAAs $2 bytes: $out" >&2; return 1; }
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo "naas,size,stream_ns,store_ns,host_ns,stream_over_store,stream_over_host"
for n in $naas; do
  for s in $sizes; do
    stream=$(row "$n" "$s" tree "$image")
    store=$(row "$n" "$s" store "$store_image")
    host=$(row "$n" "$s" host "$image")
    echo "$n,$s,$stream,$store,$host,$(ratio "$stream" "$store"),$(ratio "$stream" "$host")"
  done
done
