#!/usr/bin/env bash
# The IRN paper's comparison (seed 001: Mittal et al., "Revisiting Network Support for RDMA",
# SIGCOMM 2018) as one command (docs/fabric.md "The IRN comparison"): RoCE (go-back-N) and IRN,
# each with and without PFC and with and without DCQCN, on a web-search workload and on incasts
# over a web-search background. Writes DIR/comparison.csv (one row per configuration), each
# configuration's fct.csv, summary.csv, queues.csv and the command that made it in a subfolder,
# plots if gnuplot is there, and prints the paper's table: IRN without PFC over RoCE with PFC.
#
#   scripts/irn-paper.sh [--scale small|paper] [--seed N] [--out DIR] [--fabric PATH] [--jobs N]
#                        [--dcqcn 0|1|both] [--workload websearch|incast|both] [--headline]
#                        [--lossy-ingress 0|1] [--gbn-ack-interval N] [--resume]
#                        [-- NAA-FABRIC-OPTIONS...]
#
# --resume keeps the configurations of DIR that already have a summary.csv (an interrupted run).
# --workload and --headline run a part (a targeted look): one workload, and only the two
# configurations the paper's table compares (RoCE with PFC, IRN without PFC). Options after --
# go to every naa-fabric run, after the scale's own (a later option wins).
# small: 16 hosts in two tiers (4 leaves x 4 hosts, 4 spines), 40 Gb/s, 2 us links, about a
#        minute on 2 cores (the CTest, label fabric).
# paper: the paper's 54-host three-tier fat tree (k = 6), 40 Gb/s, 2 us links, 70 % load, and
#        lossy traffic dropped by its ingress port's 240 KB (the budget PFC counts against; the
#        paper gives one buffer per port for both), not its egress queue: --lossy-ingress, whose
#        default is 1 at paper scale and 0 at small scale (docs/fabric.md "Paper scale").
# RoCE asks for an ACK every --gbn-ack-interval packets, 64 at both scales: the paper's RoCE
# baseline sent no ACKs at all (seed 001 section 5: "did not use ACKs for the RoCE (with PFC)
# baseline"), 64 is the fewest the host library asks for.
# Exit 0 when every run finished; the PFC and IRN runs must finish every flow (RoCE without PFC
# may give up on some: that is the paper's point), else exit 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '2,40p' "$0" | sed -n '/^#/p' | sed 's/^# \{0,1\}//'
}

scale=small seed=1 out="" fabric="" jobs=2 dcqcn_set="0 1" resume=0 lossy_ingress="" ack_interval=""
workloads="websearch incast" headline=0 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; extra=("$@"); break ;;
    --headline) headline=1; shift ;;
    --workload)
      case "${2:-}" in websearch|incast) workloads=$2 ;; both) workloads="websearch incast" ;;
        *) echo "irn-paper.sh: --workload is websearch, incast or both" >&2; exit 2 ;; esac
      shift 2 ;;
    --scale) scale=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --fabric) fabric=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --resume) resume=1; shift ;;
    --lossy-ingress)
      case "${2:-}" in 0|1) lossy_ingress=$2 ;;
        *) echo "irn-paper.sh: --lossy-ingress is 0 or 1" >&2; exit 2 ;; esac
      shift 2 ;;
    --gbn-ack-interval)
      [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] && [ "$2" -le 64 ] || {
        echo "irn-paper.sh: --gbn-ack-interval takes 1..64" >&2; exit 2; }
      ack_interval=$2; shift 2 ;;
    --dcqcn)
      case "${2:-}" in 0|1) dcqcn_set=$2 ;; both) dcqcn_set="0 1" ;;
        *) echo "irn-paper.sh: --dcqcn is 0, 1 or both" >&2; exit 2 ;; esac
      shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "irn-paper.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
# Both scales run the transports as the IRN paper's evaluation does (docs/fabric.md "The IRN
# comparison", settings table): RoCE asks for an ACK only every 64 packets (the paper's RoCE sent
# none, seed 001 section 5) and has no BDP cap (BDP-FC is IRN's; a 1024-PSN window, which under
# PFC gives the FCTs of no cap); IRN's RTO_high / RTO_low are 320 / 100 us and its timer starts
# when the NIC puts the packet on the wire.
transports=(--gbn-window 1024 --irn-rto-us "320,100" --wire-timers 1)
case "$scale" in
  small)
    : "${lossy_ingress:=0}" "${ack_interval:=64}"
    topo=(--leaf-spine "4,4,4" --latency-ns 2000 --lossy-ingress "$lossy_ingress"
          --gbn-ack-interval "$ack_interval" "${transports[@]}")
    websearch=(--workload websearch --load 0.7 --flows 200)
    incast=(--workload incast --background-load 0.5 --flows 150 --incast-rounds 8
            --incast-senders 15 --incast-bytes 100000) ;;
  paper)
    : "${lossy_ingress:=1}" "${ack_interval:=64}"
    topo=(--fat-tree 6 --latency-ns 2000 --lossy-ingress "$lossy_ingress"
          --gbn-ack-interval "$ack_interval" "${transports[@]}")
    websearch=(--workload websearch --load 0.7 --flows 2000)
    incast=(--workload incast --background-load 0.5 --flows 1000 --incast-rounds 20
            --incast-senders 30 --incast-bytes 100000) ;;
  *) echo "irn-paper.sh: --scale is small or paper, not '$scale'" >&2; exit 2 ;;
esac
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "irn-paper.sh: --seed takes a number, not '$seed'" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "irn-paper.sh: --jobs takes a number >= 1" >&2; exit 2; }
if [ -z "$fabric" ]; then
  for f in "$root/build/bin/naa-fabric" "$root/build-release/bin/naa-fabric"; do
    [ -x "$f" ] && { fabric=$f; break; }
  done
fi
if [ -z "$fabric" ] || [ ! -x "$fabric" ]; then
  echo "irn-paper.sh: naa-fabric not found; build it (cmake --build build --target naa-fabric) or give --fabric" >&2
  exit 2
fi
[ -n "$out" ] || out=irn-paper-$scale-seed$seed
mkdir -p "$out"

configs=()
for workload in $workloads; do
  for transport in gbn irn; do
    for pfc in 1 0; do
      for dcqcn in $dcqcn_set; do
        if [ "$headline" = 1 ] && [ "$transport/$pfc" != gbn/1 ] && [ "$transport/$pfc" != irn/0 ]; then
          continue
        fi
        configs+=("$workload $transport $pfc $dcqcn")
      done
    done
  done
done

run_one() {  # workload transport pfc dcqcn
  local w=$1 t=$2 p=$3 d=$4 dir args
  dir="$out/$w-$t-pfc$p-dcqcn$d"
  if [ "$resume" = 1 ] && [ -f "$dir/summary.csv" ]; then
    grep '^fabric' "$dir/run.log" | sed "s|^|  |"
    return 0
  fi
  mkdir -p "$dir"
  if [ "$w" = websearch ]; then args=("${websearch[@]}"); else args=("${incast[@]}"); fi
  local cmd=("$fabric" "${topo[@]}" "${args[@]}" --transport "$t" --pfc "$p" --dcqcn "$d"
             --seed "$seed" ${extra[@]+"${extra[@]}"} --out "$dir")
  printf '%q ' "${cmd[@]}" > "$dir/cmd.txt"
  echo >> "$dir/cmd.txt"
  local rc=0
  "${cmd[@]}" > "$dir/run.log" 2>&1 || rc=$?
  echo "$rc" > "$dir/status"
  grep '^fabric' "$dir/run.log" | sed "s|^|  |"
}

start=$(date +%s)
echo "irn-paper: scale $scale, seed $seed, ${#configs[@]} runs, $jobs at a time, into $out${extra[*]+ (extra: ${extra[*]})}"
running=0
for c in "${configs[@]}"; do
  # shellcheck disable=SC2086
  run_one $c &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

fail=0
echo "workload,transport,pfc,dcqcn,flows,avg_fct_ns,p99_fct_ns,avg_slowdown,drops,pauses,retransmitted" \
  > "$out/comparison.csv"
for c in "${configs[@]}"; do
  # shellcheck disable=SC2086
  set -- $c
  dir="$out/$1-$2-pfc$3-dcqcn$4"
  status=$(cat "$dir/status")
  if [ ! -f "$dir/summary.csv" ]; then
    echo "FAIL: $dir: no summary (exit $status):"; tail -5 "$dir/run.log"; fail=1; continue
  fi
  # summary.csv: workload,transport,pfc,dcqcn,flows,finished,avg_fct_ns,p99_fct_ns,
  # avg_slowdown,p99_slowdown,drops,pauses,retransmitted,...
  tail -1 "$dir/summary.csv" | awk -F, -v OFS=, '{print $1,$2,$3,$4,$5,$7,$8,$9,$11,$12,$13}' \
    >> "$out/comparison.csv"
  finished=$(tail -1 "$dir/summary.csv" | cut -d, -f6)
  flows=$(tail -1 "$dir/summary.csv" | cut -d, -f5)
  if [ "$finished" != "$flows" ] && { [ "$3" = 1 ] || [ "$2" = irn ]; }; then
    echo "FAIL: $dir: $finished of $flows flows finished (PFC and IRN runs must finish all)"
    fail=1
  fi
done

echo
echo "IRN without PFC / RoCE (go-back-N) with PFC: ratio (lower is better for IRN), and the"
echo "improvement the paper reports as 6-83 %; RoCE+PFC's absolute figures beside"
awk -F, 'NR > 1 { key = $1 "," $2 "," $3 "," $4; fct[key] = $6; p99[key] = $7; sl[key] = $8 }
  END {
    printf "%-10s %-6s %-28s %-28s %-28s\n", "workload", "dcqcn", "avg FCT", "p99 FCT", "avg slowdown"
    split("websearch incast", ws, " ")
    for (i = 1; i <= 2; i++) for (d = 0; d <= 1; d++) {
      b = ws[i] ",gbn,1," d; x = ws[i] ",irn,0," d
      if (!(b in fct) || !(x in fct) || fct[b] == 0 || p99[b] == 0 || sl[b] == 0) continue
      printf "%-10s %-6d %.3f (%+.0f%%) of %.0f us   %.3f (%+.0f%%) of %.0f us   %.3f (%+.0f%%) of %.2f\n",
        ws[i], d, fct[x] / fct[b], 100 * (1 - fct[x] / fct[b]), fct[b] / 1000,
        p99[x] / p99[b], 100 * (1 - p99[x] / p99[b]), p99[b] / 1000,
        sl[x] / sl[b], 100 * (1 - sl[x] / sl[b]), sl[b]
    }
  }' "$out/comparison.csv" | tee "$out/ratios.txt"

# The incast mix by flow class: the background (web-search flows, PFC's victims in the paper)
# and the incast rounds (flows of --incast-bytes with the same start and receiver), with each
# round's request completion time (its last flow's end less its start).
incast_senders=${incast[9]} incast_bytes=${incast[11]}
if [[ " $workloads " == *" incast "* ]]; then
  echo "workload,transport,pfc,dcqcn,background_flows,background_avg_fct_ns,background_avg_slowdown,incast_flows,incast_avg_fct_ns,rounds,avg_rct_ns" \
    > "$out/incast.csv"
  for c in "${configs[@]}"; do
    # shellcheck disable=SC2086
    set -- $c
    [ "$1" = incast ] || continue
    f="$out/$1-$2-pfc$3-dcqcn$4/fct.csv"
    [ -f "$f" ] || continue
    awk -F, -v OFS=, -v key="$1,$2,$3,$4" -v bytes="$incast_bytes" -v m="$incast_senders" '
      FNR == 1 { next }
      { n++; b[n] = $4; st[n] = $5; fct[n] = $6; sl[n] = $8; g[n] = $5 "/" $3
        if ($4 == bytes) cnt[g[n]]++ }
      END {
        for (i = 1; i <= n; i++) {
          if (b[i] == bytes && cnt[g[i]] == m) {
            inc++; incf += fct[i]
            e = st[i] + fct[i]
            if (!(g[i] in end) || e > end[g[i]]) { end[g[i]] = e; start[g[i]] = st[i] }
          } else { bg++; bgf += fct[i]; bgs += sl[i] }
        }
        for (r in end) { rounds++; rct += end[r] - start[r] }
        printf "%s,%d,%.1f,%.4f,%d,%.1f,%d,%.1f\n", key, bg, bg ? bgf / bg : 0, bg ? bgs / bg : 0,
               inc, inc ? incf / inc : 0, rounds, rounds ? rct / rounds : 0
      }' "$f" >> "$out/incast.csv"
  done
  echo
  echo "Incast mix by class, IRN without PFC / RoCE with PFC (RoCE+PFC's figures beside):"
  awk -F, 'NR > 1 { k = $2 "," $3 "," $4; bf[k] = $6; bs[k] = $7; inf[k] = $9; rct[k] = $11 }
    END {
      printf "%-6s %-26s %-26s %-26s %-26s\n", "dcqcn", "background avg FCT", "background slowdown", "incast flows avg FCT", "avg RCT"
      for (d = 0; d <= 1; d++) {
        b = "gbn,1," d; x = "irn,0," d
        if (!(b in bf) || !(x in bf) || bf[b] == 0 || inf[b] == 0 || rct[b] == 0) continue
        printf "%-6d %.3f of %.0f us%9s %.3f of %.2f%12s %.3f of %.0f us%9s %.3f of %.0f us\n", d,
          bf[x] / bf[b], bf[b] / 1000, "", bs[x] / bs[b], bs[b], "", inf[x] / inf[b], inf[b] / 1000, "",
          rct[x] / rct[b], rct[b] / 1000
      }
    }' "$out/incast.csv" | tee -a "$out/ratios.txt"
fi

# Plots: the FCT CDF of each workload's configurations, and the sampled queues of the two the
# paper compares (gnuplot-nox; skipped without it).
if command -v gnuplot > /dev/null 2>&1; then
  for w in $workloads; do
    plot=""
    for c in "${configs[@]}"; do
      # shellcheck disable=SC2086
      set -- $c
      [ "$1" = "$w" ] || continue
      d="$out/$1-$2-pfc$3-dcqcn$4"
      awk -F, 'NR > 1 && $6 >= 0 {print $6 / 1000}' "$d/fct.csv" | sort -g |
        awk '{a[NR] = $1} END {for (i = 1; i <= NR; i++) print a[i], i / NR}' > "$d/fct_cdf.dat"
      plot="$plot${plot:+, }'$d/fct_cdf.dat' with lines title '$2 pfc=$3 dcqcn=$4'"
    done
    gnuplot -e "set terminal pngcairo size 900,600 noenhanced; set output '$out/fct_cdf_$w.png'; \
      set logscale x; set xlabel 'FCT (us)'; set ylabel 'CDF'; set key bottom right; \
      set title '$w: flow completion times'; plot $plot" 2>/dev/null ||
      gnuplot -e "set terminal png size 900,600; set output '$out/fct_cdf_$w.png'; \
      set logscale x; set xlabel 'FCT (us)'; set ylabel 'CDF'; set key bottom right; plot $plot" \
        2>/dev/null || true
    q1="$out/$w-gbn-pfc1-dcqcn0/queues.csv" q2="$out/$w-irn-pfc0-dcqcn0/queues.csv"
    gnuplot -e "set terminal png size 900,600; set output '$out/queues_$w.png'; \
      set datafile separator ','; set xlabel 'time (us)'; set ylabel 'max egress queue (KB)'; \
      set title '$w: longest switch queue per sample'; \
      plot '$q1' every ::1 using (\$1/1000):(\$4/1000) with dots title 'RoCE+PFC', \
           '$q2' every ::1 using (\$1/1000):(\$4/1000) with dots title 'IRN no PFC'" \
      2>/dev/null || true
  done
fi
echo "irn-paper: wrote $out/comparison.csv in $(( $(date +%s) - start )) s wall"
exit $fail
