#!/bin/bash
# Build (or bring up to date) the naa Soft-RoCE test VM (testbench/softroce/vm) in $NAA_VM_HOME:
#   rootfs/          Debian 12 tree (debootstrap + packages), the source of the image
#   rootfs.img       ext4 image of it (the VM's /dev/vda, never written by a VM)
#   boot/            kernel + small initrd (virtio + ext4 only: boots fast under TCG)
#   snap/            the booted VM with rxe0 up, saved: start.sh restores it in seconds
#   cache/           downloaded .debs
# Idempotent: each stage runs only when its inputs changed (package list, guest/ files,
# this script, QEMU version, accelerator...). From nothing: ~3 min, ~3 GB.
#   build-image.sh           build what is missing or stale
#   build-image.sh --clean   rebuild everything (keeps cache/)
# Installs its host packages (qemu-system-x86, qemu-utils, debootstrap) with apt-get.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
case ${1:-} in
  "") clean=0 ;;
  --clean) clean=1 ;;
  -h|--help) show_help ;;
  *) die "unknown option '$1' (usage: build-image.sh [--clean])" ;;
esac
need_root; need_home
SUITE=bookworm
MIRROR=${NAA_VM_MIRROR:-http://deb.debian.org/debian}
SECURITY=${NAA_VM_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
PKGS="systemd-sysv udev dbus kmod linux-image-amd64 initramfs-tools iproute2 iputils-ping procps
  less psmisc ethtool netcat-openbsd strace tcpdump qemu-guest-agent rdma-core ibverbs-providers
  ibverbs-utils rdmacm-utils perftest infiniband-diags python3-pyverbs libibverbs-dev librdmacm-dev
  gcc g++ make cmake pkg-config libfabric1 libfabric-bin"
ROOT=$H/rootfs
T0=$SECONDS
log() { echo "[build-image +$((SECONDS - T0))s] $*"; }

# ---- host packages ---------------------------------------------------------------------
missing=()
command -v qemu-system-x86_64 > /dev/null || missing+=(qemu-system-x86)
command -v qemu-img > /dev/null || missing+=(qemu-utils)
command -v debootstrap > /dev/null || missing+=(debootstrap)
[ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || missing+=(debian-archive-keyring)
command -v mkfs.ext4 > /dev/null || missing+=(e2fsprogs)
[ -x /usr/bin/python3 ] || missing+=(python3)
command -v ip > /dev/null || missing+=(iproute2)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get > /dev/null || die "apt-get not found: install ${missing[*]} by hand"
  log "apt-get install ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ---- what is stale? ----------------------------------------------------------------------
pkg_sum=$(echo "$SUITE $MIRROR $PKGS" | md5sum | cut -c1-32)
img_sum=$(cat "$KIT/build-image.sh" "$KIT"/guest/* | md5sum | cut -c1-32)
[ "$clean" = 0 ] && [ -e "$ROOT/.stage-debootstrap" ] && [ "$(cat "$ROOT/.stage-packages" 2>/dev/null)" = "$pkg_sum" ] \
  && [ -s "$H/rootfs.img" ] && [ "$(cat "$H/rootfs.img.stamp" 2>/dev/null)" = "$pkg_sum $img_sum" ] \
  && [ -s "$H/boot/vmlinuz" ] && img_ok=1 || img_ok=0
if [ "$img_ok" = 1 ] && snap_valid; then log "image and snapshot in $H are up to date"; exit 0; fi
any_vm_running && die "a VM of $H is running on the current image: run $KIT/stop.sh first"
mkdir -p "$H/cache/debs" "$H/cache/apt/partial" "$H/boot" "$H/share" "$H/run"

# ---- chroot helpers --------------------------------------------------------------------------
umount_all() {
  local m
  for m in $(grep -o " $ROOT/[^ ]*" /proc/self/mounts | sort -r); do umount "$m" 2>/dev/null || umount -l "$m"; done
}
mnt() { mountpoint -q "$2" || mount "${@:3}" "$1" "$2"; }
cr() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
trap 'umount_all; rm -f "$ROOT/usr/sbin/policy-rc.d"' EXIT

if [ "$img_ok" = 0 ]; then
  # ---- stage 1: debootstrap ----------------------------------------------------------------
  if [ "$clean" = 1 ] || [ ! -e "$ROOT/.stage-debootstrap" ]; then
    umount_all
    grep -q " $ROOT/" /proc/self/mounts && die "something is still mounted under $ROOT"
    rm -rf --one-file-system "$ROOT" "$H/rootfs.img" "$H/rootfs.img.stamp" "${H:?}"/boot/* "$SNAP"
    log "debootstrap $SUITE (minbase) -> $ROOT"
    debootstrap --variant=minbase --cache-dir="$H/cache/debs" --include=ca-certificates \
      "$SUITE" "$ROOT" "$MIRROR" > "$H/cache/debootstrap.log" 2>&1 \
      || die "debootstrap failed: see $H/cache/debootstrap.log"
    touch "$ROOT/.stage-debootstrap"
  fi
  mnt proc "$ROOT/proc" -t proc
  mnt sys "$ROOT/sys" -t sysfs
  mnt /dev "$ROOT/dev" --bind
  mnt /dev/pts "$ROOT/dev/pts" --bind
  mnt "$H/cache/apt" "$ROOT/var/cache/apt/archives" --bind   # (so no apt-get clean in the chroot)
  printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"; chmod 755 "$ROOT/usr/sbin/policy-rc.d"

  # ---- stage 2: packages -----------------------------------------------------------------------
  printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
    "$MIRROR" $SUITE "$MIRROR" $SUITE "$SECURITY" $SUITE > "$ROOT/etc/apt/sources.list"
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
  # small initramfs: only what mounting /dev/vda needs (6 MB instead of 30: matters under TCG)
  mkdir -p "$ROOT/etc/initramfs-tools/conf.d"
  printf 'MODULES=list\nCOMPRESS=gzip\n' > "$ROOT/etc/initramfs-tools/conf.d/naa-vm.conf"
  printf 'virtio_pci\nvirtio_blk\next4\ncrc32c_generic\n' > "$ROOT/etc/initramfs-tools/modules"
  if [ "$(cat "$ROOT/.stage-packages" 2>/dev/null)" != "$pkg_sum" ]; then
    log "apt-get install in the guest tree ($(echo $PKGS | wc -w) packages)"
    cr apt-get update -q > "$H/cache/apt.log" 2>&1 || die "apt-get update failed: see $H/cache/apt.log"
    cr apt-get install -y -q --no-install-recommends $PKGS >> "$H/cache/apt.log" 2>&1 \
      || die "apt-get install failed: see $H/cache/apt.log"
    echo "$pkg_sum" > "$ROOT/.stage-packages"
  fi

  # ---- stage 3: configuration --------------------------------------------------------------------
  log "configure the guest"
  install -m 755 "$KIT/guest/lab-setup" "$ROOT/usr/local/sbin/lab-setup"
  install -m 644 "$KIT/guest/lab-setup.service" "$ROOT/etc/systemd/system/lab-setup.service"
  echo naa-vm > "$ROOT/etc/hostname"
  printf '127.0.0.1 localhost\n127.0.1.1 naa-vm\n%s naalab-host\n%s naa-vm-eth0\n' "$HOST_IP" "$VM_IP" > "$ROOT/etc/hosts"
  echo '/dev/vda / ext4 rw,noatime,errors=remount-ro 0 1' > "$ROOT/etc/fstab"
  printf '9pnet_virtio\n9p\n' > "$ROOT/etc/modules-load.d/naa-vm.conf"
  # rdma-core's default list also loads iSER/NFS-over-RDMA modules: slow under TCG, unused
  printf 'ib_uverbs\nrdma_ucm\nib_umad\n' > "$ROOT/etc/rdma/modules/rdma.conf"
  mkdir -p "$ROOT/etc/systemd/journald.conf.d" "$ROOT/etc/systemd/system/serial-getty@ttyS0.service.d"
  printf '[Journal]\nStorage=volatile\nForwardToConsole=no\n' > "$ROOT/etc/systemd/journald.conf.d/naa-vm.conf"
  echo 'kernel.printk = 4 4 1 7' > "$ROOT/etc/sysctl.d/90-naa-vm.conf"
  # root: no password, autologin on the serial console (run/vm/console.sock)
  cr passwd -d root > /dev/null
  printf '[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear --keep-baud 115200 %%I $TERM\n' \
    > "$ROOT/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf"
  cr systemctl enable lab-setup.service serial-getty@ttyS0.service > /dev/null 2>&1
  for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
           getty@tty1.service systemd-timesyncd.service; do
    cr systemctl mask "$u" > /dev/null 2>&1 || true
  done
  cr systemctl set-default multi-user.target > /dev/null 2>&1

  # ---- stage 4: kernel + initramfs -------------------------------------------------------------------
  KVER=$(ls "$ROOT/lib/modules" | sort -V | tail -1)
  log "update-initramfs for $KVER"
  cr update-initramfs -c -k "$KVER" > /dev/null 2>&1 || cr update-initramfs -u -k "$KVER" > /dev/null
  cp "$ROOT/boot/vmlinuz-$KVER" "$H/boot/vmlinuz"
  cp "$ROOT/boot/initrd.img-$KVER" "$H/boot/initrd.img"
  echo "$KVER" > "$H/boot/KVER"
  umount_all; rm -f "$ROOT/usr/sbin/policy-rc.d"
  grep -q " $ROOT/" /proc/self/mounts && die "something is still mounted under $ROOT"

  # ---- stage 5: ext4 image ---------------------------------------------------------------------
  rm -f "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/cache/apt/*.bin
  used_mb=$(du -sm "$ROOT" | cut -f1)
  size_mb=$((used_mb * 115 / 100 + 768))   # ~750 MB free in the guest (overlay writes)
  log "mkfs.ext4 -d rootfs -> rootfs.img (${size_mb} MiB, sparse)"
  rm -f "$H/rootfs.img.tmp"
  truncate -s "${size_mb}M" "$H/rootfs.img.tmp"
  mkfs.ext4 -q -F -L naa-vm-root -E root_owner=0:0 -d "$ROOT" "$H/rootfs.img.tmp"
  mv "$H/rootfs.img.tmp" "$H/rootfs.img"
  echo "$pkg_sum $img_sum" > "$H/rootfs.img.stamp"
fi

# ---- stage 6: the saved, booted VM ---------------------------------------------------------------
if ! snap_valid; then
  log "boot the image once and save the running VM (TCG: ~1 min)"
  tmp=$H/snap.tmp
  vm_kill "$tmp"; rm -rf "$tmp"
  trap 'vm_kill "$tmp"' EXIT
  vm_launch "$tmp" none snapshot
  qga "$tmp" exec 'sleep 3; sync; echo 3 > /proc/sys/vm/drop_caches'   # settle, then shrink the RAM image
  qga "$tmp" save "$tmp/state" || die "saving the VM state failed"
  vm_kill "$tmp"; trap - EXIT
  rm -f "$tmp"/{qemu.err,console.log}
  snap_fingerprint > "$tmp/fingerprint"
  rm -rf "$SNAP"; mv "$tmp" "$SNAP"
fi
log "done: kernel $(cat "$H/boot/KVER"), accel '$(accel_args)', state dir $H uses $(du -sh "$H" | cut -f1)"
