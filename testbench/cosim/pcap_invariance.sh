#!/usr/bin/env bash
# Simulated time does not depend on whether a capture is open (issue 31): without --pcap the
# model crosses RxPipe by a call when it may (its tap records nothing), with --pcap RxPipe's
# process takes every datagram (the path the simulated-time digest checks). Each session below
# must print the same phase times, cycle counts and statistics (without the simulator-activity
# counters and wall figures) either way.
#
#   pcap_invariance.sh NAA_COSIM WORK_DIR
set -euo pipefail
cosim=${1:?usage: pcap_invariance.sh NAA_COSIM WORK_DIR}
work=${2:?usage: pcap_invariance.sh NAA_COSIM WORK_DIR}
mkdir -p "$work"
keep() { grep -v -E '^activity\.|wall|per_wall|per_second|cycles/s|heap\.|pcap' || true; }
failed=0
sessions=(
  "--fn nop --in gen:64:1 -n 20 --seed 3"
  "--fn add1 --in gen:1M --seed 5"
  "--fn add1 --in gen:64K -n 4 --mtu 1024 --fault-rx loss=0.05,dup=0.02,reorder=0.02 --fault-tx loss=0.05 --seed 9"
  "--fn crc32 --in gen:1M --out 4 --link-latency-ns 500 --host-sw-ns 300 --seed 4"
  "--fn add1 --in gen:64K -n 8 --mtu 1024 --irn --fault-rx loss=0.1 --fault-tx loss=0.05 --seed 6"
)
i=0
for s in "${sessions[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086  # the session's arguments are words
  "$cosim" $s --stats >"$work/$i.plain" 2>&1 || { echo "FAIL: naa-cosim $s exited $?"; failed=1; continue; }
  # shellcheck disable=SC2086
  "$cosim" $s --stats --pcap "$work/$i.pcap" >"$work/$i.captured" 2>&1 ||
    { echo "FAIL: naa-cosim $s --pcap exited $?"; failed=1; continue; }
  grep -q "rx_pipe.to_transport=" "$work/$i.plain" || { echo "FAIL: no statistics from: $s"; failed=1; continue; }
  if ! diff <(keep <"$work/$i.plain") <(keep <"$work/$i.captured") >"$work/$i.diff"; then
    echo "FAIL: naa-cosim $s: with --pcap simulated time differs:"
    head -20 "$work/$i.diff"
    failed=1
  else
    echo "ok: naa-cosim $s"
  fi
done
exit $failed
