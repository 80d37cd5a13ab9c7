#!/usr/bin/env bash
# The standard benchmark set (docs/performance.md): builds the Release preset (build-release/),
# runs naa-bench against a naa-sim it starts (model mode; RTL mode too when naa-sim has
# --mr-table/--kernels and was built with RTL), and writes every CSV, the summary and the plots
# into one folder. A few minutes on 2 cores.
#
#   scripts/bench.sh [--out DIR] [--quick] [--no-build] [--build-dir DIR] [-- NAA_BENCH_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: scripts/bench.sh [--out DIR] [--quick] [--no-build] [--build-dir DIR] [-- NAA_BENCH_ARGS...]
  --out DIR        results folder (default bench-results/<date>-<time>)
  --quick          small sizes (a sanity run of about a minute)
  --no-build       use the existing build
  --build-dir DIR  build tree with bin/naa-sim and bin/naa-bench (default build-release,
                   configured with the 'release' preset)
  --net N          loopback addresses 127.40.N.x (default 10)
Extra arguments after -- go to every naa-bench run.
EOF
}

out=""
quick=0
build=1
build_dir=build-release
net=10
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-build) build=0; shift ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --net) net=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || out="bench-results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

if [ "$build" -eq 1 ]; then
  if [ "$build_dir" = build-release ]; then
    cmake --preset release >/dev/null
  fi
  cmake --build "$build_dir" -j2 --target naa-sim naa-bench
fi
bench="$build_dir/bin/naa-bench"
sim="$build_dir/bin/naa-sim"
[ -x "$bench" ] && [ -x "$sim" ] || { echo "bench.sh: $bench or $sim missing" >&2; exit 1; }

# The machine, for docs/performance.md.
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git describe --always --dirty 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "cores: $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "kernel: $(uname -sr)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "build: $build_dir ($(grep -m1 CMAKE_BUILD_TYPE "$build_dir/CMakeCache.txt" 2>/dev/null | cut -d= -f2))"
} > "$out/machine.txt"

if [ "$quick" -eq 1 ]; then
  stream=16M
  sizes=(--max 1M --reps 3 --stream "$stream" --write-max 1M --sessions 4 --call-size 256K --calls 4
         --target-reps 200 --idle-seconds 2)
else
  stream=64M
  sizes=(--max 64M --reps 5 --stream "$stream" --write-max 4M --sessions 8 --call-size 1M --calls 8
         --target-reps 500 --idle-seconds 5)
fi

echo "== model mode -> $out"
"$bench" --net "$net" "${sizes[@]}" --plot both -o "$out" "${extra[@]}"

# RTL mode: only if this naa-sim knows the options (and was built with the RTL blocks).
if grep -q -- '--kernels' <<<"$("$sim" --help 2>/dev/null || true)"; then
  rtl_args="--mr-table=rtl --kernels=rtl"
  echo "== RTL mode ($rtl_args) -> $out/rtl"
  "$bench" --net "$((net + 1))" -w stream --stream "$stream" --write-max 1M \
    --sim-args "$rtl_args" --plot both -o "$out/rtl" "${extra[@]}" ||
    echo "bench.sh: the RTL-mode run failed (see above)" | tee "$out/rtl-failed.txt" >&2
else
  echo "== RTL mode: this naa-sim has no --kernels option; skipped" | tee "$out/rtl-skipped.txt"
fi
echo "results: $out"
cat "$out/summary.txt"
