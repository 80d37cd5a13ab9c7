#!/usr/bin/env bash
# The main job: the whole host <-> NAA loop on this machine.
#   1. configures and builds naa-sim and naa-call with a CMake preset (default ci, into the
#      preset's own build folder: build/ for ci, build-dev/ for dev; shared with scripts/test.sh);
#      a failed build prints the compiler's errors and stops;
#   2. starts the simulated NAA (naa-sim) in the background on 127.0.0.2:4791, capturing a pcap,
#      with the MR table, the kernels and the receive path as Verilated RTL (--mr-table=rtl
#      --kernels=rtl, naa-sim's default, and --rx-pipe=rtl; docs/sim/rtl.md);
#   3. runs a vadd_i32 call and an add1 call through the host library (naa-call), which connects
#      with the IB CM, sets up regions with MRSP, writes the inputs by RDMA WRITE(_WITH_IMM) and
#      receives the results by RDMA WRITE from the NAA; each result is verified;
#   4. stops naa-sim and prints what happened, with wall and simulated times and the cycles the
#      RTL blocks were clocked.
# Environment: NAA_PRESET (ci), NAA_DEMO_NAA_IP (127.0.0.2), NAA_DEMO_DIR (<build folder>/demo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
preset=${NAA_PRESET:-ci}
naa_ip=${NAA_DEMO_NAA_IP:-127.0.0.2}

echo "== building naa-sim and naa-call (cmake --preset $preset)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake --preset "$preset" >"$log" 2>&1; then
  cat "$log"
  echo "demo: configuring with preset $preset failed (output above)" >&2
  exit 1
fi
# The preset's own build folder, as CMake resolved it (CMakePresets.json binaryDir).
build=$(sed -n 's/^-- Build files have been written to: //p' "$log" | tail -1)
[ -n "$build" ] || { cat "$log"; echo "demo: cannot tell the build folder of preset $preset" >&2; exit 1; }
if ! cmake --build --preset "$preset" --target naa-sim naa-call >"$log" 2>&1; then
  cat "$log"
  echo "demo: building naa-sim and naa-call in $build failed (compiler output above)" >&2
  exit 1
fi
tail -1 "$log"
rm -f "$log"
trap - EXIT
bin=$build/bin
out=${NAA_DEMO_DIR:-$build/demo}

mkdir -p "$out"
rm -f "$out"/*.pcap "$out"/*.out "$out"/naa-sim.*
echo
rtl_args=(--mr-table=rtl --kernels=rtl --rx-pipe=rtl)
echo "== starting the simulated NAA: naa-sim --listen $naa_ip ${rtl_args[*]} --pcap $out/naa-sim.pcap"
"$bin/naa-sim" --listen "$naa_ip" "${rtl_args[@]}" --pcap "$out/naa-sim.pcap" \
  --stats-file "$out/naa-sim.stats" >"$out/naa-sim.log" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true; wait $sim 2>/dev/null || true' EXIT
for _ in $(seq 200); do
  grep -q "listening on" "$out/naa-sim.log" 2>/dev/null && break
  kill -0 $sim 2>/dev/null || { cat "$out/naa-sim.log"; echo "demo: naa-sim did not start"; exit 1; }
  sleep 0.05
done
grep "listening on" "$out/naa-sim.log"

echo
echo "== call 1: vadd_i32, out0[i] = in0[i] + in1[i] over 16384 int32 (64 KiB per region)"
"$bin/naa-call" --naa "$naa_ip" --fn vadd_i32 --in gen:64K:1 --in gen:64K:2 \
  --out "64K@$out/vadd.out" --verify --pcap "$out/host-vadd.pcap"

echo
echo "== call 2: add1, every byte + 1, 1 MiB in and the same region back"
"$bin/naa-call" --naa "$naa_ip" --fn add1 --inout "gen:1M:3@$out/add1.out" --verify \
  --pcap "$out/host-add1.pcap"

kill -TERM $sim
wait $sim || true
trap - EXIT

stat() { sed -n "s/^$1=//p" "$out/naa-sim.stats" | tail -1; }
echo
echo "== the NAA's view (naa-sim statistics)"
echo "kernel dispatches:      $(stat kernel.dispatches)"
echo "simulated time:         $(stat sim.time_ns) ns ($(stat sim.cycles) cycles at $(stat sim.clock_mhz) MHz)"
echo "  of which model work:  $(stat sim.work_cycles) cycles (the rest is waiting for the host)"
echo "wall time of naa-sim:   $(stat wall.seconds) s"
echo
echo "== the RTL blocks (Verilated, clocked only while they have work)"
echo "mr_table:               $(stat rtl.mr_table.cycles) cycles ($(stat rtl.mr_table.lookups) lookups, $(stat rtl.mr_table.reads) entry reads, $(stat rtl.mr_table.searches) free-entry searches)"
echo "kernels:                $(stat rtl.kernels.cycles) cycles in $(stat rtl.kernels.runs) runs (add_const, vadd_i32, sum_u64, crc32)"
echo "receive path:           rx_parser $(stat rtl.rx_parser.cycles) cycles, icrc_check $(stat rtl.icrc_check.cycles) cycles, $(stat rtl.rx_pipe.packets) datagrams ($(stat rtl.rx_pipe.drops) dropped)"
echo "all RTL blocks:         $(stat rtl.cycles) cycles, $(stat rtl.lockstep.divergences) lockstep divergences"
[ "$(stat rtl.mr_table.verilated)" = 1 ] && [ "$(stat rtl.kernels.runs)" -gt 0 ] &&
  [ "$(stat rtl.rx_pipe.packets)" -gt 0 ] ||
  { echo "demo: the RTL blocks did not run (see $out/naa-sim.log)" >&2; exit 1; }
echo
echo "== captures (open in Wireshark, or: tshark -r FILE --disable-protocol rpcordma)"
ls -1 "$out"/*.pcap
if command -v tshark >/dev/null 2>&1; then
  frames=$(tshark -r "$out/naa-sim.pcap" 2>/dev/null | wc -l)
  bad=$(tshark -r "$out/naa-sim.pcap" --disable-protocol rpcordma \
          -Y '_ws.malformed || _ws.expert.severity == error' 2>/dev/null | wc -l)
  echo "naa-sim.pcap: $frames frames, $bad malformed"
  [ "$bad" -eq 0 ]
fi
echo "demo: ok"
