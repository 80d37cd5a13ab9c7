#!/usr/bin/env bash
# softroce-probe's scenarios against naa-sim over UdpRoce on loopback: the same traffic the VM
# run makes with the Verbs backend, without the VM (label integration). Addresses: a block of
# its own (testbench/support/test_addresses.sh; naa-sim on .1, the probe on .2). naa-sim must
# exit with status 0 when stopped (a non-zero exit fails the test, as in the C++ fixture).
# usage: probe_loopback.sh <naa-sim> <softroce-probe> <scratch-dir>
set -euo pipefail
sim=$1
probe=$2
dir=$3
# shellcheck source=../support/test_addresses.sh
. "$(dirname "$0")/../support/test_addresses.sh"
# shellcheck source=../support/naa_sim_lockstep.sh
. "$(dirname "$0")/../support/naa_sim_lockstep.sh"
naa_claim_addresses
naa_ip=$NAA_TEST_BLOCK.1
rm -rf "$dir"
mkdir -p "$dir"
sim_args=(--stats-file "$dir/sim.stats" --pcap "$dir/sim.pcap" "${naa_sim_args[@]}")
"$sim" --listen "$naa_ip" "${sim_args[@]}" >"$dir/sim.log" 2>&1 &
sim_pid=$!
trap 'kill "$sim_pid" 2>/dev/null || true' EXIT
# A liveness limit (30 s), not a measurement.
for _ in $(seq 300); do grep -q "listening" "$dir/sim.log" && break; sleep 0.1; done
grep -q "listening" "$dir/sim.log" || { echo "naa-sim did not start"; cat "$dir/sim.log"; exit 1; }
rc=0
"$probe" --transport udp -a "$naa_ip" -l "$NAA_TEST_BLOCK.2" all || rc=$?
kill -INT "$sim_pid"
sim_rc=0
wait "$sim_pid" || sim_rc=$?
trap - EXIT
if [ "$sim_rc" -ne 0 ]; then
  echo "naa-sim exited with status $sim_rc (expected 0):"
  cat "$dir/sim.log"
  rc=1
fi
cat "$dir/sim.stats" 2>/dev/null | grep -E '^cm\.(connections|dreq_sent|drep_received|drep_timeouts)=' || true
# Nothing may be left half-open, and every DREQ the NAA sent must have been answered.
grep -q '^cm.connections=0$' "$dir/sim.stats" || { echo "naa-sim still holds connections"; rc=1; }
grep -q '^cm.drep_timeouts=0$' "$dir/sim.stats" || { echo "a DREQ of the NAA went unanswered"; rc=1; }
naa_sim_check_rtl "$dir/sim.stats" "${sim_args[@]}" || rc=1
exit "$rc"
