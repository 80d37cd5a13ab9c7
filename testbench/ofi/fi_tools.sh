#!/usr/bin/env bash
# Interop with libfabric's own tools (libfabric-bin) through the provider naa (ofi/):
#   fi_tools.sh info LIBDIR       `fi_info -p naa` lists the FI_EP_MSG entry with its attributes
#                                 (FI_MSG and FI_RMA; no tagged messages or atomics; 4-byte keys),
#                                 and libnaa-fi.so exports fi_prov_ini alone
#   fi_tools.sh pingpong LIBDIR   `fi_pingpong -p naa -e msg` server and client, on two loopback
#                                 addresses of this test's own block, pass at the default sizes
#                                 (-c: fi_pingpong checks the bytes of every message)
# Exit 77 (CTest "Skipped") when fi_info / fi_pingpong are missing, unless NAA_REQUIRE_TOOLS=1.
set -u
mode=$1 libdir=$2
tool=fi_info
[ "$mode" = pingpong ] && tool=fi_pingpong
if ! command -v "$tool" >/dev/null 2>&1; then
  if [ "${NAA_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "$tool not found (apt-get install libfabric-bin), and NAA_REQUIRE_TOOLS=1 requires it"
    exit 1
  fi
  echo "SKIPPED: $tool not found (apt-get install libfabric-bin)"
  exit 77
fi
export FI_PROVIDER_PATH=$libdir FI_PROVIDER=naa
# ThreadSanitizer (the tsan preset): the tools are not instrumented, so the TSan runtime must be in
# the process before they load the instrumented provider; only the tools get it, not this shell.
pre=()
[ -n "${NAA_TSAN_PRELOAD:-}" ] && pre=(env "LD_PRELOAD=$NAA_TSAN_PRELOAD")
status=0
fail() { echo "FAIL: $*"; status=1; }

if [ "$mode" = info ]; then
  # Only the entry point is exported (hidden visibility and ofi/naa-fi.map).
  if command -v nm >/dev/null 2>&1; then
    syms=$(nm -D --defined-only "$libdir/libnaa-fi.so" | awk '{print $3}' | tr '\n' ' ')
    [ "$syms" = "fi_prov_ini " ] || fail "libnaa-fi.so exports '$syms', not only fi_prov_ini"
  fi
  out=$(timeout 30 "${pre[@]}" fi_info -p naa -t FI_EP_MSG -v 2>&1) || { echo "$out"; fail "fi_info exited $?"; }
  echo "$out"
  check() { grep -Eq -- "$1" <<<"$out" || fail "fi_info: no line matching '$1'"; }
  check '^ *type: FI_EP_MSG$'
  check '^ *prov_name: naa$'
  check '^ *protocol: FI_PROTO_RDMA_CM_IB_RC$'
  check '^ *caps: \[ FI_MSG, FI_RMA, FI_READ, FI_WRITE, FI_RECV, FI_SEND, FI_REMOTE_READ, FI_REMOTE_WRITE \]$'
  check '^ *mr_mode: \[ FI_MR_LOCAL, FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY \]$'
  check '^ *mr_key_size: 4$'
  check '^ *cq_data_size: 4$'
  check '^ *max_msg_size: 2147483648$'
  check '^ *addr_format: FI_SOCKADDR_IN$'
  # Out of scope (docs/host/libfabric.md): never offered by the naa entry itself.
  naa_caps=$(grep -E '^ *caps:' <<<"$out" | head -1)
  grep -q 'FI_TAGGED\|FI_ATOMIC' <<<"$naa_caps" && fail "naa offers tagged messages or atomics"
  # An application asking for what we lack gets nothing from naa itself.
  for t in FI_EP_RDM FI_EP_DGRAM; do
    o=$(timeout 30 "${pre[@]}" fi_info -p naa -t $t 2>&1)
    grep -q '^provider: naa$' <<<"$o" && fail "fi_info -t $t lists the naa entry"
  done
  o=$(timeout 30 "${pre[@]}" fi_info -p naa -c FI_ATOMIC 2>&1)
  grep -q '^provider: naa$' <<<"$o" && fail "fi_info -c FI_ATOMIC lists the naa entry"
  exit $status
fi

. "$(dirname "$0")/../support/test_addresses.sh"
naa_claim_addresses || exit 1
server=$NAA_TEST_BLOCK.1 client=$NAA_TEST_BLOCK.2
# The control (out-of-band) TCP port of fi_pingpong: one of the block's own, by its number.
port=$((40000 + ${NAA_TEST_BLOCK##*.} % 20000))
work=$(mktemp -d)
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; rm -rf "$work"' EXIT
FI_NAA_ADDR=$server timeout 120 "${pre[@]}" fi_pingpong -p naa -e msg -c -B "$port" >"$work/server" 2>&1 &
spid=$!
ok=1
for i in $(seq 100); do
  if FI_NAA_ADDR=$client timeout 120 "${pre[@]}" fi_pingpong -p naa -e msg -c -P "$port" "$server" \
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
# Every default size ran its iterations and was acknowledged (10 sent, =10 acked).
for size in 64 256 1k 4k 64k 1m; do
  grep -Eq "^$size +10 +=10 " "$work/client" || fail "client: no result line for $size bytes"
  grep -Eq "^$size +10 +=10 " "$work/server" || fail "server: no result line for $size bytes"
done
exit $status
