#!/usr/bin/env bash
# The main job. Builds (preset ci, into build/) if needed, then shows the protocol in action.
# Until the simulated NAA and the host library close the loop, this writes the pcap of a complete
# host <-> NAA session built by the protocol library (naa-pcap-gen) and decodes it with tshark.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${NAA_PRESET:-ci}
if [ ! -f build/build.ninja ]; then
  cmake --preset "$preset" >/dev/null
fi
cmake --build --preset "$preset" --target naa-pcap-gen >/dev/null

pcap=build/naa-demo.pcap
echo "== naa demo: a host <-> NAA session on the wire (built by naa::protocol) =="
build/bin/naa-pcap-gen --list "$pcap"
if command -v tshark >/dev/null 2>&1; then
  echo
  echo "== tshark's reading of $pcap =="
  tshark -r "$pcap" --disable-protocol rpcordma 2>/dev/null
  bad=$(tshark -r "$pcap" --disable-protocol rpcordma \
          -Y '_ws.malformed || _ws.expert.severity == error' 2>/dev/null | wc -l)
  echo "malformed frames: $bad"
  [ "$bad" -eq 0 ]
else
  echo "(install tshark to see it decoded: scripts/setup.sh)"
fi
echo "open $pcap in Wireshark to read every header"
