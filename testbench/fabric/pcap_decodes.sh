#!/usr/bin/env bash
# PFC frames and CNPs of the fabric are real frames (docs/fabric.md "Frames"): an 4:1 incast with
# PFC and DCQCN writes one pcap per port, and tshark (the independent oracle) finds in them
# - 802.1Qbb pause frames (MAC Control 0x8808, opcode 0x0101, class 3 enabled, 65535 quanta) and
#   resumes (quanta 0) arriving at the senders, as many pauses as naa-fabric counted;
# - RoCEv2 CNPs (BTH opcode 0x81) from the receiver, as many as naa-fabric counted, each to a
#   sender's QP; data frames marked CE (IP ECN 3);
# - nothing malformed.
# Usage: pcap_decodes.sh NAA_FABRIC DIR [require]. Exit 77 (CTest "Skipped") without tshark,
# unless `require` is given or NAA_REQUIRE_TOOLS=1: then exit 1.
set -u
fabric=$1 dir=$2 require=${3:-}
[ "${NAA_REQUIRE_TOOLS:-0}" = 1 ] && require=require
if ! command -v tshark >/dev/null 2>&1; then
  [ -n "$require" ] && { echo "tshark not found (apt-get install tshark), and it is required"; exit 1; }
  echo "SKIPPED: tshark not found (apt-get install tshark)"
  exit 77
fi
rm -rf "$dir"
mkdir -p "$dir"
out=$("$fabric" --star 5 --workload incast --incast-senders 4 --incast-bytes 300000 --pfc 1 \
  --dcqcn 1 --xoff-bytes 30000 --pcap-dir "$dir/pcap" --out "$dir/run" 2>&1) || {
  echo "naa-fabric failed:"; echo "$out"; exit 1; }
echo "$out" | grep '^fabric:'
pauses=$(echo "$out" | sed -n 's/.*pauses \([0-9]*\),.*/\1/p')
cnps=$(echo "$out" | sed -n 's/.*CNPs \([0-9]*\),.*/\1/p')
if [ -z "$pauses" ] || [ -z "$cnps" ]; then echo "cannot read the counts from naa-fabric"; exit 1; fi
fail=0
count() {  # count PCAP FILTER
  local n
  n=$(tshark -r "$1" -Y "$2" 2>/dev/null | wc -l) || { echo "tshark failed on $1"; exit 1; }
  echo "$n"
}
# Every pause and resume goes from the switch to a host: the host pcaps (h1..h4 are senders,
# h0 the receiver) hold each exactly once.
pause_filter='macc.opcode == 0x0101 && macc.cbfc.enbv.c3 == 1 && macc.cbfc.pause_time.c3 == 65535'
resume_filter='macc.opcode == 0x0101 && macc.cbfc.enbv.c3 == 1 && macc.cbfc.pause_time.c3 == 0'
seen_pauses=0 seen_resumes=0
for h in 0 1 2 3 4; do
  seen_pauses=$((seen_pauses + $(count "$dir/pcap/h$h-p0.pcap" "$pause_filter")))
  seen_resumes=$((seen_resumes + $(count "$dir/pcap/h$h-p0.pcap" "$resume_filter")))
done
echo "tshark: $seen_pauses pause frames, $seen_resumes resumes at the hosts; naa-fabric: $pauses pauses"
[ "$pauses" -gt 0 ] && [ "$seen_pauses" -eq "$pauses" ] || { echo "FAIL: pause frames"; fail=1; }
[ "$seen_resumes" -gt 0 ] || { echo "FAIL: no resume frame"; fail=1; }
# CNPs: sent by the receiver h0 (10.0.0.1) to the senders.
seen_cnps=$(count "$dir/pcap/h0-p0.pcap" 'infiniband.bth.opcode == 0x81 && ip.src == 10.0.0.1')
echo "tshark: $seen_cnps CNPs from the receiver; naa-fabric: $cnps"
[ "$cnps" -gt 0 ] && [ "$seen_cnps" -eq "$cnps" ] || { echo "FAIL: CNPs"; fail=1; }
at_senders=0
for h in 1 2 3 4; do
  at_senders=$((at_senders + $(count "$dir/pcap/h$h-p0.pcap" 'infiniband.bth.opcode == 0x81')))
done
[ "$at_senders" -eq "$cnps" ] || { echo "FAIL: $at_senders CNPs reached the senders"; fail=1; }
marked=$(count "$dir/pcap/h0-p0.pcap" 'ip.dsfield.ecn == 3 && infiniband.bth.opcode == 0x07')
echo "tshark: $marked CE-marked data frames at the receiver"
[ "$marked" -gt 0 ] || { echo "FAIL: no CE-marked frame"; fail=1; }
for f in "$dir"/pcap/*.pcap; do
  bad=$(count "$f" '_ws.malformed || _ws.expert.severity >= error')
  [ "$bad" -eq 0 ] || { echo "FAIL: $bad malformed frames in $f"; fail=1; }
done
[ $fail -eq 0 ] && echo "PASS"
exit $fail
