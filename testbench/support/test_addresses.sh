# shellcheck shell=bash
# Loopback addresses for test scripts: the shell side of testbench/support/test_addresses.hpp
# (same blocks, same lock files, same bind check), so scripts and C++ tests never share an
# address. Source it from bash, then:
#
#   naa_claim_addresses || exit 1     # sets NAA_TEST_BLOCK=127.A.B; "$NAA_TEST_BLOCK.1" ...
#
# The block stays claimed while the shell (or any child that inherited the lock's file
# descriptor, NAA_TEST_BLOCK_FD) runs; naa_release_addresses gives it back early.

naa_address_lock_dir() {
  local dir=${NAA_TEST_LOCK_DIR:-/tmp/naa-test-addresses-$(id -u)}
  mkdir -p "$dir" && chmod 700 "$dir" && printf '%s\n' "$dir"
}

# Succeeds if UDP 4791 can be bound on every address of block $1 (127.A.B). Without python3 the
# check is skipped (the lock alone then keeps scripts and tests apart).
naa_block_free() {
  command -v python3 >/dev/null 2>&1 || return 0
  python3 - "$1" <<'PY'
import socket, sys
for host in range(1, 255):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind((f"{sys.argv[1]}.{host}", 4791))
    except OSError:
        sys.exit(1)
    finally:
        s.close()
PY
}

naa_claim_addresses() {
  local dir i prefix fd
  dir=$(naa_address_lock_dir) || return 1
  for ((i = 0; i < 64 * 256; i++)); do
    prefix="127.$((64 + i / 256)).$((i % 256))"
    exec {fd}>>"$dir/$prefix.lock" || return 1
    if flock -n "$fd" && naa_block_free "$prefix"; then
      export NAA_TEST_BLOCK=$prefix
      NAA_TEST_BLOCK_FD=$fd
      return 0
    fi
    exec {fd}>&-
  done
  echo "test addresses: no free block in 127.64.0.0/10 (is UDP 4791 bound on 0.0.0.0?)" >&2
  return 1
}

naa_release_addresses() {
  if [ -n "${NAA_TEST_BLOCK_FD:-}" ]; then
    exec {NAA_TEST_BLOCK_FD}>&-
    unset NAA_TEST_BLOCK NAA_TEST_BLOCK_FD
  fi
}
