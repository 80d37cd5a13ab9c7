#!/usr/bin/env bash
# The ping-pong figure (seed 004 Fig. 3b/c, docs/spin.md "Figures"): simulated time of one call
# whose ping of N bytes comes back as a pong, streamed (each packet put back from the packet
# buffer as it arrives: pingpong_stream.elf, fn 26) against stored (the whole ping in NAA memory
# first, then one put: pingpong_store.elf, fn 27) and against RDMA with a kernel (RDMA WRITE in,
# the add1 kernel, RDMA WRITE out). All co-simulated in naa-cosim: simulated time, exact repeats.
# Every pong is checked byte for byte against its ping (--save-regions); a wrong byte fails.
# usage: figure.sh NAA_COSIM STREAM_ELF STORE_ELF [SIZES]   (default "64 1K 4K 16K 64K 256K 1M")
set -euo pipefail
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cosim=$1
stream_elf=$2
store_elf=$3
sizes=${4:-"64 1K 4K 16K 64K 256K 1M"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
call_ns() {  # the simulated time of the (only) call, from naa-cosim's phase lines
  "$@" -q | awk '$2 == "call" && $5 == "0x0" { print $6; found = 1 } END { if (!found) exit 1 }'
}
pong() {  # FN ELF SIZE: one ping-pong through a handler; the pong must equal the ping
  rm -f "$work"/region*
  call_ns "$cosim" --fn "$1" --handler "$2" --stream-in "gen:$3:7" --out "$3" \
    --save-regions "$work"
  if ! cmp -s "$work/region0.before" "$work/region1.after"; then
    echo "figure.sh: fn $1, $3 bytes: the pong differs from the ping" >&2
    exit 1
  fi
}
echo "size,stream_ns,store_ns,rdma_kernel_ns,stream_over_store,stream_over_rdma_kernel"
for n in $sizes; do
  stream=$(pong 26 "$stream_elf" "$n")
  store=$(pong 27 "$store_elf" "$n")
  rdma=$(call_ns "$cosim" --fn add1 --inout "gen:$n:7")  # naa-cosim verifies add1's bytes
  echo "$n,$stream,$store,$rdma,$(awk -v a="$stream" -v b="$store" -v c="$rdma" \
    'BEGIN { printf "%.3f,%.3f", a / b, a / c }')"
done
