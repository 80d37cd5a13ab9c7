#!/usr/bin/env bash
# Formatting check (clang-format, .clang-format) on every C/C++ file of the project; with --tidy
# also clang-tidy (.clang-tidy) over the compile_commands.json of build-dev/ (dev preset) or else
# build/ (ci preset); NAA_LINT_BUILD_DIR picks another. --fix reformats in place.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=check
tidy=0
for arg in "$@"; do
  case "$arg" in
    --fix) mode=fix ;;
    --tidy) tidy=1 ;;
    -h|--help) echo "usage: scripts/lint.sh [--fix] [--tidy]"; exit 0 ;;
    *) echo "lint.sh: unknown option $arg" >&2; echo "usage: scripts/lint.sh [--fix] [--tidy]" >&2; exit 2 ;;
  esac
done
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.c')
else  # a plain copy of the tree (no .git): every project source outside build directories
  mapfile -t files < <(find protocol impair sim host rtl testbench \( -name '*.cpp' -o -name '*.hpp' \
                         -o -name '*.h' -o -name '*.c' \) -not -path '*/build*' | sort)
fi
if [ "$mode" = fix ]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run -Werror "${files[@]}"
fi
if [ "$tidy" -eq 1 ]; then
  db=${NAA_LINT_BUILD_DIR:-}
  if [ -z "$db" ]; then
    for d in build-dev build; do [ -f "$d/compile_commands.json" ] && { db=$d; break; }; done
  fi
  [ -n "$db" ] && [ -f "$db/compile_commands.json" ] ||
    { echo "lint.sh: configure first (cmake --preset dev: build-dev/)" >&2; exit 2; }
  mapfile -t sources < <(git ls-files 'protocol/*.cpp' 'sim/*.cpp' 'host/*.cpp')
  clang-tidy -p "$db" --quiet "${sources[@]}"
fi
echo "lint: ok"
