#!/usr/bin/env bash
# scripts/irn-paper.sh --scale small (issue 27; docs/fabric.md "The IRN comparison"): 16 runs on
# a 16-host leaf-spine. Asserts
# - comparison.csv has the 16 configurations with the issue's columns;
# - every PFC run and every IRN run finished every flow (the script's own check);
# - the same seed gives an identical fct.csv (one configuration rerun from its cmd.txt) and
#   another seed a different one;
# - the directions of the comparison this model reproduces (dcqcn 0; docs/fabric.md says which
#   of the paper's do not, and why): RoCE needs PFC (without it average FCT and slowdown are
#   worse, both workloads); IRN without PFC beats RoCE without PFC on average FCT and slowdown
#   (both workloads); IRN loses less than RoCE when PFC is turned off (average slowdown ratio);
#   and the paper's headline on web search (IRN without PFC beats RoCE with PFC on average FCT,
#   99th percentile FCT and average slowdown) and on the incast mix's background flows (average
#   slowdown, incast.csv), PFC's victims. The incast flows themselves favour RoCE with PFC here
#   (docs/fabric.md "Results"): not asserted.
# Prints the paper's headline ratios (IRN without PFC / RoCE with PFC).
# Usage: irn_paper_small.sh REPO_ROOT NAA_FABRIC DIR
set -u
root=$1 fabric=$2 dir=$3
rm -rf "$dir"
"$root/scripts/irn-paper.sh" --scale small --seed 1 --fabric "$fabric" --out "$dir/seed1" --jobs 2 \
  > "$dir.log" 2>&1
rc=$?
grep -v '^  fabric.speed' "$dir.log"
[ $rc -eq 0 ] || { echo "FAIL: irn-paper.sh exited $rc"; exit 1; }
csv=$dir/seed1/comparison.csv
fail=0
header=$(head -1 "$csv")
[ "$header" = "workload,transport,pfc,dcqcn,flows,avg_fct_ns,p99_fct_ns,avg_slowdown,drops,pauses,retransmitted" ] ||
  { echo "FAIL: comparison.csv header: $header"; fail=1; }
rows=$(tail -n +2 "$csv" | wc -l)
[ "$rows" -eq 16 ] || { echo "FAIL: $rows rows in comparison.csv, 16 expected"; fail=1; }

# Determinism: rerun one configuration with the same arguments, then with another seed.
cfg=$dir/seed1/websearch-irn-pfc0-dcqcn0
rerun=$dir/rerun
mkdir -p "$rerun"
cmd=$(sed "s|--out [^ ]*|--out $rerun|" "$cfg/cmd.txt")
eval "$cmd" > /dev/null 2>&1 || { echo "FAIL: rerun failed"; fail=1; }
if cmp -s "$cfg/fct.csv" "$rerun/fct.csv"; then
  echo "PASS: the same seed gives an identical fct.csv ($(wc -l < "$rerun/fct.csv") lines)"
else
  echo "FAIL: the same seed gave a different fct.csv"; fail=1
fi
other=$dir/seed2
mkdir -p "$other"
eval "$(sed "s|--out [^ ]*|--out $other|; s|--seed 1 |--seed 2 |" "$cfg/cmd.txt")" > /dev/null 2>&1
if cmp -s "$cfg/fct.csv" "$other/fct.csv"; then
  echo "FAIL: another seed gave the same fct.csv"; fail=1
fi

# Directions (dcqcn 0). value WORKLOAD TRANSPORT PFC COLUMN
value() {
  awk -F, -v w="$1" -v t="$2" -v p="$3" -v c="$4" \
    'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
     $1 == w && $2 == t && $3 == p && $4 == 0 {print $col[c]}' "$csv"
}
check() {  # check TEXT A < B
  if awk -v a="$2" -v b="$3" 'BEGIN {exit !(a < b)}'; then
    echo "PASS: $1 ($2 < $3)"
  else
    echo "FAIL: $1 ($2 >= $3)"; fail=1
  fi
}
for w in websearch incast; do
  for c in avg_fct_ns avg_slowdown; do
    check "$w: RoCE with PFC beats RoCE without, $c" "$(value $w gbn 1 $c)" "$(value $w gbn 0 $c)"
    check "$w: IRN without PFC beats RoCE without PFC, $c" "$(value $w irn 0 $c)" "$(value $w gbn 0 $c)"
  done
  irn_loss=$(awk -v a="$(value $w irn 0 avg_slowdown)" -v b="$(value $w irn 1 avg_slowdown)" 'BEGIN {print a / b}')
  roce_loss=$(awk -v a="$(value $w gbn 0 avg_slowdown)" -v b="$(value $w gbn 1 avg_slowdown)" 'BEGIN {print a / b}')
  check "$w: turning PFC off costs IRN less than RoCE (slowdown ratio)" "$irn_loss" "$roce_loss"
done
for c in avg_fct_ns p99_fct_ns avg_slowdown; do
  check "websearch: IRN without PFC beats RoCE with PFC, $c (the paper's headline)" \
    "$(value websearch irn 0 $c)" "$(value websearch gbn 1 $c)"
done
bg() {  # bg TRANSPORT PFC: the incast mix's background average slowdown (dcqcn 0)
  awk -F, -v t="$1" -v p="$2" '$2 == t && $3 == p && $4 == 0 {print $7}' "$dir/seed1/incast.csv"
}
check "incast mix, background flows: IRN without PFC beats RoCE with PFC, average slowdown" \
  "$(bg irn 0)" "$(bg gbn 1)"
echo "The paper's headline (docs/fabric.md \"Results\"):"
cat "$dir/seed1/ratios.txt"
[ $fail -eq 0 ] && echo "PASS"
exit $fail
