#!/bin/sh
# Flow control on IRN (docs/protocol.md 8.3 "Streaming on IRN"): a 1 MiB streamed accumulate that
# 8 HPUs cannot keep up with. On IRN a packet the handlers have no room for is dropped (counted
# as handler.rnr_naks) and selectively retransmitted, never RNR-NAKed; every payload handler runs
# once per packet and the accumulated bytes equal the go-back-N run's (which RNR-NAKs).
# Usage: irn_flow_control_check.sh NAA_COSIM ACCUMULATE_ELF
set -eu
cosim=$1 image=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
stat() { sed -n "s/^$1=//p" "$2"; }
for t in gbn irn; do
  mkdir -p "$dir/$t"
  extra=
  [ $t = irn ] && extra=--irn
  "$cosim" --fn 25 --handler "$image" --inout gen:1M:1 --stream-in gen:1M:2 --stats \
    --save-regions "$dir/$t" $extra >"$dir/$t.txt" 2>&1 || fail "$t: naa-cosim exited $?"
  grep -q "call 1 rc 0x0 " "$dir/$t.txt" || { cat "$dir/$t.txt"; fail "$t: call failed"; }
  [ "$(stat handler.payloads "$dir/$t.txt")" = 256 ] || fail "$t: handler.payloads"
  [ "$(stat handler.headers "$dir/$t.txt")" = 1 ] || fail "$t: handler.headers"
  [ "$(stat handler.duplicates "$dir/$t.txt")" = 0 ] || fail "$t: handler.duplicates"
  [ "$(stat handler.rnr_naks "$dir/$t.txt")" -gt 0 ] || fail "$t: flow control never started"
done
[ "$(stat cm.irn_accepted "$dir/irn.txt")" = 1 ] || fail "the connection is not IRN"
[ "$(stat transport.nak_sent.rnr "$dir/gbn.txt")" -gt 0 ] || fail "go-back-N sent no RNR NAK"
[ -z "$(stat transport.nak_sent.rnr "$dir/irn.txt")" ] || [ "$(stat transport.nak_sent.rnr "$dir/irn.txt")" = 0 ] ||
  fail "IRN sent RNR NAKs"
cmp "$dir/gbn/region0.after" "$dir/irn/region0.after" || fail "accumulated bytes differ"
cmp -s "$dir/irn/region0.before" "$dir/irn/region0.after" && fail "nothing was accumulated"
echo "ok: IRN dropped $(stat handler.rnr_naks "$dir/irn.txt") packets for flow control," \
  "go-back-N RNR-NAKed $(stat transport.nak_sent.rnr "$dir/gbn.txt"); same bytes"
