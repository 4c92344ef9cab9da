#!/usr/bin/env bash
# Builds a bootable Debian 12 guest with the real OpenZFS kernel module (zfs-dkms), zfsutils,
# fio, bonnie++ and python3 with zfslab's dependencies: docs/test-guest.md#building-the-image.
#
# usage: build-image.sh SERIES OUTDIR      SERIES is 2.1 (bookworm contrib) or 2.3 (bookworm-backports)
# OUTDIR receives vmlinuz, initrd.img, rootfs.img and versions.txt. Needs root.
set -euo pipefail
SERIES=$1
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
case "$SERIES" in 2.1|2.3) ;; *) echo "build-image.sh: SERIES is 2.1 or 2.3, got $SERIES" >&2; exit 2;; esac

need=()
for tool in qemu-system-x86_64:qemu-system-x86 debootstrap:debootstrap mkfs.ext4:e2fsprogs; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

MIRROR=$(awk '$1=="URIs:"{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
mkdir -p "$OUT"
WORK=$(mktemp -d "${OUT%/}.build.XXXXXX")
ROOT=$WORK/root
cleanup() {
  for m in dev/pts dev sys proc; do umount "$ROOT/$m" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

t0=$(date +%s)
debootstrap --variant=minbase --components=main,contrib \
  --include=linux-image-amd64,initramfs-tools,kmod,udev,procps,util-linux,e2fsprogs \
  bookworm "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || { tail -30 "$WORK/debootstrap.log"; exit 1; }
t1=$(date +%s)

printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"; chmod +x "$ROOT/usr/sbin/policy-rc.d"
KVER=$(ls "$ROOT/lib/modules" | sort -V | tail -1)
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
TARGET=""
if [ "$SERIES" = 2.3 ]; then
  printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$MIRROR" > "$ROOT/etc/apt/sources.list.d/backports.sources"
  TARGET="-t bookworm-backports"
fi
mount -t proc proc "$ROOT/proc"; mount -t sysfs sys "$ROOT/sys"
mount --bind /dev "$ROOT/dev"; mount --bind /dev/pts "$ROOT/dev/pts"
# Headers first, so that zfs-dkms builds for the guest's kernel, not the host's.
chroot "$ROOT" sh -c "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
  apt-get install -y -qq --no-install-recommends linux-headers-$KVER &&
  apt-get install -y -qq --no-install-recommends $TARGET zfs-dkms zfsutils-linux &&
  apt-get install -y -qq --no-install-recommends fio bonnie++ python3 python3-rich python3-numpy python3-scipy \
     python3-pytest python3-hypothesis python3-mpmath gdisk" >"$WORK/chroot.log" 2>&1 || { tail -40 "$WORK/chroot.log"; exit 1; }
if ! find "$ROOT/lib/modules/$KVER" -name 'zfs.ko*' | grep -q .; then
  echo "build-image.sh: zfs.ko was not built for $KVER" >&2; tail -40 "$WORK/chroot.log"; exit 1
fi
ZFSV=$(chroot "$ROOT" dpkg-query -W -f='${Version}' zfs-dkms)
for m in dev/pts dev sys proc; do umount "$ROOT/$m"; done
t2=$(date +%s)

install -m 755 "$HERE/ci-init" "$ROOT/sbin/ci-init"
rm -f "$ROOT/etc/resolv.conf"
cp "$ROOT/boot/vmlinuz-$KVER" "$WORK/vmlinuz"
cp "$ROOT/boot/initrd.img-$KVER" "$WORK/initrd.img"
truncate -s 6G "$WORK/rootfs.img"
mkfs.ext4 -q -F -L zroot -d "$ROOT" "$WORK/rootfs.img"
t3=$(date +%s)
printf 'series=%s\nzfs=%s\nkernel=%s\ndebootstrap_s=%s\nchroot_s=%s\nimage_s=%s\n' \
  "$SERIES" "$ZFSV" "$KVER" $((t1 - t0)) $((t2 - t1)) $((t3 - t2)) > "$WORK/versions.txt"
mv "$WORK/vmlinuz" "$WORK/initrd.img" "$WORK/rootfs.img" "$WORK/versions.txt" "$OUT/"
cat "$OUT/versions.txt"
