#!/usr/bin/env bash
# Configures, builds and runs every test: scripts/test.sh [preset] [ctest args...]
# The default preset is "ci" (build/, RelWithDebInfo, warnings as errors, interop tools required).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
shift || true
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset" --no-tests=error "$@"
