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
naa_claim_addresses || exit 1
naa=$NAA_TEST_BLOCK.1 local=$NAA_TEST_BLOCK.2
mkdir -p "$dir"
pcap=$dir/host_session.pcap
rm -f "$pcap"
"$sim" --listen "$naa" >"$dir/sim.log" 2>&1 &
simpid=$!
trap 'kill $simpid 2>/dev/null; wait $simpid 2>/dev/null' EXIT
for i in $(seq 50); do grep -q "listening on" "$dir/sim.log" && break; sleep 0.1; done
"$call" --naa "$naa" --local "$local" --pcap "$pcap" --fn vadd_i32 --in gen:8K:1 \
  --in gen:8K:2 --out 8K --verify -q || { echo "naa-call vadd_i32 failed"; exit 1; }
pcap2=$dir/host_session_add1.pcap
"$call" --naa "$naa" --local "$local" --pcap "$pcap2" --fn add1 --inout gen:100K:3 \
  --in gen:1 --verify -q || { echo "naa-call add1 failed"; exit 1; }
# STYLE.md: InfiniBand payload heuristics off, or legal 1-byte payloads read as other protocols.
opts="--disable-protocol rpcordma"
for h in eth_over_ib mellanox_eoib smcr_infiniband smb_direct_infiniband iser_infiniband \
  sdp_infiniband fc_infiniband lnet_ib rpcrdma_infiniband nvme_rdma drbd_rdma; do
  opts="$opts --disable-heuristic $h"
done
status=0
for p in "$pcap" "$pcap2"; do
  frames=$(tshark -r "$p" $opts 2>/dev/null | wc -l)
  # shellcheck disable=SC2086
  bad=$(tshark -r "$p" $opts -Y "_ws.malformed || _ws.expert.severity >= error" 2>/dev/null | wc -l)
  cm=$(tshark -r "$p" $opts -Y "infiniband.mad.attributeid" 2>/dev/null | wc -l)
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
