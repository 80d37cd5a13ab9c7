#!/usr/bin/env bash
# Issue 12 finding 11: when UDP 4791 is taken on the address (by another naa-sim, or on every
# address by the kernel's rdma_rxe), naa-sim and the host endpoint (naa-call) must exit non-zero
# and name the likely causes and how to check them, not only "Address already in use".
# A first naa-sim holds .1 of an address block of the script's own (testbench/support/
# test_addresses.sh) on UDP 4791 (a socket like any other).
# Usage: port_4791_taken.sh NAA_SIM NAA_CALL WORKDIR
set -u
sim=$1 call=$2 dir=$3
# shellcheck source=../support/test_addresses.sh
. "$(dirname "$0")/../support/test_addresses.sh"
# shellcheck source=../support/naa_sim_start.sh
. "$(dirname "$0")/../support/naa_sim_start.sh"
naa_claim_addresses || exit 1
ip=$NAA_TEST_BLOCK.1
mkdir -p "$dir"
trap 'kill ${NAA_SIM_PID:-} 2>/dev/null; wait ${NAA_SIM_PID:-} 2>/dev/null' EXIT
naa_sim_start "$dir/holder.log" -- "$sim" --listen "$ip" || { echo "the first naa-sim did not start"; exit 1; }
status=0
check() {  # check WHAT EXIT OUTPUT
  echo "$1: exit $2"
  echo "$3" | sed 's/^/    /'
  [ "$2" -ne 0 ] || { echo "FAIL: $1 exited 0"; status=1; }
  for want in "$ip:4791" "rdma_rxe" "ss -ulpn" "lsmod"; do
    echo "$3" | grep -qF "$want" || { echo "FAIL: $1 does not mention '$want'"; status=1; }
  done
}
out=$(timeout 20 "$sim" --listen "$ip" 2>&1)
check "second naa-sim on $ip" $? "$out"
echo "$out" | grep -q "another naa-sim" || { echo "FAIL: naa-sim does not name another naa-sim"; status=1; }
out=$(timeout 20 "$call" --naa "$NAA_TEST_BLOCK.2" --local "$ip" --fn nop --timeout 1000 2>&1)
check "naa-call --local $ip" $? "$out"
exit $status
