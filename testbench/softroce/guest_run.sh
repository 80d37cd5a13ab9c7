#!/bin/bash
# Runs INSIDE the Soft-RoCE VM (copied to /mnt/share by scripts/test-softroce.sh): the host-built
# naa-call, naa-example-c and softroce-probe with the Verbs backend on rxe0 against naa-sim at
# NAA_IP. Prints one "PASS name" / "FAIL name" line per step and exits 1 if any failed.
# usage: guest_run.sh NAA_IP
set -u
naa=${1:?usage: guest_run.sh NAA_IP}
bin=/mnt/share
work=$(mktemp -d)
cd "$work" || exit 1
failed=0
step() {  # step NAME TIMEOUT_S CMD...
  local name=$1 limit=$2
  shift 2
  local t0 rc ms
  t0=$(date +%s%N)
  timeout "$limit" "$@" >"$work/$name.log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  if [ "$rc" -eq 0 ]; then
    printf 'PASS %-22s %6d ms  %s\n' "$name" "$ms" \
      "$(grep -E '^naa-call:|^naa-example' "$work/$name.log" | tail -1 | cut -c1-100)"
  else
    printf 'FAIL %-22s %6d ms  exit %d\n' "$name" "$ms" "$rc"
    sed 's/^/    | /' "$work/$name.log" | tail -25
    failed=1
  fi
}

# Shared libraries: everything but rdma-core and the C/C++ runtime is linked in statically.
missing=$(ldd $bin/naa-call $bin/softroce-probe $bin/naa-example-c | grep 'not found')
if [ -n "$missing" ]; then
  echo "FAIL shared-libraries: $missing"
  exit 1
fi
echo "PASS shared-libraries (ldd: all found)"

call="$bin/naa-call --transport verbs -a $naa -q --verify --timeout 60000"
# Every built-in kernel (PROTOCOL.md 5.3) with its result verified on the host; >= 1 MiB in and out.
step add1-1MiB-inout 120 $call --naa-base 0x0000000 --fn add1 --inout gen:1M:3
step add2-1MiB-x3 180 $call --naa-base 0x0200000 --fn add2 --inout gen:1M:4 --inout gen:5000:5 -n 3
step nop-x100 120 $call --naa-base 0x0400000 --fn nop -n 100
step vadd_i32-1MiB 120 $call --naa-base 0x0600000 --fn vadd_i32 --in gen:1M:1 --in gen:1M:2 --out 1M
step sum_u64-1MiB 120 $call --naa-base 0x0900000 --fn sum_u64 --in gen:1M:6 --out 8
step crc32-1MiB 120 $call --naa-base 0x0B00000 --fn crc32 --in gen:1048579:7 --out 4
# 100 calls on one connection, with data both ways.
step vadd_i32-64KiB-x100 300 $call --naa-base 0x0D00000 --fn vadd_i32 --in gen:64K:8 \
  --in gen:64K:9 --out 64K -n 100
# Solicited-only CQ arming, as the NAAICE library does: works only if the NAA sets SE.
step solicited-only-x20 120 $call --naa-base 0x0E00000 --solicited-only --fn vadd_i32 \
  --in gen:4K:1 --in gen:4K:2 --out 4K -n 20
# The NAAICE-compatible C API, backend chosen by NAA_TRANSPORT.
step c-api-example 120 env NAA_TRANSPORT=verbs NAA_SPEC="$naa:12345:1:2" $bin/naa-example-c 5
# What Session never does: RDMA READ, RNR, unknown function, abort, bad rkey, long SEND.
step probe-scenarios 300 $bin/softroce-probe --transport verbs -a "$naa" --naa-base 0x1000000 all
# An idle connection survives the NAA's liveness probes (naa-sim runs with --idle-timeout-ms 1000):
# rxe ACKs each zero-length RDMA WRITE, and the second call works on the same QP.
step idle-liveness 60 $bin/softroce-probe --transport verbs -a "$naa" --naa-base 0x3C00000 \
  --idle-ms 4000 idle

# Several clients at once, each with its own NAA address range.
pids=()
for i in 1 2 3 4; do
  timeout 300 $call --naa-base $((0x2000000 + i * 0x400000)) --fn vadd_i32 --in gen:256K:$i \
    --in gen:256K:99 --out 256K -n 10 >"$work/concurrent-$i.log" 2>&1 &
  pids+=($!)
done
timeout 300 $bin/softroce-probe --transport verbs -a "$naa" --naa-base 0x3800000 read rnr \
  >"$work/concurrent-probe.log" 2>&1 &
pids+=($!)
cfail=0
for p in "${pids[@]}"; do wait "$p" || cfail=1; done
if [ "$cfail" -eq 0 ]; then
  echo "PASS concurrent-clients (4 x naa-call vadd_i32 256 KiB x10 + probe read/rnr)"
else
  echo "FAIL concurrent-clients"
  for f in "$work"/concurrent-*.log; do sed "s|^|    | $(basename "$f"): |" "$f" | tail -8; done
  failed=1
fi
rm -rf "$work"
exit "$failed"
