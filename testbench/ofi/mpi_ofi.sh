#!/usr/bin/env bash
# Open MPI over libfabric's naa;ofi_rxm (issue 29), label ofi: mpi_check (ping-pong, allreduce,
# one-sided put/get, every result checked) with NP ranks on this host, through the OFI MTL
# (pml cm, mtl ofi, mtl_ofi_provider_include naa;ofi_rxm) and one-sided through osc pt2pt (which
# runs over that MTL: osc rdma needs the OFI BTL, which does not take naa;ofi_rxm). All ranks share
# ONE loopback address of this test's block (FI_NAA_ADDR, FI_NAA_SHARE_ADDR=1, docs/adr/0006), as
# ranks share a host's RoCE NIC. Every rank is given the same FI_NAA_ADDR, so without sharing the
# second rank's domain fails with "Address already in use" and the job with it.
# Usage: mpi_ofi.sh NP LIBDIR MPI_CHECK
# Exit 77 (CTest "Skipped") without Open MPI's mpirun or the mpi_check program, unless
# NAA_REQUIRE_TOOLS=1, which makes that a failure.
set -u
np=$1 libdir=$2 check=${3:-}
missing=
command -v mpirun >/dev/null 2>&1 || missing="Open MPI's mpirun (apt-get install openmpi-bin libopenmpi-dev)"
[ -z "$missing" ] && [ ! -x "$check" ] && missing="mpi_check (configured without libopenmpi-dev)"
if [ -n "$missing" ]; then
  if [ "${NAA_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "$missing not found, and NAA_REQUIRE_TOOLS=1 requires it"
    exit 1
  fi
  echo "SKIPPED: $missing not found"
  exit 77
fi
. "$(dirname "$0")/../support/test_addresses.sh"
naa_claim_addresses || exit 1
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
out=$(timeout 240 mpirun "${root[@]}" --oversubscribe -np "$np" \
  -x FI_PROVIDER_PATH="$libdir" -x FI_PROVIDER=naa -x FI_NAA_ADDR="$NAA_TEST_BLOCK.1" \
  -x FI_NAA_SHARE_ADDR=1 \
  --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "naa;ofi_rxm" \
  --mca osc pt2pt --mca btl self --mca mtl_base_verbose 10 \
  "$check" 2>&1)
rc=$?
echo "$out"
status=0
[ $rc = 0 ] || { echo "FAIL: mpirun exited $rc"; status=1; }
grep -q "^mpi_check: $np ranks, 0 errors$" <<<"$out" || { echo "FAIL: no clean mpi_check result"; status=1; }
# Every rank's MTL took the naa provider (not tcp or another one libfabric offers).
n=$(grep -c "mtl:ofi:provider: naa" <<<"$out")
[ "$n" = "$np" ] || { echo "FAIL: $n of $np ranks report mtl:ofi:provider: naa"; status=1; }
exit $status
