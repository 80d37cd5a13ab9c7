#!/usr/bin/env bash
# sPIN handler test (issue 28, docs/spin.md): installs the build into a temporary prefix, builds
# examples/spin-handler against that prefix alone (a copy outside the repository), then the
# installed naa-call installs the image with its connection (--handler, docs/protocol.md "Handler
# images") on the installed naa-sim, started without it, on the model, RTL and lockstep HPU cores,
# and the streamed results are checked byte for byte against the XOR computed here (issue 28's
# done-when). Once more with the image given to naa-sim (--handler) instead.
# usage: check_spin_handler.sh <build-dir> <example-dir> <scratch-dir>
set -euo pipefail
build=$1
example=$2
scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
# shellcheck source=example_kit.sh
. "$(dirname "$0")/example_kit.sh"

install_package lib/cmake/naa/NaaHandler.cmake lib/cmake/naa/spin/naa_spin.ld include/naa/spin.h
build_example "$example" "$scratch/handler"
image=$scratch/handler/xor_stream.elf
test -f "$image" || fail "no xor_stream.elf"
echo "handler built against $prefix: $(file -b "$image" | cut -d, -f1-3)"

python3 -c 'import random,sys; r=random.Random(28)
open(sys.argv[1],"wb").write(bytes(r.randrange(256) for _ in range(20011)))' "$scratch/in.bin"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read()
open(sys.argv[2],"wb").write(bytes(b ^ 0xA5 for b in d))' "$scratch/in.bin" "$scratch/expect.bin"

for mode in rtl lockstep model on-sim; do
  log=$scratch/sim-$mode.log
  out=$scratch/out-$mode.bin
  if [ "$mode" = on-sim ]; then  # the image given to naa-sim, not installed by the host
    start_sim "$log" --hpus 4 --handler "$image" --hpu=model
    upload=(--stream)
  else
    start_sim "$log" --hpus 4 --hpu="$mode"
    upload=(--handler "$image")
  fi
  "$prefix/bin/naa-call" --naa "$naa" --local "$NAA_TEST_BLOCK.2" --fn 30 "${upload[@]}" \
    --stream-arg 0x12A5 --inout "$scratch/in.bin@$out" --quiet >"$scratch/call.log" 2>&1 ||
    { cat "$scratch/call.log" "$log"; fail "$mode: naa-call --fn 30 ${upload[*]} failed"; }
  cmp "$out" "$scratch/expect.bin" || fail "$mode: the streamed result differs from in XOR 0xA5"
  stop_sim "$log"
  payloads=$(sed -n 's/^handler.payloads=//p' "$log.stats")
  [ -n "$payloads" ] && [ "$payloads" -ge 5 ] ||
    { grep -E "^(handler|hpu)\." "$log.stats"; fail "$mode: $payloads payload handlers"; }
  if [ "$mode" = on-sim ]; then
    invocations=$(sed -n 's/^hpu.fn30.invocations=//p' "$log.stats")
    [ "$invocations" = "$payloads" ] || fail "on-sim: $invocations invocations, $payloads payloads"
    mode=model
  else  # installed by the host: one image, its cycles executed (about 32 per byte XORed)
    grep -q "^handler.images_installed=1$" "$log.stats" || fail "$mode: the image was not installed"
    cycles=$(sed -n 's/^handler.compute_cycles=//p' "$log.stats")
    [ "$cycles" -gt $((3 * 20011)) ] || fail "$mode: only $cycles cycles for 20011 bytes"
  fi
  verilated=$(sed -n 's/^rtl.hpu.verilated=//p' "$log.stats")
  want=4
  [ "$mode" = model ] && want=0
  [ "$verilated" = "$want" ] || fail "$mode: rtl.hpu.verilated=$verilated, not $want"
  if [ "$mode" = lockstep ]; then
    grep -q "^rtl.lockstep.divergences=0$" "$log.stats" || fail "lockstep: a divergence"
  fi
  echo "$mode: $payloads packets through the handler on the HPU cores (${upload[*]}), result verified"
done
# examples/spin/accumulate: built against the prefix alone; its figure script runs the installed
# naa-cosim (streamed accumulate and the vadd_i32 baseline) and prints one CSV row per size.
build_example "$repo/examples/spin/accumulate" "$scratch/accumulate"
rows=$("$repo/examples/spin/accumulate/figure.sh" "$prefix/bin/naa-cosim" \
  "$scratch/accumulate/accumulate.elf" 16K) || fail "accumulate figure.sh failed"
echo "$rows"
echo "$rows" | grep -qE '^16K,[0-9]+,[0-9]+,[0-9.]+$' || fail "accumulate: no CSV row for 16K"
# examples/spin/pingpong and examples/spin/unpack: built against the prefix alone; their figure
# scripts check every result byte for byte.
build_example "$repo/examples/spin/pingpong" "$scratch/pingpong"
rows=$("$repo/examples/spin/pingpong/figure.sh" "$prefix/bin/naa-cosim" \
  "$scratch/pingpong/pingpong_stream.elf" "$scratch/pingpong/pingpong_store.elf" 9000) ||
  fail "pingpong figure.sh failed"
echo "$rows"
echo "$rows" | grep -qE '^9000,[0-9]+,[0-9]+,[0-9]+,' || fail "pingpong: no CSV row for 9000"
build_example "$repo/examples/spin/unpack" "$scratch/unpack"
rows=$("$repo/examples/spin/unpack/figure.sh" "$prefix/bin/naa-cosim" \
  "$scratch/unpack/unpack_stream.elf" "$scratch/unpack/unpack_store.elf" 80 20K) ||
  fail "unpack figure.sh failed"
echo "$rows"
echo "$rows" | grep -qE '^80,[0-9]+,[0-9]+,' || fail "unpack: no CSV row for block 80"
# examples/spin/proceed: a user header and PROCEED (naa/spin.h ABI 2) against the prefix alone.
build_example "$repo/examples/spin/proceed" "$scratch/proceed"
rows=$("$repo/examples/spin/proceed/figure.sh" "$prefix/bin/naa-cosim" \
  "$scratch/proceed/proceed.elf" 9000) || fail "proceed figure.sh failed"
echo "$rows"
echo "$rows" | grep -qE '^9000,[0-9]+,[0-9]+,[0-9]+,' || fail "proceed: no CSV row for 9000"
# examples/spin/broadcast: puts to other nodes (docs/spin.md), built against the prefix alone; the
# installed naa-broadcast runs the streaming tree, the store-and-forward tree (broadcast_store.elf)
# and the host relay on 4 NAAs and checks every NAA's bytes.
if [ -x "$prefix/bin/naa-broadcast" ]; then
  build_example "$repo/examples/spin/broadcast" "$scratch/broadcast"
  rows=$("$repo/examples/spin/broadcast/figure.sh" "$prefix/bin/naa-broadcast" \
    "$scratch/broadcast/broadcast.elf" "$scratch/broadcast/broadcast_store.elf" 4 64K) ||
    fail "broadcast figure.sh failed"
  echo "$rows"
  echo "$rows" | grep -qE '^4,64K,[0-9]+,[0-9]+,[0-9]+,[0-9.]+,[0-9.]+$' ||
    fail "broadcast: no CSV row for 64K"
else  # fabric/ needs nlohmann-json (scripts/setup.sh)
  echo "broadcast: naa-broadcast not installed (fabric/ not built), example skipped"
fi
echo "sPIN handler OK"
