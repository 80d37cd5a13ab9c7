#!/usr/bin/env bash
# The PROCEED figure (docs/spin.md "Figures"): simulated time of one call that streams N bytes
# into an INOUT STREAM region and gets them back, when the header handler returns PROCEED (the
# NAA deposits the message itself, no payload handler runs) against PROCESS_DATA (each packet
# copied into memory by a payload handler on the HPU cores) and against plain RDMA (WRITE in, the
# nop kernel, written back). Co-simulated in naa-cosim: simulated time, exact repeats. Each
# streamed result must equal its input byte for byte (--save-regions); a wrong byte fails.
# usage: figure.sh NAA_COSIM IMAGE [SIZES]   (SIZES default "4K 64K 256K 1M")
set -euo pipefail
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cosim=$1
image=$2
sizes=${3:-"4K 64K 256K 1M"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
call_ns() {  # the simulated time of the (only) call, from naa-cosim's phase lines
  "$@" -q | awk '$2 == "call" && $5 == "0x0" { print $6; found = 1 } END { if (!found) exit 1 }'
}
streamed() {  # ARG SIZE: one call through proceed.elf; the region must come back unchanged
  rm -f "$work"/region*
  call_ns "$cosim" --fn 33 --handler "$image" --stream-arg "$1" --stream-inout "gen:$2:5" \
    --save-regions "$work"
  if ! cmp -s "$work/region0.before" "$work/region0.after"; then
    echo "figure.sh: argument $1, $2 bytes: the region came back changed" >&2
    exit 1
  fi
}
echo "size,proceed_ns,process_ns,rdma_nop_ns,proceed_over_process,proceed_over_rdma_nop"
for n in $sizes; do
  proceed=$(streamed 1 "$n")
  process=$(streamed 0 "$n")
  rdma=$(call_ns "$cosim" --fn nop --inout "gen:$n:5")
  echo "$n,$proceed,$process,$rdma,$(awk -v a="$proceed" -v b="$process" -v c="$rdma" \
    'BEGIN { printf "%.3f,%.3f", a / b, a / c }')"
done
