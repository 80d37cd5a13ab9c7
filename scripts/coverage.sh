#!/usr/bin/env bash
# RTL code coverage (docs/rtl/coverage.md): scripts/coverage.sh [ctest args...]
#
# Builds preset `coverage` (build-coverage/: every RTL block Verilated with --coverage, the
# seeded-bug variants without), only the targets the regression needs; runs the RTL testbenches
# and the naa-sim suites in RTL and lockstep mode, each process writing its counts to
# build-coverage/coverage/dat/ (RtlSession, NAA_RTL_COVERAGE_DIR); merges them with
# verilator_coverage; writes build-coverage/coverage/coverage.info (lcov) and, with genhtml
# (Debian package lcov), the HTML report build-coverage/coverage/html/index.html; prints the
# per-block table and fails (exit 1) when a block misses a goal: line >= 95 %, branch >= 90 %,
# toggle >= 90 %, after the exclusions of docs/rtl/coverage_exclusions.txt (a reason each).
# Without genhtml the HTML report is skipped with a message, a failure under NAA_REQUIRE_TOOLS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$src/build-coverage
out=$build/coverage
t0=$SECONDS
step() { echo "== coverage.sh: $* ($((SECONDS - t0)) s)"; }

# The regression: the RTL testbenches (testbench/rtl) and naa-sim's suites with the RTL blocks:
# sim_integration (MR table and kernels as RTL, naa-sim's default), its lockstep run (every
# block, the receive path included) and sim_rtl (RTL modes, traces, the broken MR table).
targets=(rtl_mr_table rtl_rx_parser rtl_icrc_check rtl_kernels rtl_stream_assertions rtl_lockstep
         rtl_kernel_drivers rtl_hpu naa-sim sim_rtl sim_integration)
# rtl_sva (issue 25 item 2: each block's SVA checker alone, every assertion made to fire) when the
# build has it: its points are the blocks' own (rtl/<block>/<block>_sva.sv).
optional=(rtl_sva)
tests='^(rtl_(mr_table|rx_parser|icrc_check|kernels|stream_assertions|lockstep|kernel_drivers|hpu|sva)'
tests+='|sim_rtl|sim_integration|sim_integration_lockstep):'

step configure
cmake --preset coverage >/dev/null
for t in "${optional[@]}"; do
  if ninja -C "$build" -t targets all 2>/dev/null | grep -q "^$t:"; then targets+=("$t"); fi
done
step "build (${#targets[@]} targets)"
cmake --build --preset coverage --target "${targets[@]}"

rm -rf "$out"
mkdir -p "$out/dat"
step "run the regression"
NAA_RTL_COVERAGE_DIR=$out/dat ctest --test-dir "$build" -R "$tests" --no-tests=error -j2 \
  --output-on-failure "$@"
n=$(find "$out/dat" -name '*.dat' | wc -l)
if [ "$n" -eq 0 ]; then
  echo "coverage.sh: the regression wrote no coverage file (is NAA_RTL_COVERAGE on?)" >&2
  exit 1
fi

step "merge $n coverage files"
# In groups, so that the command line stays short however many sessions the tests ran.
find "$out/dat" -name '*.dat' -print0 | sort -z |
  xargs -0 -n 400 sh -c 'verilator_coverage --write "$0/part-$$.dat.merged" "$@"' "$out"
verilator_coverage --write "$out/merged.dat" "$out"/part-*.dat.merged
rm -f "$out"/part-*.dat.merged
verilator_coverage --write-info "$out/coverage.info" "$out/merged.dat"

if command -v genhtml >/dev/null; then
  step "HTML report"
  genhtml --quiet --branch-coverage --output-directory "$out/html" --title "naa RTL coverage" \
    "$out/coverage.info" >"$out/genhtml.log" 2>&1 || { cat "$out/genhtml.log"; exit 1; }
  echo "coverage.sh: HTML report $out/html/index.html"
elif [ "${NAA_REQUIRE_TOOLS:-0}" = 1 ]; then
  echo "coverage.sh: genhtml not found (Debian package lcov; scripts/setup.sh)" >&2
  exit 1
else
  echo "coverage.sh: SKIPPED the HTML report: genhtml not found (Debian package lcov)"
fi

step "per-block table"
status=0
python3 "$src/scripts/coverage_report.py" "$out/merged.dat" "$src" \
  --exclusions "$src/docs/rtl/coverage_exclusions.txt" --uncovered "$out/uncovered.txt" \
  --markdown "$out/table.md" || status=$?
echo "coverage.sh: uncovered points: $out/uncovered.txt; lcov: $out/coverage.info"
step "done"
exit "$status"
