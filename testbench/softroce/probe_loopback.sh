#!/usr/bin/env bash
# softroce-probe's scenarios against naa-sim over UdpRoce on loopback: the same traffic the VM
# run makes with the Verbs backend, without the VM (label integration).
# usage: probe_loopback.sh <naa-sim> <softroce-probe> <scratch-dir>
set -euo pipefail
sim=$1
probe=$2
dir=$3
rm -rf "$dir"
mkdir -p "$dir"
naa_ip=127.20.8.1
"$sim" --listen "$naa_ip" --stats-file "$dir/sim.stats" --pcap "$dir/sim.pcap" \
  >"$dir/sim.log" 2>&1 &
sim_pid=$!
trap 'kill "$sim_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "listening" "$dir/sim.log" && break; sleep 0.1; done
grep -q "listening" "$dir/sim.log" || { echo "naa-sim did not start"; cat "$dir/sim.log"; exit 1; }
rc=0
"$probe" --transport udp -a "$naa_ip" -l 127.21.8.1 all || rc=$?
kill -INT "$sim_pid"
wait "$sim_pid" || true
trap - EXIT
cat "$dir/sim.stats" 2>/dev/null | grep -E '^cm\.(connections|dreq_sent|drep_received|drep_timeouts)=' || true
# Nothing may be left half-open, and every DREQ the NAA sent must have been answered.
grep -q '^cm.connections=0$' "$dir/sim.stats" || { echo "naa-sim still holds connections"; rc=1; }
grep -q '^cm.drep_timeouts=0$' "$dir/sim.stats" || { echo "a DREQ of the NAA went unanswered"; rc=1; }
exit "$rc"
