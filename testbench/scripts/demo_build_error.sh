#!/bin/sh
# Issue 12 finding 11: scripts/demo.sh must show the compiler's errors when the build fails (it
# used to print only the last line of the build) and build in the preset's own folder (it used to
# read build/ whatever the preset). Runs demo.sh on a scratch project whose naa-sim does not
# compile and whose preset "ci" builds in build-scratch/.
# Usage: demo_build_error.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts"
cp "$src/scripts/demo.sh" "$tmp/scripts/"
cat >"$tmp/CMakePresets.json" <<'JSON'
{
  "version": 6,
  "configurePresets": [
    {"name": "ci", "generator": "Ninja", "binaryDir": "${sourceDir}/build-scratch"}
  ],
  "buildPresets": [{"name": "ci", "configurePreset": "ci"}]
}
JSON
cat >"$tmp/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(scratch LANGUAGES CXX)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
add_executable(naa-sim broken.cpp)
add_executable(naa-call broken.cpp)
CMAKE
echo 'int main() { return demo_test_undeclared_name; }' >"$tmp/broken.cpp"
out=$(NAA_PRESET=ci "$tmp/scripts/demo.sh" 2>&1)
rc=$?
echo "$out" | sed 's/^/    /'
status=0
[ "$rc" -ne 0 ] || { echo "FAIL: demo.sh exited 0 on a failed build"; status=1; }
echo "$out" | grep -q "demo_test_undeclared_name.*was not declared" ||
  { echo "FAIL: the compiler's error is not shown"; status=1; }
[ -f "$tmp/build-scratch/build.ninja" ] ||
  { echo "FAIL: demo.sh did not build in the preset's folder build-scratch/"; status=1; }
[ ! -e "$tmp/build" ] || { echo "FAIL: demo.sh created build/"; status=1; }
[ "$status" -eq 0 ] && echo "demo.sh: exit $rc, the compiler's error shown, built in build-scratch/"
exit $status
