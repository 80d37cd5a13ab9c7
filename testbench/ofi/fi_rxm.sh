#!/usr/bin/env bash
# libfabric's own tools over the provider naa beyond FI_EP_MSG (issue 29), label ofi:
#   fi_rxm.sh rdm MODE LIBDIR   `fi_pingpong -p "naa;ofi_rxm" -e rdm -m MODE -S all -c`: RDM
#                               endpoints of libfabric's ofi_rxm layered over naa's FI_EP_MSG, in
#                               transmit mode MODE (msg or tagged), server and client on two
#                               loopback addresses of this test's block, every size from 0 B to
#                               fi_pingpong's largest, every byte checked (-c)
#   fi_rxm.sh params LIBDIR     `fi_info -e` lists every FI_NAA_* variable of the provider
# Exit 77 (CTest "Skipped") when fi_info / fi_pingpong are missing, unless NAA_REQUIRE_TOOLS=1.
set -u
mode=$1
shift
txmode=
if [ "$mode" = rdm ]; then txmode=$1; shift; fi
libdir=$1
tool=fi_info
[ "$mode" = rdm ] && tool=fi_pingpong
if ! command -v "$tool" >/dev/null 2>&1; then
  if [ "${NAA_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "$tool not found (apt-get install libfabric-bin), and NAA_REQUIRE_TOOLS=1 requires it"
    exit 1
  fi
  echo "SKIPPED: $tool not found (apt-get install libfabric-bin)"
  exit 77
fi
export FI_PROVIDER_PATH=$libdir
pre=()
[ -n "${NAA_TSAN_PRELOAD:-}" ] && pre=(env "LD_PRELOAD=$NAA_TSAN_PRELOAD")
status=0
fail() { echo "FAIL: $*"; status=1; }

if [ "$mode" = params ]; then
  out=$(FI_PROVIDER=naa timeout 30 "${pre[@]}" fi_info -e 2>&1) || fail "fi_info -e exited $?"
  for v in FI_NAA_ADDR FI_NAA_CONNECT_TIMEOUT_MS FI_NAA_PCAP FI_NAA_IRN FI_NAA_PROGRESS_THREAD; do
    grep -q "^# $v: " <<<"$out" || fail "fi_info -e does not list $v"
  done
  grep -A2 '^# FI_NAA_' <<<"$out"
  exit $status
fi

. "$(dirname "$0")/../support/test_addresses.sh"
naa_claim_addresses || exit 1
server=$NAA_TEST_BLOCK.1 client=$NAA_TEST_BLOCK.2
port=$((40000 + ${NAA_TEST_BLOCK##*.} % 20000))
work=$(mktemp -d)
spid=
trap '[ -n "$spid" ] && kill $spid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
args=(-p "naa;ofi_rxm" -e rdm -m "$txmode" -S all -c)
FI_NAA_ADDR=$server timeout 120 "${pre[@]}" fi_pingpong "${args[@]}" -B "$port" >"$work/server" 2>&1 &
spid=$!
ok=1
for _ in $(seq 100); do
  if FI_NAA_ADDR=$client timeout 120 "${pre[@]}" fi_pingpong "${args[@]}" -P "$port" "$server" \
      >"$work/client" 2>&1; then ok=0; break; fi
  # The server may not listen yet on its control port: retry while it runs.
  grep -q "Connection refused\|connect" "$work/client" && kill -0 $spid 2>/dev/null || break
  sleep 0.1
done
wait $spid
srv=$?
spid=
echo "--- client"; cat "$work/client"
echo "--- server"; cat "$work/server"
[ "$ok" = 0 ] || fail "fi_pingpong client failed"
[ "$srv" = 0 ] || fail "fi_pingpong server exited $srv"
# -S all: every size from 0 bytes to 6 MiB (46 sizes) ran its iterations and was acknowledged on both sides.
for size in 0 1 64 256 1k 4k 64k 1m 6m; do
  grep -Eq "^$size +10 +=10 " "$work/client" || fail "client: no result line for $size bytes"
  grep -Eq "^$size +10 +=10 " "$work/server" || fail "server: no result line for $size bytes"
done
lines=$(grep -Ec '^[0-9.]+[km]? +10 +=10 ' "$work/client")
echo "client result lines: $lines"
[ "$lines" -ge 46 ] || fail "client: only $lines sizes completed"
exit $status
