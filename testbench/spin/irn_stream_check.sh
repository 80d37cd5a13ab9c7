#!/bin/sh
# IRN and sPIN streaming compose (issue 28 item 5; docs/protocol.md 8.3 "Streaming on IRN"):
# a streamed call on an IRN connection with loss and reordering in both directions gives the
# bytes of the same call on go-back-N without faults; each payload handler ran once per packet
# (handler.payloads = packets, handler.duplicates = 0), the header handler once and before every
# payload handler, also when the message's first packet did not arrive first.
# Usage: irn_stream_check.sh NAA_COSIM ORDER_CHECK_ELF SEED [FIRST_OFFSET]
#   ORDER_CHECK_ELF: testbench/spin/handlers/order_check.c (fn 21); FIRST_OFFSET: the offset of
#   the first packet to reach the handlers with this seed, asserted so that the test keeps
#   covering an out-of-order start (the seeded faults are deterministic: simulated time only).
set -eu
cosim=$1 image=$2 seed=$3 first=${4:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
stat() { sed -n "s/^$1=//p" "$2"; }
packets=64  # 256 KiB at MTU 4096
faults="--fault-rx loss=0.05,reorder=0.05 --fault-tx loss=0.05,reorder=0.05"
run() {  # run NAME ARGS...: one streamed call, regions saved to $dir/NAME
  name=$1
  shift
  mkdir -p "$dir/$name"
  "$cosim" --fn 21 --handler "$image" --stream-arg 0xA5 --stream-inout gen:256K:1 --out 32 \
    --save-regions "$dir/$name" --stats --seed "$seed" "$@" >"$dir/$name.txt" 2>&1 || {
    status=$?
    cat "$dir/$name.txt"
    fail "$name: naa-cosim exited $status"
  }
  grep -q "call 1 rc 0x0 " "$dir/$name.txt" || { cat "$dir/$name.txt"; fail "$name: call failed"; }
}
run gbn
run irn --irn $faults
out=$dir/irn.txt
[ "$(stat cm.irn_accepted "$out")" = 1 ] || fail "the connection is not IRN"
[ "$(stat cm.irn_accepted "$dir/gbn.txt")" = 0 ] || fail "the reference is not go-back-N"
for k in net_port.fault_rx.loss net_port.fault_rx.reorder net_port.fault_tx.loss \
  net_port.fault_tx.reorder; do
  [ "$(stat $k "$out")" -gt 0 ] || fail "$k = 0: the faults did not happen"
done
# The bytes: IRN under faults = go-back-N without, and both = input XOR 0xA5 (an outside check).
cmp "$dir/gbn/region0.after" "$dir/irn/region0.after" || fail "streamed region differs"
/usr/bin/python3 - "$dir/irn/region0.before" "$dir/irn/region0.after" <<'PY' || fail "not input ^ 0xA5"
import sys
before, after = (open(p, "rb").read() for p in sys.argv[1:3])
sys.exit(0 if len(before) == 262144 and after == bytes(b ^ 0xA5 for b in before) else 1)
PY
# The handlers' own record: headers 1, payloads, payloads before the header 0, bytes.
cmp -n 16 "$dir/gbn/region1.after" "$dir/irn/region1.after" || fail "handler counters differ"
set -- $(od -An -tu4 -N20 "$dir/irn/region1.after")
[ "$1 $2 $3 $4" = "1 $packets 0 262144" ] || fail "handler record $1 $2 $3 $4"
[ -z "$first" ] || [ "$(($5 - 1))" = "$first" ] ||
  fail "first packet at the handlers at offset $(($5 - 1)), expected $first"
# The engine's counters: each payload handler exactly once per packet, no duplicate reached it.
[ "$(stat handler.headers "$out")" = 1 ] || fail "handler.headers $(stat handler.headers "$out")"
[ "$(stat handler.payloads "$out")" = $packets ] || fail "handler.payloads $(stat handler.payloads "$out")"
[ "$(stat handler.duplicates "$out")" = 0 ] || fail "handler.duplicates $(stat handler.duplicates "$out")"
[ "$(stat handler.completions "$out")" = 1 ] || fail "handler.completions"
echo "ok: seed $seed, first packet at the handlers at offset $(($5 - 1)), $(stat net_port.fault_rx.loss "$out")+$(stat net_port.fault_tx.loss "$out") losses"
