#!/usr/bin/env bash
# The broadcast figure (seed 004 Fig. 5a, docs/spin.md "Puts to other nodes"): simulated time
# until the last of N NAAs holds a message the host broadcasts, with the NAAs' handlers forwarding
# it down a binomial tree (each packet put to the children as it arrives) against the host sending
# it to every NAA itself (RDMA in, no peers). One host and N NAAs on a 100 Gb/s star (naa-broadcast,
# fabric/broadcast.hpp); every NAA's memory is compared with the message by naa-broadcast (a row
# whose verified column is not 1 fails the script). Simulated time: the figures repeat exactly.
# usage: figure.sh NAA_BROADCAST IMAGE [NAAS] [SIZES]   (NAAS default "4 8", SIZES "8 4K 64K 1M")
set -euo pipefail
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
tool=$1
image=$2
naas=${3:-"4 8"}
sizes=${4:-"8 4K 64K 1M"}
row() {  # time_ns of one run; fails unless every NAA holds the message
  local out
  out=$("$tool" --handler "$image" --naas "$1" --bytes "$2" --mode "$3")
  echo "$out" | awk -F, '$5 != 1 || $6 != "0x0" { exit 1 } { print $4 }' ||
    { echo "figure.sh: $3 $1 NAAs $2 bytes: $out" >&2; return 1; }
}
echo "naas,size,tree_ns,host_ns,tree_over_host"
for n in $naas; do
  for s in $sizes; do
    tree=$(row "$n" "$s" tree)
    host=$(row "$n" "$s" host)
    echo "$n,$s,$tree,$host,$(awk -v a="$tree" -v b="$host" 'BEGIN { printf "%.3f", a / b }')"
  done
done
