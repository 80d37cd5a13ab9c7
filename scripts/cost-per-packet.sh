#!/usr/bin/env bash
# Instructions per call and per datagram, by block (issue 31, docs/performance.md "Cost per
# packet"): naa-cosim (the host library and the NAA model in one process, no sockets, so the
# count is exact and repeatable) under callgrind, twice with different numbers of calls; the
# difference divided by the extra calls (or datagrams) cancels start-up and connection set-up.
# Each function's own instructions (exclusive) go to one bucket by its name: the model's blocks,
# the SystemC kernel, the host library, protocol code (ICRC, headers), memcpy/memset, malloc.
#
#   scripts/cost-per-packet.sh BUILD_DIR [N1 N2 [naa-cosim arguments...]]
#   default: --fn nop --in gen:64 -n 50 and -n 250 (a 64 B nop call)
set -euo pipefail
build=${1:?usage: cost-per-packet.sh BUILD_DIR [N1 N2 [naa-cosim args...]]}
n1=${2:-50}
n2=${3:-250}
shift $(($# < 3 ? $# : 3))
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--fn nop --in gen:64)
cosim="$build/bin/naa-cosim"
command -v valgrind >/dev/null || { echo "cost-per-packet: valgrind missing" >&2; exit 77; }
work=$(mktemp -d /tmp/cost-per-packet.XXXXXX)
trap 'rm -rf "$work"' EXIT

profile() {  # N -> $work/N.buckets (bucket instructions), $work/N.stats
  local n=$1
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$n" "$cosim" "${args[@]}" -n "$n" \
    --stats -q >"$work/$n.stats" 2>"$work/$n.err"
  callgrind_annotate --inclusive=no --threshold=100 --auto=no "$work/cg.$n" 2>/dev/null |
    awk '
      /PROGRAM TOTALS/ { next }
      /^ *[0-9,]+ +\( *[0-9.]+%\) / {
        v = $1; gsub(",", "", v)
        # "N (P%)  file:function [object]": the function alone (file paths have no colon; they
        # may name other build folders, so they must not decide the bucket).
        f = $0
        sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", f)
        sub(/^[^:]*:/, "", f)
        sub(/ \[[^]]*\]$/, "", f)
        b = "other"
        # Verilated code first: its names (Vcrc32_w64___024root...) contain block names.
        if (f ~ /^V[A-Za-z_0-9]+___024|^V[A-Za-z_0-9]+::|Verilated|VL_|vl_|naa::rtl::/) b = "Verilated RTL + adapters"
        else if (f ~ /naa::sim::NetPort|LinkModel|impair::/) b = "sim NetPort (link, faults)"
        else if (f ~ /naa::sim::RxPipe|RxChecks|rx_checks/) b = "sim RxPipe"
        else if (f ~ /naa::sim::TxPipe/) b = "sim TxPipe"
        else if (f ~ /naa::sim::Transport|naa::sim::Qp|naa::sim::Irn/) b = "sim Transport"
        else if (f ~ /naa::sim::KernelEngine|naa::sim::.*Kernel|naa::sim_rtl/) b = "sim KernelEngine + kernels"
        else if (f ~ /naa::sim::Memory|SparseStore|tlm::|tlm_utils::/) b = "sim Memory (TLM)"
        else if (f ~ /naa::sim::Mr|naa::sim::CmAgent|naa::sim::Handler/) b = "sim MR table, MRSP, CM, handlers"
        else if (f ~ /naa::sim::PacketPool|naa::sim::Channel|naa::sim::CycleMeter|naa::sim::StageQueue|naa::sim::ReadyQueue/) b = "sim channels, pool"
        else if (f ~ /naa::sim::/) b = "sim other"
        else if (f ~ /sc_core::|sc_dt::|qt_block|qt_start|qt_yield|QuickThreads|sc_cor/) b = "SystemC kernel"
        else if (f ~ /naa::cosim::/) b = "cosim driver"
        else if (f ~ /naa::host::/) b = "host library"
        else if (f ~ /naa::protocol::|crc32|Crc32/) b = "protocol (ICRC, headers)"
        else if (f ~ /memcpy|memmove|memset/) b = "memcpy/memset"
        else if (f ~ /malloc|free|operator new|operator delete|_int_|cfree/) b = "malloc/free"
        sum[b] += v
      }
      END { for (b in sum) printf "%s\t%d\n", b, sum[b] }' >"$work/$n.buckets"
  # Calls into the SystemC kernel (from the raw profile: names are compressed to "(id)" after
  # their first use): thread activations (every one ends in a call of sc_core::wait; counting
  # suspend_me instead counts each twice, once per stack of the coroutine switch), method
  # process runs, event notifications and triggers, sc_start.
  awk '
    function name_of(s,   id, rest) {
      id = s; sub(/\).*/, ")", id); rest = s; sub(/^\([0-9]+\) ?/, "", rest)
      if (rest != "") names[id] = rest
      return id
    }
    /^cfn=/ { cur = name_of(substr($0, 5)); next }
    /^fn=/ { (void = name_of(substr($0, 4))); next }
    /^calls=/ { split(substr($0, 7), a, " "); calls[cur] += a[1]; next }
    END {
      for (id in calls) {
        n = names[id]
        k = ""
        if (n ~ /^sc_core::wait\(/) k = "systemc.thread_waits (activations)"
        else if (n ~ /^sc_core::sc_method_process::run_process|^sc_core::sc_method_process::.*execute/) k = "systemc.method_runs"
        else if (n ~ /^sc_core::sc_event::notify(_delayed)?\(/) k = "systemc.event_notify_calls"
        else if (n ~ /^sc_core::sc_event::trigger\(/) k = "systemc.event_triggers"
        else if (n ~ /^sc_core::sc_start\(/) k = "systemc.sc_start_calls"
        if (k != "") sum[k] += calls[id]
      }
      for (k in sum) printf "%s\t%d\n", k, sum[k]
    }' "$work/cg.$n" >"$work/$n.calls"
  callgrind_annotate "$work/cg.$n" 2>/dev/null | awk '/PROGRAM TOTALS/ { v = $1; gsub(",", "", v); print v }' \
    >"$work/$n.total"
}
profile "$n1"
profile "$n2"
stat() { grep -m1 "^$2=" "$work/$1.stats" | cut -d= -f2 || echo 0; }
datagrams() { echo $(($(stat "$1" net_port.rx_datagrams) + $(stat "$1" net_port.tx_datagrams))); }
dcalls=$((n2 - n1))
ddg=$(($(datagrams "$n2") - $(datagrams "$n1")))
[ "$ddg" -gt 0 ] || ddg=1
echo "naa-cosim ${args[*]}: -n $n2 minus -n $n1 = $dcalls calls, $ddg datagrams (received + sent by the NAA)"
printf "%-36s %14s %12s\n" "bucket (own instructions)" "per call" "per datagram"
t1=$(cat "$work/$n1.total")
t2=$(cat "$work/$n2.total")
join -t $'\t' -a1 -a2 -e 0 -o 0,1.2,2.2 <(sort "$work/$n1.buckets") <(sort "$work/$n2.buckets") |
  awk -F'\t' -v c="$dcalls" -v d="$ddg" '{ x = $3 - $2; printf "%-36s %14.0f %12.0f\n", $1, x / c, x / d }' |
  sort -t$'\t' -k1,1
printf "%-36s %14.0f %12.0f\n" "total" "$(((t2 - t1) / dcalls))" "$(((t2 - t1) / ddg))"
join -t $'\t' -a1 -a2 -e 0 -o 0,1.2,2.2 <(sort "$work/$n1.calls") <(sort "$work/$n2.calls") |
  awk -F'\t' -v c="$dcalls" -v d="$ddg" '{ x = $3 - $2; printf "%-36s %14.2f %12.2f\n", $1, x / c, x / d }'
for k in activity.delta_cycles activity.time_steps activity.sc_start_calls; do
  grep -q "^$k=" "$work/$n2.stats" || continue  # a build before these counters
  printf "%-36s %14.2f %12.2f\n" "$k" "$(echo "($(stat "$n2" $k) - $(stat "$n1" $k)) / $dcalls" | bc -l)" \
    "$(echo "($(stat "$n2" $k) - $(stat "$n1" $k)) / $ddg" | bc -l)"
done
