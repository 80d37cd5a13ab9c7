#!/usr/bin/env bash
# Synthesizes every RTL block and built-in kernel at W = 64 for Xilinx UltraScale+ (Yosys
# `synth_xilinx -family xcup`) and checks it: no latch, and a worst path of at most 8 LUT levels
# (issue 24 item 4; docs/rtl/synthesis.md says what is measured and why this Yosys).
#
#   scripts/synth.sh [--build DIR] [--no-doc]
#
# The blocks come from the `synth|<block>|<top>|<W>|<sources>` lines that naa_rtl_block()
# (cmake/NaaRtlBlock.cmake) writes into <build>/rtl/lint_manifest.txt: the same registration the
# build, the lint and the tests use, no second list. Without a manifest it configures the ci
# preset first. Writes the table into docs/rtl/synthesis.md (between its markers; --no-doc: only
# prints it and notes whether the doc shows another run), netlists and logs into
# <build>/synth/<block>/. Exit 0: every block passes; 1: a
# block failed (Yosys error, latch, too deep), with the reason; 0 with "skipped" if Yosys is
# missing, 1 then if NAA_REQUIRE_TOOLS=1 (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
write_doc=1
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --no-doc) write_doc=0; shift ;;
    *) echo "usage: scripts/synth.sh [--build DIR] [--no-doc]" >&2; exit 2 ;;
  esac
done
max_levels=8   # about 250 MHz on UltraScale+ (docs/rtl/synthesis.md "What is measured")
doc=docs/rtl/synthesis.md
t0=$SECONDS

if ! command -v yosys > /dev/null; then
  if [ "${NAA_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "synth: FAILED: yosys not found and NAA_REQUIRE_TOOLS=1 (scripts/setup.sh installs it)"
    exit 1
  fi
  echo "synth: skipped: yosys not found (scripts/setup.sh installs Debian's yosys)"
  exit 0
fi
manifest=$build/rtl/lint_manifest.txt
if [ ! -r "$manifest" ]; then
  echo "synth: no $manifest: configuring (cmake --preset ci)"
  cmake --preset ci > /dev/null
fi
if ! grep -q '^synth|' "$manifest"; then
  echo "synth: FAILED: no synth| lines in $manifest (naa_rtl_block writes them)"
  exit 1
fi

out=$build/synth
rm -rf "$out"
mkdir -p "$out"
version=$(yosys -V)

# One block: read with SYNTHESIS defined (simulation-only code is guarded by it), set W, map to
# UltraScale+ cells out of context (no I/O buffers), flattened so that paths cross sub-modules.
synth_one() {  # synth_one <block> <top> <W> <sources>
  local block=$1 top=$2 w=$3 sources=$4 dir=$out/$1 t=$SECONDS
  mkdir -p "$dir"
  local chparam=""
  [ -n "$w" ] && chparam="-chparam W $w"
  cat > "$dir/synth.ys" <<EOF
read_verilog -sv -DSYNTHESIS $sources
hierarchy -check -top $top $chparam
synth_xilinx -family xcup -top $top -flatten -noiopad
check -assert
tee -o $dir/stat.txt stat
write_json $dir/netlist.json
EOF
  local rc=0
  timeout "$limit" yosys -q -l "$dir/yosys.log" -s "$dir/synth.ys" > "$dir/stderr.txt" 2>&1 || rc=$?
  if [ "$rc" -eq 124 ]; then
    echo "FAIL  $block: yosys took more than $limit s (NAA_SYNTH_TIMEOUT; $dir/yosys.log)"
    return 1
  elif [ "$rc" -ne 0 ]; then
    echo "FAIL  $block: yosys failed ($dir/yosys.log):"
    grep -E "ERROR|Error" "$dir/yosys.log" "$dir/stderr.txt" | head -5
    return 1
  fi
  python3 scripts/synth_paths.py "$block" "$top" "$dir/netlist.json" > "$dir/result.tsv"
  # proc_dlatch names every latch it infers; LDCE/LDPE cells are counted in the result too.
  grep -c "Latch inferred" "$dir/yosys.log" > "$dir/latches.txt" || true
  echo "done  $block ($((SECONDS - t)) s)"
}
export -f synth_one
# A block that takes longer than this fails (CI must not hang on one; all of them take ~4 min).
limit=${NAA_SYNTH_TIMEOUT:-900}
export out limit

# Two blocks at a time (the CI machine has 2 cores).
status=0
grep '^synth|' "$manifest" | while IFS='|' read -r _ block top w sources; do
  printf '%s\0%s\0%s\0%s\0' "$block" "$top" "$w" "$sources"
done | xargs -0 -n 4 -P "$(nproc)" bash -c 'synth_one "$@"' _ || status=1

# The table, in manifest order.
table="| block | top | W | LUT | LUTRAM | FF | BRAM | DSP | CARRY | latches | LUT levels | carry on that path | worst path (from → to) |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
while IFS='|' read -r _ block top w _; do
  result=$out/$block/result.tsv
  if [ ! -s "$result" ]; then
    table+=$'\n'"| $block | \`$top\` | ${w:--} | synthesis failed | | | | | | | | | |"
    status=1
    continue
  fi
  IFS=$'\t' read -r _ lut lutram ff bram dsp carry latches levels pcarry pmuxf from to < "$result"
  inferred=$(cat "$out/$block/latches.txt")
  [ "$inferred" -gt "$latches" ] && latches=$inferred  # cells or messages, whichever says more
  verdict=""
  if [ "$latches" -ne 0 ]; then
    echo "FAIL  $block: $latches latch(es) (grep 'Latch inferred' $out/$block/yosys.log)"
    verdict=" **latch**"
    status=1
  fi
  if [ "$levels" -gt "$max_levels" ]; then
    echo "FAIL  $block: worst path $levels LUT levels > $max_levels ($from -> $to)"
    verdict+=" **> $max_levels**"
    status=1
  fi
  muxf=""
  [ "$pmuxf" -ne 0 ] && muxf=" (+$pmuxf MUXF)"
  table+=$'\n'"| $block | \`$top\` | ${w:--} | $lut | $lutram | $ff | $bram | $dsp | $carry | $latches | $levels$verdict | $pcarry$muxf | \`$from\` → \`$to\` |"
done < <(grep '^synth|' "$manifest")

echo
echo "$table"
echo
begin='<!-- scripts/synth.sh writes from here -->'
end='<!-- scripts/synth.sh writes up to here -->'
if ! grep -qF "$begin" "$doc" || ! grep -qF "$end" "$doc"; then
  echo "synth: FAILED: $doc lacks the markers '$begin' and '$end'"
  exit 1
fi
generated="$begin
Made by \`scripts/synth.sh\` with $version, \`synth_xilinx -family xcup\`, W = 64.

$table
$end"
# Rewrites the doc (mode write) or tells whether it still shows this run (mode compare).
GENERATED=$generated python3 - "$doc" "$begin" "$end" "$write_doc" <<'PY' || true
import os, sys
path, begin, end, write = sys.argv[1:5]
text = open(path, encoding="utf-8").read()
head, rest = text.split(begin, 1)
tail = rest.split(end, 1)[1]
new = head + os.environ["GENERATED"] + tail
if write == "1":
    open(path, "w", encoding="utf-8").write(new)
    print(f"synth: wrote the table into {path}")
elif new != text:
    print(f"synth: note: {path} shows another run than this one; scripts/synth.sh rewrites it")
PY
if [ "$status" -ne 0 ]; then
  echo "synth: FAILED ($((SECONDS - t0)) s)"
  exit 1
fi
echo "synth: every block passes: 0 latches, at most $max_levels LUT levels ($((SECONDS - t0)) s)"
