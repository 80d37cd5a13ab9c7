#!/usr/bin/env bash
# Configures, builds and runs every test: scripts/test.sh [preset] [ctest args...]
# The default preset is "ci" (build/, RelWithDebInfo, warnings as errors, the Soft-RoCE VM test
# registered); "dev" builds in build-dev/. Each stage prints how long it took. With the default
# preset the host, ofi and cosim suites then run once more under ThreadSanitizer (preset tsan in
# build-tsan/, label tsan; docs/building.md "ThreadSanitizer"): only the targets they need
# (naa_tsan), about 5 minutes on 2 cores. Last comes stage "coverage": scripts/coverage.sh
# (preset coverage in build-coverage/), which fails when an RTL block misses its coverage goals
# (docs/rtl/coverage.md).
#
# A test that cannot run on this machine reports "Skipped" with its reason, never "Passed": the
# Soft-RoCE VM test without root, QEMU or a VM image it can build; the interop, fuzz and lint
# tests without tshark, scapy, clang-14 or clang-format. CTest lists the skipped tests at the end
# and the script still succeeds. Set NAA_REQUIRE_SOFTROCE=1 and NAA_REQUIRE_TOOLS=1 (.ci/run
# does) to make such a test fail instead.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
shift || true
stage() {  # stage NAME COMMAND...: runs COMMAND and reports its duration
  local name=$1 t0=$SECONDS
  shift
  echo "== test.sh: $name ($*)"
  "$@"
  echo "== test.sh: $name took $((SECONDS - t0)) s"
}
stage configure cmake --preset "$preset"
stage build cmake --build --preset "$preset"
stage tests ctest --preset "$preset" --no-tests=error "$@"
# Every RTL block synthesized for UltraScale+ at W = 64: no latch, at most 8 LUT levels
# (docs/rtl/synthesis.md; about 4 minutes). Without Yosys "skipped" (a failure under
# NAA_REQUIRE_TOOLS=1). It reads the ci preset's build/ manifest.
if [ "$preset" = ci ]; then
  stage synth scripts/synth.sh --no-doc
fi
if [ "$preset" = ci ]; then
  stage "tsan configure" cmake --preset tsan
  stage "tsan build" cmake --build --preset tsan  # the target naa_tsan, not the whole tree
  stage "tsan tests" ctest --preset tsan -L tsan --no-tests=error
  stage coverage scripts/coverage.sh
fi
