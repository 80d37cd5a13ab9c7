#!/usr/bin/env bash
# The IRN paper's comparison (seed 001: Mittal et al., "Revisiting Network Support for RDMA",
# SIGCOMM 2018) as one command (docs/fabric.md "The IRN comparison"): RoCE (go-back-N) and IRN,
# each with and without PFC and with and without DCQCN, on a web-search workload and on incasts
# over a web-search background. Writes DIR/comparison.csv (one row per configuration), each
# configuration's fct.csv, summary.csv, queues.csv and the command that made it in a subfolder,
# plots if gnuplot is there, and prints the paper's table: IRN without PFC over RoCE with PFC.
#
#   scripts/irn-paper.sh [--scale small|paper] [--seed N] [--out DIR] [--fabric PATH] [--jobs N]
#                        [--dcqcn 0|1|both] [--lossy-ingress 0|1] [--gbn-ack-interval N]
#                        [--resume]
#
# --resume keeps the configurations of DIR that already have a summary.csv (an interrupted run).
# small: 16 hosts in two tiers (4 leaves x 4 hosts, 4 spines), 40 Gb/s, 2 us links, about a
#        minute on 2 cores (the CTest, label fabric).
# paper: the paper's 54-host three-tier fat tree (k = 6), 40 Gb/s, 2 us links, 70 % load, and
#        lossy traffic dropped by its ingress port's 240 KB (the budget PFC counts against; the
#        paper gives one buffer per port for both), not its egress queue: --lossy-ingress, whose
#        default is 1 at paper scale and 0 at small scale (docs/fabric.md "Paper scale"); and
#        RoCE asking for an ACK per packet as IRN does (the paper's section 5: "RoCE NICs already
#        support per-packet ACKs"): --gbn-ack-interval, 1 at paper scale, the host library's 64
#        at small scale.
# Exit 0 when every run finished; the PFC and IRN runs must finish every flow (RoCE without PFC
# may give up on some: that is the paper's point), else exit 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
}

scale=small seed=1 out="" fabric="" jobs=2 dcqcn_set="0 1" resume=0 lossy_ingress="" ack_interval=""
while [ $# -gt 0 ]; do
  case "$1" in
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
case "$scale" in
  small)
    : "${lossy_ingress:=0}" "${ack_interval:=64}"
    topo=(--leaf-spine "4,4,4" --latency-ns 2000 --lossy-ingress "$lossy_ingress"
          --gbn-ack-interval "$ack_interval")
    websearch=(--workload websearch --load 0.7 --flows 200)
    incast=(--workload incast --background-load 0.5 --flows 150 --incast-rounds 8
            --incast-senders 15 --incast-bytes 100000) ;;
  paper)
    : "${lossy_ingress:=1}" "${ack_interval:=1}"
    topo=(--fat-tree 6 --latency-ns 2000 --lossy-ingress "$lossy_ingress"
          --gbn-ack-interval "$ack_interval")
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
for workload in websearch incast; do
  for transport in gbn irn; do
    for pfc in 1 0; do
      for dcqcn in $dcqcn_set; do
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
             --seed "$seed" --out "$dir")
  printf '%q ' "${cmd[@]}" > "$dir/cmd.txt"
  echo >> "$dir/cmd.txt"
  local rc=0
  "${cmd[@]}" > "$dir/run.log" 2>&1 || rc=$?
  echo "$rc" > "$dir/status"
  grep '^fabric' "$dir/run.log" | sed "s|^|  |"
}

start=$(date +%s)
echo "irn-paper: scale $scale, seed $seed, ${#configs[@]} runs, $jobs at a time, into $out"
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

# Plots: the FCT CDF of each workload's configurations, and the sampled queues of the two the
# paper compares (gnuplot-nox; skipped without it).
if command -v gnuplot > /dev/null 2>&1; then
  for w in websearch incast; do
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
