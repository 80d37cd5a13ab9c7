#!/usr/bin/env bash
# Installs every Debian 12 package the project needs. Idempotent: packages already present are
# skipped. As root it runs apt-get; otherwise it prints the command it would run (and exits 0 if
# nothing is missing, 1 if something is).
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config git
  # simulation kernel, RTL, host transport
  libsystemc-dev verilator libboost-dev
  # optional rdma-core backend (real NICs, Soft-RoCE); libfabric for the OFI provider and its tools
  libibverbs-dev librdmacm-dev libfabric-dev libfabric-bin
  # Open MPI (its OFI MTL and BTL) for the MPI jobs over naa;ofi_rxm (testbench/ofi/mpi_ofi.sh)
  openmpi-bin libopenmpi-dev
  # tests and their independent oracles
  catch2 tshark python3 python3-scapy
  # the fabric's topology files (fabric/, docs/adr/0005-fabric.md)
  nlohmann-json3-dev
  # code quality and debugging
  clang clang-14 clang-format clang-tidy libclang-rt-14-dev valgrind
  # sPIN handlers and HPU test programs: clang-14 links riscv32 images with lld (rtl/hpu)
  lld-14
  # waveforms: fst2vcd reads the FST traces in the trace-window tests
  gtkwave
  # synthesis and timing of the RTL blocks (scripts/synth.sh, docs/rtl/synthesis.md)
  yosys
  # RTL coverage report: genhtml (scripts/coverage.sh, docs/rtl/coverage.md)
  lcov
  # benchmarks: plots
  gnuplot-nox
  # the Soft-RoCE test VM of testbench/softroce/vm (its build-image.sh would install these too)
  qemu-system-x86 qemu-utils debootstrap debian-archive-keyring e2fsprogs iproute2
)

missing=()
for p in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: not root; would run:"
  echo "  DEBIAN_FRONTEND=noninteractive apt-get update"
  echo "  DEBIAN_FRONTEND=noninteractive ${cmd[*]}"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer it so the install never blocks.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
echo "setup: installing ${missing[*]}"
apt-get update -q
"${cmd[@]}"
echo "setup: done"
