#!/usr/bin/env bash
# The accumulate figure (seed 004 Fig. 3d, docs/spin.md "Figures"): simulated time of one call
# that adds N bytes of uint32 to N bytes already in NAA memory, streamed (the handler adds each
# packet as it arrives) against the store-and-forward baseline (RDMA in, then the vadd_i32
# kernel), both co-simulated in naa-cosim, so the figures are simulated time and repeat exactly.
# usage: figure.sh NAA_COSIM IMAGE [SIZES]   (SIZES default "16K 64K 256K 1M")
set -euo pipefail
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cosim=$1
image=$2
sizes=${3:-"16K 64K 256K 1M"}
call_ns() {  # the simulated time of the (only) call, from naa-cosim's phase lines
  "$@" -q | awk '$2 == "call" { print $6; found = 1 } END { if (!found) exit 1 }'
}
echo "size,stream_ns,store_ns,stream_over_store"
for n in $sizes; do
  stream=$(call_ns "$cosim" --fn 25 --handler "$image" --inout "gen:$n:1" --stream-in "gen:$n:2")
  store=$(call_ns "$cosim" --fn vadd_i32 --in "gen:$n:1" --in "gen:$n:2" --out "$n")
  echo "$n,$stream,$store,$(awk -v a="$stream" -v b="$store" 'BEGIN { printf "%.3f", a / b }')"
done
