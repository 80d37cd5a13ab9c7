#!/usr/bin/env bash
# Kernel plug-in test (issue 24 item 2, docs/rtl/kernel-shell.md "Plug-ins"): installs the build
# into a temporary prefix, builds examples/kernel-plugin against that prefix alone (a copy outside
# the repository), then runs the installed naa-sim with the plug-in and checks naa-call's results
# byte for byte in rtl, lockstep and model mode, and naa-sim's refusals (exit status 2 and the
# message) of plug-ins it must not run.
# usage: check_kernel_plugin.sh <build-dir> <example-dir> <scratch-dir> <fake_plugin.cpp>
set -euo pipefail
build=$1
example=$2
scratch=$3
fake_src=$4
rm -rf "$scratch"
mkdir -p "$scratch"
# shellcheck source=example_kit.sh
. "$(dirname "$0")/example_kit.sh"

install_package lib/cmake/naa/NaaKernel.cmake

# 1. The plug-in, from a copy of the example outside the repository, against the prefix alone.
build_example "$example" "$scratch/plugin"
plugin=$scratch/plugin/xor_const.so
test -f "$plugin" || fail "no xor_const.so"
# Exactly one exported symbol: the plug-in's Verilator runtime must not bind to naa-sim's.
exports=$(nm -D --defined-only "$plugin" | awk '{print $3}')
[ "$exports" = "naa_kernel_plugin_v1" ] || fail "the plug-in exports more than its entry: $exports"
echo "plug-in built against $prefix, exports: $exports"

# Inputs: lengths that are not a multiple of the 64-byte beat, one shorter than a beat.
python3 - "$scratch" <<'PY'
import random, sys
rng = random.Random(24)
for name, n in (("a", 10007), ("b", 37)):
    open(f"{sys.argv[1]}/in_{name}.bin", "wb").write(bytes(rng.randrange(256) for _ in range(n)))
PY
expect() {  # expect <input> <key> <output file>: the input XOR key, computed here
  python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); k=int(sys.argv[2],0)
open(sys.argv[3],"wb").write(bytes(b ^ k for b in d))' "$1" "$2" "$3"
}

# 2. Calls in each mode, results byte for byte.
for mode in rtl lockstep model; do
  log=$scratch/sim-$mode.log
  start_sim "$log" --kernels="$mode" --kernel "$plugin"
  grep -q "kernel plug-in xor_const (function code 9, W=64, $mode)" "$log" ||
    { cat "$log"; fail "$mode: naa-sim did not announce the plug-in"; }
  for call in "a 0xA5" "b 0x3C"; do
    set -- $call
    in=$scratch/in_$1.bin
    out=$scratch/out_${mode}_$1.bin
    size=$(stat -c %s "$in")
    "$prefix/bin/naa-call" --naa "$naa" --local "$NAA_TEST_BLOCK.2" --fn 9 --user "$2" \
      --in "$in" --out "$size@$out" --quiet >"$scratch/call.log" 2>&1 ||
      { cat "$scratch/call.log" "$log"; fail "$mode: naa-call --fn 9 --user $2 failed"; }
    expect "$in" "$2" "$scratch/expect_$1.bin"
    cmp "$out" "$scratch/expect_$1.bin" ||
      { cat "$log"; fail "$mode: the result of call $1 differs from in XOR $2"; }
  done
  stop_sim "$log"
  grep -q "^kernel_plugin.xor_const.calls=2$" "$log.stats" ||
    { cat "$log.stats"; fail "$mode: the plug-in did not run the two calls"; }
  # B beats take B + 3 cycles (examples/kernel-plugin/README.md "Timing"): 157 + 3 and 1 + 3.
  grep -q "^kernel_plugin.xor_const.cycles=164$" "$log.stats" ||
    { grep kernel_plugin "$log.stats"; fail "$mode: not the documented B + 3 cycles per call"; }
  if [ "$mode" = lockstep ]; then
    grep -q "^rtl.lockstep.divergences=0$" "$log.stats" || fail "lockstep: a divergence"
  fi
  echo "$mode: 2 calls through the plug-in, results verified byte for byte"
done

# 3. Plug-ins naa-sim must refuse, each with exit status 2 and its message.
refuse() {  # refuse <what> <message part> <naa-sim options...>
  local what=$1 msg=$2 rc=0
  shift 2
  "$prefix/bin/naa-sim" --listen "$naa" "$@" >"$scratch/refuse.log" 2>&1 &
  sim_pid=$!
  wait "$sim_pid" || rc=$?
  sim_pid=""
  [ "$rc" = 2 ] || { cat "$scratch/refuse.log"; fail "$what: exit status $rc, not 2"; }
  grep -qF -- "$msg" "$scratch/refuse.log" ||
    { cat "$scratch/refuse.log"; fail "$what: the message lacks '$msg'"; }
  echo "refused ($what): $(grep -F -- "$msg" "$scratch/refuse.log" | head -1)"
}
fake() {  # fake <name> <abi> <version> <fn>: a stand-in plug-in (fake_plugin.cpp)
  c++ -std=c++20 -shared -fPIC -I"$prefix/include" -DFAKE_ABI="$2" -DFAKE_VERSION="\"$3\"" \
    -DFAKE_FN="$4" -o "$scratch/$1.so" "$fake_src"
}
version=$(sed -n 's/^set(NAA_KERNEL_NAA_VERSION "\(.*\)")$/\1/p' "$prefix/lib/cmake/naa/NaaKernel.cmake")
abi=$(sed -n 's/.*kKernelPluginAbi = \([0-9]*\);.*/\1/p' "$prefix/include/naa/rtl/kernel_plugin.hpp")
[ -n "$version" ] && [ -n "$abi" ] || fail "cannot read the installed version ($version) or ABI ($abi)"
fake other_version "$abi" "0.0.1" 10
fake other_abi 999 "$version" 10
fake builtin_fn "$abi" "$version" 4
fake no_model "$abi" "$version" 10
printf 'not a shared library\n' >"$scratch/not_a_plugin.so"
c++ -shared -fPIC -o "$scratch/no_symbol.so" -x c++ - <<<'extern "C" int naa_something_else() { return 1; }'

refuse "another naa version" "was built against naa 0.0.1; this program is naa $version" \
  --kernel "$scratch/other_version.so"
refuse "another plug-in ABI" "was built against another naa (kernel plug-in ABI 999)" \
  --kernel "$scratch/other_abi.so"
refuse "a built-in's function code" "function code 4 is taken by a built-in kernel" \
  --kernel "$scratch/builtin_fn.so"
refuse "two plug-ins with one function code" "function code 9 is taken by the plug-in $plugin" \
  --kernel "$plugin" --kernel "$plugin"
refuse "a missing symbol" "has no symbol naa_kernel_plugin_v1" --kernel "$scratch/no_symbol.so"
refuse "not a plug-in" "is not a loadable kernel plug-in" --kernel "$scratch/not_a_plugin.so"
refuse "a width other than --width" "is built at WIDTH 64, naa-sim runs at --width 16" \
  --width 16 --kernel "$plugin"
refuse "model mode without a model" "--kernels=model needs the kernel's C++ model" \
  --kernels=model --kernel "$scratch/no_model.so"
echo "kernel plug-in OK"
