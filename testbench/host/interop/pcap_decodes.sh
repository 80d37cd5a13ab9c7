#!/usr/bin/env bash
# Interop: a demo-like session (vadd_i32 + add1 through naa-call against naa-sim) leaves a pcap
# that tshark decodes without a malformed packet or an expert error, and whose ICRCs scapy
# recomputes identically (received frames carry the recovered IPv4 ID).
# Usage: pcap_decodes.sh NAA_SIM NAA_CALL WORKDIR [require-tools]
# Exit 77 (CTest "Skipped") when tshark or scapy is missing (after whatever checks could run),
# unless require-tools is given or the environment has NAA_REQUIRE_TOOLS=1 (.ci/run): then exit 1.
# Addresses: a block of its own (testbench/support/test_addresses.sh): naa-sim .1, naa-call .2.
set -u
sim=$1 call=$2 dir=$3 require=${4:-}
[ "${NAA_REQUIRE_TOOLS:-0}" = 1 ] && require=require
if ! command -v tshark >/dev/null 2>&1; then
  [ -n "$require" ] && { echo "tshark not found (apt-get install tshark), and it is required"; exit 1; }
  echo "SKIPPED: tshark not found (apt-get install tshark)"
  exit 77
fi
. "$(dirname "$0")/../../support/test_addresses.sh"
. "$(dirname "$0")/../../support/naa_sim_lockstep.sh"
. "$(dirname "$0")/../../support/naa_sim_start.sh"
naa_claim_addresses || exit 1
naa=$NAA_TEST_BLOCK.1 local=$NAA_TEST_BLOCK.2
mkdir -p "$dir"
pcap=$dir/host_session.pcap
rm -f "$pcap"
sim_args=(--stats-file "$dir/sim.stats" "${naa_sim_args[@]}")
trap 'kill ${NAA_SIM_PID:-} 2>/dev/null; wait ${NAA_SIM_PID:-} 2>/dev/null' EXIT
naa_sim_start "$dir/sim.log" -- "$sim" --listen "$naa" "${sim_args[@]}" || exit 1
simpid=$NAA_SIM_PID
"$call" --naa "$naa" --local "$local" --pcap "$pcap" --fn vadd_i32 --in gen:8K:1 \
  --in gen:8K:2 --out 8K --verify -q || { echo "naa-call vadd_i32 failed"; exit 1; }
pcap2=$dir/host_session_add1.pcap
"$call" --naa "$naa" --local "$local" --pcap "$pcap2" --fn add1 --inout gen:100K:3 \
  --in gen:1 --verify -q || { echo "naa-call add1 failed"; exit 1; }
# naa-sim must end cleanly (SIGTERM -> exit 0): one that died or diverged fails the test.
kill -TERM $simpid
wait $simpid
sim_status=$?
trap - EXIT
if [ $sim_status -ne 0 ]; then
  echo "naa-sim exited with status $sim_status (0 expected):"; cat "$dir/sim.log"; exit 1
fi
naa_sim_check_rtl "$dir/sim.stats" "${sim_args[@]}" || exit 1
# STYLE.md: InfiniBand payload heuristics off, or legal 1-byte payloads read as other protocols.
opts="--disable-protocol rpcordma"
for h in eth_over_ib mellanox_eoib smcr_infiniband smb_direct_infiniband iser_infiniband \
  sdp_infiniband fc_infiniband lnet_ib rpcrdma_infiniband nvme_rdma drbd_rdma; do
  opts="$opts --disable-heuristic $h"
done
# tshark_count PCAP [FILTER]: the number of frames tshark lists. A tshark that fails (exit
# status, or anything on stderr but its warning about running as root) fails the test: a filter
# tshark rejects must not count as 0 bad frames.
tshark_count() {
  local out rc
  # shellcheck disable=SC2086
  out=$(tshark -r "$1" $opts ${2:+-Y "$2"} 2>"$dir/tshark.err")
  rc=$?
  if [ $rc -ne 0 ] || grep -qv '^Running as user' "$dir/tshark.err"; then
    echo "tshark -r $1 ${2:+-Y '$2'} failed (exit $rc):" >&2
    cat "$dir/tshark.err" >&2
    return 1
  fi
  if [ -z "$out" ]; then echo 0; else printf '%s\n' "$out" | wc -l; fi
}
bad_filter="_ws.malformed || _ws.expert.severity >= error"
status=0
# The control: a known-bad frame must be counted (the filter and tshark work).
control=$dir/malformed_control.pcap
/usr/bin/python3 "$(dirname "$0")/malformed_frame.py" "$control" || { echo "cannot write $control"; exit 1; }
control_bad=$(tshark_count "$control" "$bad_filter") || exit 1
echo "$control: $control_bad malformed/error (1 expected)"
[ "$control_bad" -eq 1 ] || status=1
for p in "$pcap" "$pcap2"; do
  frames=$(tshark_count "$p") || exit 1
  bad=$(tshark_count "$p" "$bad_filter") || exit 1
  cm=$(tshark_count "$p" "infiniband.mad.attributeid") || exit 1
  echo "$p: $frames frames, $cm CM MADs, $bad malformed/error"
  [ "$frames" -gt 10 ] && [ "$cm" -ge 4 ] && [ "$bad" -eq 0 ] || status=1
done
# Independent ICRC check (scapy recomputes it), when /usr/bin/python3 has scapy.
here=$(dirname "$0")
if /usr/bin/python3 -c "import scapy.contrib.roce" >/dev/null 2>&1; then
  /usr/bin/python3 "$here/icrc_check.py" "$pcap" "$pcap2" || status=1
elif [ -n "$require" ]; then
  echo "scapy not found (apt-get install python3-scapy), and it is required"; status=1
elif [ "$status" -eq 0 ]; then
  echo "SKIPPED: scapy not found for /usr/bin/python3 (apt-get install python3-scapy): the ICRC check did not run"
  exit 77
fi
exit $status
