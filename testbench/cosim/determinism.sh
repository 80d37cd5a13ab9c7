#!/usr/bin/env bash
# naa-cosim is deterministic (issue 15 item 2, docs/adr/0004): the same arguments twice give a
# bit-identical pcap and identical phase times and cycle counts, with and without fault
# injection; another seed gives another pcap. Usage: determinism.sh <naa-cosim> <work dir> [ARG...]
# (ARGs go to every run, e.g. --blocks=rtl: the same holds with the RTL blocks, docs/sim/rtl.md).
set -euo pipefail
cosim=$1
dir=$2
shift 2
extra=("$@")
mkdir -p "$dir"
fail() { echo "FAILED: $*"; exit 1; }

run() {  # name, then naa-cosim arguments
  local name=$1
  shift
  "$cosim" --fn add1 --inout gen:256K:3 --in seq:5000 -n 2 --pcap "$dir/$name.pcap" "${extra[@]}" "$@" \
    >"$dir/$name.txt" 2>"$dir/$name.err" || fail "naa-cosim $* exited $? ($(cat "$dir/$name.err"))"
  grep -q "call 2 rc 0x0 " "$dir/$name.txt" || fail "naa-cosim $*: no successful second call"
  grep -q "sim.cycles=" "$dir/$name.txt" || fail "naa-cosim $*: no cycle count"
  grep -q "results verified" "$dir/$name.txt" || fail "naa-cosim $*: results not verified"
}
same() {  # two runs: same pcap hash and the same printed times and cycles
  local h1 h2
  h1=$(sha256sum <"$dir/$1.pcap" | cut -d' ' -f1)
  h2=$(sha256sum <"$dir/$2.pcap" | cut -d' ' -f1)
  [ "$h1" = "$h2" ] || fail "$1 and $2: pcaps differ ($h1 vs $h2)"
  cmp -s "$dir/$1.txt" "$dir/$2.txt" || fail "$1 and $2: phase times or cycles differ: $(diff "$dir/$1.txt" "$dir/$2.txt")"
  [ "$(stat -c %s "$dir/$1.pcap")" -gt 1000 ] || fail "$1: pcap nearly empty"
  echo "$1 = $2: pcap sha256 $h1"
}

run clean1 --seed 11
run clean2 --seed 11
same clean1 clean2
run lossy1 --seed 11 --fault-rx loss=0.03,dup=0.01 --fault-tx loss=0.03,reorder=0.02
run lossy2 --seed 11 --fault-rx loss=0.03,dup=0.01 --fault-tx loss=0.03,reorder=0.02
same lossy1 lossy2
grep -q "net_port.fault_rx.loss=[1-9]" <("$cosim" --fn add1 --inout gen:256K:3 --in seq:5000 \
  -n 2 "${extra[@]}" --seed 11 --fault-rx loss=0.03,dup=0.01 --fault-tx loss=0.03,reorder=0.02 --stats) ||
  fail "the lossy run lost nothing: the fault options did not apply"
run keyed1 --seed 11 --fault-rx loss=0.03 --fault-key packet
run keyed2 --seed 11 --fault-rx loss=0.03 --fault-key packet
same keyed1 keyed2
run other --seed 12
h1=$(sha256sum <"$dir/clean1.pcap" | cut -d' ' -f1)
h3=$(sha256sum <"$dir/other.pcap" | cut -d' ' -f1)
[ "$h1" != "$h3" ] || fail "seeds 11 and 12 gave the same pcap"
echo "seed 12 differs: pcap sha256 $h3"
echo "PASSED"
