#!/usr/bin/env bash
# ofi_call (ofi/examples) calls naa-sim's kernels through the libfabric API and the provider naa:
# MRSP by fi_send/fi_recv, inputs by fi_write/fi_writedata, the result as remote CQ data; ofi_call
# verifies every result byte. naa-sim must exit cleanly afterwards.
# Usage: ofi_call_sim.sh NAA_SIM OFI_CALL LIBDIR
# Addresses: a block of its own (testbench/support/test_addresses.sh): naa-sim .1, ofi_call .2.
set -u
sim=$1 call=$2 libdir=$3
. "$(dirname "$0")/../support/test_addresses.sh"
. "$(dirname "$0")/../support/naa_sim_start.sh"
naa_claim_addresses || exit 1
work=$(mktemp -d)
trap 'kill ${NAA_SIM_PID:-} 2>/dev/null; wait ${NAA_SIM_PID:-} 2>/dev/null; rm -rf "$work"' EXIT
naa_sim_start "$work/sim.log" -- "$sim" --listen "$NAA_TEST_BLOCK.1" || { echo "FAIL: naa-sim did not start"; exit 1; }
simpid=$NAA_SIM_PID
export FI_PROVIDER_PATH=$libdir FI_PROVIDER=naa FI_NAA_ADDR=$NAA_TEST_BLOCK.2
status=0
run() {
  echo "+ ofi_call $*"
  timeout 120 "$call" --naa "$NAA_TEST_BLOCK.1" "$@" || { echo "FAIL: ofi_call $*"; status=1; }
}
run --fn vadd_i32 --size 65536 --calls 3 --seed 7
run --fn add1 --size 1000000 --calls 2 --seed 9
run --fn vadd_i32 --size 4 --seed 3
# A bad option is refused with usage and exit 2.
"$call" --naa "$NAA_TEST_BLOCK.1" --size 3 >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --size 3 was not refused with exit 2"; status=1; }
kill -TERM $simpid
wait $simpid
rc=$?
NAA_SIM_PID=
[ $rc -eq 0 ] || { cat "$work/sim.log"; echo "FAIL: naa-sim exited $rc"; status=1; }
exit $status
