#!/usr/bin/env bash
# The strided-unpack figure (seed 004 Fig. 7a, docs/spin.md "Figures"): bandwidth of unpacking an
# N-byte message of blocks into a region at stride 2 x block, against the block size. Streamed
# (each packet's blocks scattered as it arrives, on 8 HPUs: unpack_stream.elf, fn 28) against
# stored (the message in NAA memory first, then one HPU scatters it: unpack_store.elf, fn 29).
# Co-simulated in naa-cosim: simulated time, exact repeats. Every result is checked against the
# ping's bytes placed at their strides (--save-regions, python3); a wrong byte fails.
# usage: figure.sh NAA_COSIM STREAM_ELF STORE_ELF [BLOCKS] [N]  (default "8 64 256 1K 4K 32K", 256K)
set -euo pipefail
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cosim=$1
stream_elf=$2
store_elf=$3
blocks=${4:-"8 64 256 1K 4K 32K"}
size=${5:-256K}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bytes() { numfmt --from=iec "$1"; }
n=$(bytes "$size")
unpack() {  # FN ELF BLOCK: one call; prints its simulated ns; the result must be right
  local block stride
  block=$(bytes "$3")
  stride=$((2 * block))
  if [ $((n % block)) -ne 0 ]; then
    echo "figure.sh: block $3 does not divide the message ($n bytes)" >&2
    exit 2
  fi
  local scratch=()
  [ "$1" = 29 ] && scratch=(--out "$n")
  rm -f "$work"/region*
  "$cosim" --fn "$1" --handler "$2" --stream-in "gen:$n:5" --out $((n / block * stride)) \
    "${scratch[@]}" --stream-arg $(((stride << 32) | block)) --save-regions "$work" -q |
    awk '$2 == "call" && $5 == "0x0" { print $6; found = 1 } END { if (!found) exit 1 }'
  python3 - "$work" "$block" "$stride" <<'PY' || { echo "figure.sh: fn $1, block $3: wrong result" >&2; exit 1; }
import sys
work, block, stride = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
packed = open(work + "/region0.before", "rb").read()
result = open(work + "/region1.after", "rb").read()
want = bytearray(len(result))
for i in range(len(packed) // block):
    want[i * stride:i * stride + block] = packed[i * block:(i + 1) * block]
sys.exit(0 if bytes(want) == result else 1)
PY
}
echo "block,stream_ns,store_ns,stream_gbit_s,store_gbit_s,stream_over_store_bandwidth"
for b in $blocks; do
  stream=$(unpack 28 "$stream_elf" "$b")
  store=$(unpack 29 "$store_elf" "$b")
  echo "$(bytes "$b"),$stream,$store,$(awk -v n="$n" -v a="$stream" -v b="$store" \
    'BEGIN { printf "%.3f,%.3f,%.2f", 8 * n / a, 8 * n / b, b / a }')"
done
