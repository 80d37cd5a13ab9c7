#!/usr/bin/env bash
# naa-cosim with the RTL blocks (docs/sim/rtl.md, cosim/README.md): the same session in model,
# rtl and lockstep mode (--blocks=MODE: MR table, kernels, receive path), with fault injection.
# - lockstep: exit 0, rtl.lockstep.divergences=0, every block in lockstep, every MR lookup
#   answered by the RTL, RTL cycles beyond the reset;
# - rtl: every block Verilated; its pcap is bit-identical to lockstep's (the RTL and its cycle
#   model are cycle-equivalent, and lockstep's NAA sees the models' outputs);
# - model: bit-identical pcap to rtl, timestamps included: the kernels' C++ cost models take the
#   cycles their RTL takes (docs/sim/rtl.md "Kernels"), so simulated time does not depend on
#   the mode.
# - the default (no block option) is naa-sim's: MR table and kernels RTL, receive path model;
# - --loss-sweep's points (forked children) run in lockstep too, 0 divergences;
# - the calibrated NAAICE sweep writes the same CSV in model and lockstep mode.
# Usage: rtl_modes.sh <naa-cosim> <work dir>
set -euo pipefail
cosim=$1
dir=$2
mkdir -p "$dir"
fail() { echo "FAILED: $*"; exit 1; }
args=(--fn add1 --inout gen:256K:3 --in seq:5000 -n 2 --seed 7 --fault-rx loss=0.04
      --fault-tx loss=0.04 --stats)

run() {  # mode, then naa-cosim arguments
  local mode=$1
  shift
  "$cosim" "${args[@]}" --pcap "$dir/$mode.pcap" "$@" >"$dir/$mode.txt" 2>"$dir/$mode.err" ||
    fail "naa-cosim $* exited $? ($(cat "$dir/$mode.err"))"
  grep -q "results verified" "$dir/$mode.txt" || fail "$mode: results not verified"
}
stat() { grep "^$2=" "$dir/$1.txt" | cut -d= -f2; }
expect() {  # mode, key, value
  [ "$(stat "$1" "$2")" = "$3" ] || fail "$1: $2=$(stat "$1" "$2"), expected $3"
}
sha() { sha256sum <"$dir/$1.pcap" | cut -d' ' -f1; }
# The datagrams of a pcap without their timestamps (record header: ts_sec, ts_nsec, lengths).
frames() {
  python3 -c '
import sys, hashlib
d = open(sys.argv[1], "rb").read()
h, i, n = hashlib.sha256(), 24, 0
while i < len(d):
    incl = int.from_bytes(d[i + 8:i + 12], "little")
    h.update(d[i + 8:i + 16 + incl]); i += 16 + incl; n += 1
print(n, h.hexdigest())' "$dir/$1.pcap"
}

run model --blocks=model
run rtl --blocks=rtl
run lockstep --blocks=lockstep
run default

expect lockstep rtl.lockstep.divergences 0
for b in mr_table kernels rx_pipe; do
  expect lockstep "rtl.$b.lockstep" 1
  expect rtl "rtl.$b.verilated" 1
done
[ "$(stat lockstep rtl.mr_table.lookups)" = "$(stat lockstep mr_table.lookups)" ] ||
  fail "lockstep: not every MR lookup answered by the RTL"
[ "$(stat lockstep rtl.cycles)" -gt "$(stat lockstep rtl.reset_cycles)" ] ||
  fail "lockstep: no RTL cycles beyond the reset"
[ "$(stat lockstep rtl.kernels.runs)" -ge 2 ] || fail "lockstep: the kernel RTL did not run"
[ "$(stat lockstep net_port.fault_rx.loss)" -gt 0 ] || fail "no loss injected"
expect default rtl.mr_table.verilated 1
expect default rtl.kernels.verilated 1
expect default rtl.rx_pipe.verilated 0
[ -z "$(stat model rtl.cycles)" ] || fail "model: RTL statistics present"

[ "$(sha rtl)" = "$(sha lockstep)" ] || fail "rtl and lockstep pcaps differ"
echo "rtl = lockstep: pcap sha256 $(sha rtl)"
[ "$(frames model)" = "$(frames rtl)" ] ||
  fail "model and rtl sent different datagrams: $(frames model) vs $(frames rtl)"
[ "$(sha model)" = "$(sha rtl)" ] ||
  fail "model and rtl send the same datagrams at different simulated times (cost models vs RTL)"
echo "model = rtl: pcap sha256 $(sha rtl), timestamps included ($(frames rtl | cut -d' ' -f1) datagrams)"

# The loss sweep (one forked co-simulation per point) runs the blocks as asked too.
"$cosim" --loss-sweep "$dir/loss" --stream 1M --calls 2 --call-size 64K --losses 5 --seed 3 \
  --blocks=lockstep --stats -q >"$dir/loss.out" 2>"$dir/loss.err" ||
  fail "naa-cosim --loss-sweep --blocks=lockstep exited $? ($(tail -3 "$dir/loss.err"))"
[ "$(grep -c '^rtl.lockstep.divergences=0$' "$dir/loss.err")" -eq 2 ] ||
  fail "loss sweep: not 2 points in lockstep with 0 divergences"
[ "$(grep -c '^rtl.kernels.lockstep=1$' "$dir/loss.err")" -eq 2 ] || fail "loss sweep: kernels not in lockstep"
echo "loss sweep in lockstep: 2 points, 0 divergences"

# The calibrated NAAICE sweep (docs/sim/calibration.md) gives the same CSV with the RTL blocks.
for m in model lockstep; do
  mkdir -p "$dir/naaice_$m"
  "$cosim" --calibrated --naaice-sweep "$dir/naaice_$m/latency_naaice.csv" --max 1M \
    --blocks=$m >"$dir/naaice_$m.out" 2>&1 || fail "naa-cosim --naaice-sweep --blocks=$m exited $?"
done
cmp -s "$dir/naaice_model/latency_naaice.csv" "$dir/naaice_lockstep/latency_naaice.csv" ||
  fail "the calibrated sweep differs between model and lockstep"
echo "calibrated sweep up to 1 MiB: model = lockstep CSV"
echo "PASSED"
