#!/usr/bin/env bash
# The simulated-time oracle of issue 31: a fixed set of naa-cosim runs (several functions and
# sizes, faults, --blocks=model and rtl, go-back-N and IRN through a small loss sweep, the
# NAAICE-calibrated sweep), each reduced to what simulated time decides: the pcap's sha256, the
# printed phase times and cycle counts, and the model's statistics without the counters of
# simulator activity (activity.*: process activations, delta cycles, sc_start calls, which a
# faster simulator changes on purpose) and without wall-clock figures.
#
#   scripts/sim-time-digest.sh BUILD_DIR [OUT_FILE]      # writes the digest (default stdout)
#   scripts/sim-time-digest.sh BUILD_DIR --check FILE    # compares with FILE (exit 1 on a diff)
#
# The expected digest is testbench/cosim/sim-time-digest.expected (taken from the tree before
# issue 31 changed the packet path); every change to the simulator must reproduce it byte for
# byte. RTL runs are included when the naa-cosim at hand has RTL (--help names --blocks=rtl).
set -euo pipefail
build=${1:?usage: sim-time-digest.sh BUILD_DIR [OUT_FILE | --check FILE]}
mode=write
out=/dev/stdout
if [ "${2:-}" = "--check" ]; then
  mode=check
  expected=${3:?--check needs the expected digest file}
elif [ -n "${2:-}" ]; then
  out=$2
fi
cosim="$build/bin/naa-cosim"
[ -x "$cosim" ] || { echo "sim-time-digest: no $cosim (build the naa-cosim target)" >&2; exit 2; }
work=$(mktemp -d /tmp/sim-time-digest.XXXXXX)
trap 'rm -rf "$work"' EXIT
has_rtl=0
# A build without RTL rejects --blocks=rtl (exit 2).
"$cosim" --fn nop --in seq:64 --blocks=rtl -q >/dev/null 2>&1 && has_rtl=1

digest=$work/digest.txt
: >"$digest"
# Keeps what simulated time decides; drops simulator-activity counters and wall figures.
keep() { grep -v -E '^activity\.|wall|per_wall|per_second|cycles/s|heap\.' || true; }

case_run() {  # name, then naa-cosim arguments
  local name=$1
  shift
  local pcap=$work/$name.pcap
  local rc=0
  "$cosim" "$@" --pcap "$pcap" --stats >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  {
    echo "## $name: $*"
    echo "exit $rc"
    echo "pcap $(sha256sum <"$pcap" | cut -d' ' -f1)"
    keep <"$work/$name.out"
  } >>"$digest"
}

for blocks in model $([ $has_rtl = 1 ] && echo rtl); do
  b=--blocks=$blocks
  case_run "nop-64x20-$blocks" --fn nop --in gen:64:1 -n 20 --seed 3 "$b"
  case_run "add1-1M-$blocks" --fn add1 --inout gen:1M:2 -n 2 --seed 5 "$b"
  case_run "add1-mtu1024-$blocks" --fn add1 --inout gen:96K:4 --in seq:5000 -n 2 --mtu 1024 --seed 6 "$b"
  case_run "crc32-4M-$blocks" --fn crc32 --in gen:4M:7 --out 4 --seed 7 "$b"
  case_run "vadd-64K-$blocks" --fn vadd_i32 --in gen:64K:8 --in gen:64K:9 --out 64K --seed 8 "$b"
  case_run "sum-256K-$blocks" --fn sum_u64 --in gen:256K:10 --out 8 --seed 9 "$b"
  case_run "faults-$blocks" --fn add1 --inout gen:256K:3 --in seq:5000 -n 2 --seed 11 "$b" \
    --fault-rx loss=0.03,dup=0.01,corrupt=0.01 --fault-tx loss=0.03,reorder=0.02
  case_run "faults-keyed-$blocks" --fn add1 --inout gen:256K:3 -n 2 --seed 12 "$b" \
    --fault-rx loss=0.03 --fault-key packet
  case_run "link-latency-$blocks" --fn add2 --inout gen:128K:5 -n 2 --seed 13 "$b" \
    --link-gbps 40 --link-latency-ns 500 --host-sw-ns 50 --host-pcie-ns 300 --host-nic-ns 200 \
    --host-rx-ns 1000
done
# The NAAICE-calibrated sweep (docs/sim/calibration.md): its CSV is simulated time only.
"$cosim" --naaice-sweep "$work/naaice.csv" --max 256K -q >/dev/null 2>"$work/naaice.err" || true
{
  echo "## naaice-sweep --max 256K"
  cat "$work/naaice.csv"
} >>"$digest"
# go-back-N and IRN under losses on both directions (a small loss sweep); wall goodput dropped.
"$cosim" --loss-sweep "$work/loss" --stream 2M --calls 3 --call-size 128K --losses 0,5 -q \
  >/dev/null 2>"$work/loss.err" || true
{
  echo "## loss-sweep --stream 2M --calls 3 --call-size 128K --losses 0,5 (wall column dropped)"
  if [ -f "$work/loss/loss.csv" ]; then
    head -1 "$work/loss/loss.csv" | tr ',' '\n' | grep -n wall | cut -d: -f1 >"$work/wallcol" || true
    if [ -s "$work/wallcol" ]; then
      cut -d, -f"$(cat "$work/wallcol")" --complement "$work/loss/loss.csv"
    else
      cat "$work/loss/loss.csv"
    fi
  else
    echo "no loss.csv: $(cat "$work/loss.err")"
  fi
} >>"$digest"

if [ "$mode" = check ]; then
  # Without RTL in this build, the expected file's RTL cases are not compared.
  awk -v rtl="$has_rtl" '/^## / { skip = (rtl == 0 && $2 ~ /-rtl:$/) } !skip' "$expected" \
    >"$work/expected"
  if diff -u "$work/expected" "$digest" >"$work/diff"; then
    echo "sim-time-digest: identical to $expected ($(grep -c '^## ' "$digest") cases, rtl=$has_rtl)"
  else
    echo "sim-time-digest: DIFFERS from $expected:"
    head -60 "$work/diff"
    exit 1
  fi
else
  cat "$digest" >"$out"
fi
