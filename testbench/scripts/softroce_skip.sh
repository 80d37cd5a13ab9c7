#!/bin/sh
# Issue 12 finding 11: where the Soft-RoCE VM test cannot run (here: not root), it must exit 77,
# which CTest reports as "Skipped", and with NAA_REQUIRE_SOFTROCE=1 (.ci/run) it must fail (exit 1).
# As root, the test drops to user nobody (setpriv) on a copy of the script readable by nobody.
# Usage: softroce_skip.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/testbench/softroce/vm"
cp "$src/scripts/test-softroce.sh" "$tmp/scripts/"
printf '#!/bin/sh\nexit 0\n' >"$tmp/testbench/softroce/vm/start.sh"
chmod -R a+rX "$tmp" && chmod a+x "$tmp/scripts/test-softroce.sh" "$tmp/testbench/softroce/vm/start.sh"
as_user() {
  if [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
  else
    "$@"
  fi
}
status=0
for require in "" 1; do
  out=$(cd "$tmp" && as_user env NAA_REQUIRE_SOFTROCE="$require" NAA_VM_KIT= \
    "$tmp/scripts/test-softroce.sh" --no-build 2>&1)
  rc=$?
  want=77
  [ "$require" = 1 ] && want=1
  echo "NAA_REQUIRE_SOFTROCE='$require': exit $rc (want $want)"
  echo "$out" | sed 's/^/    /'
  [ "$rc" -eq "$want" ] || status=1
  echo "$out" | grep -q "needs root" || { echo "no reason given"; status=1; }
done
exit $status
