#!/usr/bin/env bash
# libfabric's own tools over the provider naa beyond FI_EP_MSG (issue 29), label ofi:
#   fi_rxm.sh rdm MODE LIBDIR   `fi_pingpong -p "naa;ofi_rxm" -e rdm -m MODE -S all -c`: RDM
#                               endpoints of libfabric's ofi_rxm layered over naa's FI_EP_MSG, in
#                               transmit mode MODE (msg or tagged), server and client on two
#                               loopback addresses of this test's block, every size from 0 B to
#                               fi_pingpong's largest, every byte checked (-c)
#   fi_rxm.sh shared MODE LIBDIR  the same with two server/client pairs at once, all four
#                               processes on ONE address (FI_NAA_SHARE_ADDR=1, docs/adr/0006)
#   fi_rxm.sh params LIBDIR     `fi_info -e` lists every FI_NAA_* variable of the provider
# Exit 77 (CTest "Skipped") when fi_info / fi_pingpong are missing, unless NAA_REQUIRE_TOOLS=1.
set -u
mode=$1
shift
txmode=
if [ "$mode" = rdm ] || [ "$mode" = shared ]; then txmode=$1; shift; fi
libdir=$1
tool=fi_info
[ "$mode" = params ] || tool=fi_pingpong
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
  for v in FI_NAA_ADDR FI_NAA_CONNECT_TIMEOUT_MS FI_NAA_PCAP FI_NAA_IRN FI_NAA_PROGRESS_THREAD \
      FI_NAA_SHARE_ADDR; do
    grep -q "^# $v: " <<<"$out" || fail "fi_info -e does not list $v"
  done
  grep -A2 '^# FI_NAA_' <<<"$out"
  exit $status
fi

. "$(dirname "$0")/../support/test_addresses.sh"
naa_claim_addresses || exit 1
port=$((40000 + ${NAA_TEST_BLOCK##*.} % 20000))
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT
args=(-p "naa;ofi_rxm" -e rdm -m "$txmode" -S all -c)

# One server/client pair: server on $1, client on $2, control port $3, outputs $work/$4-*.
run_pair() {
  local server=$1 client=$2 ctrl=$3 tag=$4 spid ok=1 srv
  FI_NAA_ADDR=$server timeout 120 "${pre[@]}" fi_pingpong "${args[@]}" -B "$ctrl" \
    >"$work/$tag-server" 2>&1 &
  spid=$!
  for _ in $(seq 100); do
    if FI_NAA_ADDR=$client timeout 120 "${pre[@]}" fi_pingpong "${args[@]}" -P "$ctrl" "$server" \
        >"$work/$tag-client" 2>&1; then ok=0; break; fi
    # The server may not listen yet on its control port: retry while it runs.
    grep -q "Connection refused\|connect" "$work/$tag-client" && kill -0 $spid 2>/dev/null || break
    sleep 0.1
  done
  wait $spid
  srv=$?
  echo "client=$ok server=$srv" >"$work/$tag-status"
}

# The results of pair $1: both sides ran every size, every byte checked (-c).
check_pair() {
  local tag=$1 lines
  echo "--- $tag client"; cat "$work/$tag-client"
  echo "--- $tag server"; cat "$work/$tag-server"
  grep -q "^client=0 " "$work/$tag-status" || fail "$tag: fi_pingpong client failed"
  grep -q " server=0$" "$work/$tag-status" || fail "$tag: fi_pingpong server failed"
  # -S all: every size from 0 bytes to 6 MiB (46 sizes) ran its iterations and was acknowledged on
  # both sides.
  for size in 0 1 64 256 1k 4k 64k 1m 6m; do
    grep -Eq "^$size +10 +=10 " "$work/$tag-client" || fail "$tag client: no result line for $size bytes"
    grep -Eq "^$size +10 +=10 " "$work/$tag-server" || fail "$tag server: no result line for $size bytes"
  done
  lines=$(grep -Ec '^[0-9.]+[km]? +10 +=10 ' "$work/$tag-client")
  echo "$tag client result lines: $lines"
  [ "$lines" -ge 46 ] || fail "$tag client: only $lines sizes completed"
}

if [ "$mode" = shared ]; then
  # Four processes on one address: each pair's server and client, and the other pair, share it.
  export FI_NAA_SHARE_ADDR=1
  run_pair "$NAA_TEST_BLOCK.1" "$NAA_TEST_BLOCK.1" "$port" pair1 &
  pids+=($!)
  run_pair "$NAA_TEST_BLOCK.1" "$NAA_TEST_BLOCK.1" "$((port + 1))" pair2 &
  pids+=($!)
  wait "${pids[@]}"
  pids=()
  check_pair pair1
  check_pair pair2
  exit $status
fi
run_pair "$NAA_TEST_BLOCK.1" "$NAA_TEST_BLOCK.2" "$port" pair
check_pair pair
exit $status
