# Sourced by the tests that build an example against the installed package and run it with the
# installed naa-sim (check_kernel_plugin.sh, check_spin_handler.sh). Expects $scratch (a fresh
# folder) and $build (the build to install); sets $prefix, $repo, $naa, $sim_pid.

fail() { echo "FAIL: $*"; exit 1; }

prefix=$scratch/prefix
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# install_package <file>...: installs $build into $prefix; each file must be in it.
install_package() {
  cmake --install "$build" --prefix "$prefix" >"$scratch/install.log"
  local f
  for f in "$@"; do
    test -f "$prefix/$f" || fail "$f not installed"
  done
}

# build_example <example dir> <build dir>: configures and builds a copy of the example outside
# the repository against $prefix alone, and checks that its build names no folder of the
# repository (the scratch folder may be inside it).
build_example() {
  local example=$1 dir=$2 name
  name=$(basename "$dir")
  cp -r "$example" "$scratch/example-$name"
  cmake -S "$scratch/example-$name" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    >"$scratch/$name-configure.log" 2>&1 || { cat "$scratch/$name-configure.log"; fail "configure"; }
  cmake --build "$dir" >"$scratch/$name-build.log" 2>&1 ||
    { tail -40 "$scratch/$name-build.log"; fail "the example $(basename "$example") does not build"; }
  if grep -qE "$repo/(cmake|spin|rtl|sim|examples|protocol|impair|host|testbench)/" \
    "$dir/build.ninja" "$dir/CMakeCache.txt"; then
    fail "the example's build refers to the repository $repo, not only to the installed package"
  fi
}

# shellcheck source=../support/test_addresses.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/test_addresses.sh"
# shellcheck source=../support/naa_sim_start.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/naa_sim_start.sh"
naa_claim_addresses || exit 1
naa=$NAA_TEST_BLOCK.1
sim_pid=""
trap '[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; true' EXIT

start_sim() {  # start_sim <log> <naa-sim options...>
  local log=$1
  shift
  naa_sim_start "$log" -- "$prefix/bin/naa-sim" --listen "$naa" --seed 1 --stats-file "$log.stats" "$@" ||
    { sim_pid=$NAA_SIM_PID; fail "naa-sim $* did not start"; }
  sim_pid=$NAA_SIM_PID
}

stop_sim() {  # stop_sim <log>: SIGTERM, exit status 0 expected (3 = a lockstep divergence)
  local rc=0
  kill -TERM "$sim_pid"
  wait "$sim_pid" || rc=$?
  sim_pid=""
  [ "$rc" = 0 ] || { cat "$1"; fail "naa-sim exited $rc"; }
}
