#!/usr/bin/env bash
# Installed-package test: `cmake --install` the build into a temporary prefix, then build a tiny
# consumer against it twice: with find_package(naa) and with pkg-config. Runs both consumers.
# usage: check_install.sh <build-dir> <source-dir-of-consumer> <scratch-dir>
set -euo pipefail
build=$1
consumer=$2
scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix

cmake --install "$build" --prefix "$prefix" >"$scratch/install.log"
test -f "$prefix/lib/cmake/naa/naaConfig.cmake" || { echo "no naaConfig.cmake installed"; exit 1; }
test -f "$prefix/lib/pkgconfig/naa-protocol.pc" || { echo "no naa-protocol.pc installed"; exit 1; }
test -f "$prefix/lib/pkgconfig/naa-impair.pc" || { echo "no naa-impair.pc installed"; exit 1; }
test -x "$prefix/bin/naa-pcap-gen" || { echo "naa-pcap-gen not installed"; exit 1; }

# 1. CMake package.
cmake -S "$consumer" -B "$scratch/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/cmake-build" >/dev/null
out_cmake=$("$scratch/cmake-build/consumer")
if [ -f "$prefix/lib/pkgconfig/naa-host.pc" ]; then
  [ -x "$scratch/cmake-build/consumer_host" ] || { echo "naa::host not exported"; exit 1; }
  echo "cmake host consumer: $("$scratch/cmake-build/consumer_host")"
  # shellcheck disable=SC2046
  c++ -o "$scratch/pc-consumer-host" "$consumer/host_main.cpp" \
    $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs naa-host)
  echo "pkg-config host consumer: $("$scratch/pc-consumer-host")"
  # The NAAICE-compatible C APIs: headers in the compat folder, a C program built with nothing but
  # cc and pkg-config naaice (issue 11), run against the installed naa-sim when there is one.
  for h in naaice.h naaice_ap2.h ulog.h; do
    test -f "$prefix/include/naa/host/compat/$h" || { echo "compat/$h not installed"; exit 1; }
  done
  test -f "$prefix/lib/pkgconfig/naaice.pc" || { echo "no naaice.pc installed"; exit 1; }
  # shellcheck disable=SC2046
  cc -o "$scratch/naaice-consumer" "$consumer/naaice_main.c" \
    $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs naaice)
  if [ -x "$prefix/bin/naa-sim" ]; then
    # shellcheck source=../support/test_addresses.sh
    . "$(dirname "$0")/../support/test_addresses.sh"
    naa_claim_addresses || exit 1
    # shellcheck source=../support/naa_sim_start.sh
    . "$(dirname "$0")/../support/naa_sim_start.sh"
    naa_sim_start "$scratch/naa-sim.log" -- "$prefix/bin/naa-sim" --listen "$NAA_TEST_BLOCK.1" || exit 1
    sim_pid=$NAA_SIM_PID
    out_naaice=$("$scratch/naaice-consumer" "$NAA_TEST_BLOCK.2" "$NAA_TEST_BLOCK.1") || out_naaice="failed"
    kill "$sim_pid"
    wait "$sim_pid" || true
  else
    out_naaice=$("$scratch/naaice-consumer")
  fi
  echo "naaice C consumer: $out_naaice"
  [ "$out_naaice" = "naaice consumer OK" ] || { echo "naaice C consumer failed"; exit 1; }
fi

# 2. pkg-config.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
c++ -o "$scratch/pc-consumer" "$consumer/main.cpp" $(pkg-config --cflags --libs naa-protocol)
out_pc=$("$scratch/pc-consumer")

echo "cmake consumer: $out_cmake"
echo "pkg-config consumer: $out_pc"
[ "$out_cmake" = "$out_pc" ] || { echo "consumers disagree"; exit 1; }
case "$out_cmake" in icrc=????????) ;; *) echo "unexpected output"; exit 1 ;; esac
"$prefix/bin/naa-pcap-gen" "$scratch/session.pcap" >/dev/null
echo "installed package OK"
