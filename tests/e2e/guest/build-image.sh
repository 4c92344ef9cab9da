#!/usr/bin/env bash
# Builds a bootable Debian guest with the real OpenZFS kernel module (zfs-dkms), zfsutils,
# fio, bonnie++, python3 with zfslab's dependencies, and sshd (the fleet tests reach guests over ssh
# through a qemu forward on 127.0.0.1): docs/test-guest.md#building-the-image.
#
# usage: build-image.sh DIST OUTDIR
#   bookworm  Debian 12, contrib's OpenZFS 2.1 (series 2.1)
#   trixie    Debian 13 with two OpenZFS builds for one kernel (series 2.3 and 2.4):
#             trixie-backports' 2.4 installed as usual, and trixie's own 2.3, installed first and
#             its modules and userland copied to /opt/zfs-2.3 before the upgrade; ci-init loads
#             one or the other as the kernel command line says (zfslab.zfs=2.3)
# OUTDIR receives vmlinuz, initrd.img, rootfs.img and versions.txt (written last). Needs root.
set -euo pipefail
DIST=$1
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
case "$DIST" in bookworm|trixie) ;; *) echo "build-image.sh: DIST is bookworm or trixie, got $DIST" >&2; exit 2;; esac

need=()
for tool in qemu-system-x86_64:qemu-system-x86 debootstrap:debootstrap mkfs.ext4:e2fsprogs; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

MIRROR=$(awk '$1=="URIs:"{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
mkdir -p "$OUT"
WORK=$(mktemp -d "${OUT%/}.build.XXXXXX")
ROOT=$WORK/root
cleanup() {
  for m in dev/pts dev sys proc; do umount "$ROOT/$m" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

t0=$(date +%s)
# The host's keyring (bookworm's debian-archive-keyring) holds trixie's keys as well.
debootstrap --variant=minbase --components=main,contrib \
  --include=linux-image-amd64,initramfs-tools,kmod,udev,procps,util-linux,e2fsprogs \
  "$DIST" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || { tail -30 "$WORK/debootstrap.log"; exit 1; }
t1=$(date +%s)

printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"; chmod +x "$ROOT/usr/sbin/policy-rc.d"
KVER=$(ls "$ROOT/lib/modules" | sort -V | tail -1)
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mount -t proc proc "$ROOT/proc"; mount -t sysfs sys "$ROOT/sys"
mount --bind /dev "$ROOT/dev"; mount --bind /dev/pts "$ROOT/dev/pts"
run() { chroot "$ROOT" sh -c "export DEBIAN_FRONTEND=noninteractive; $1" >>"$WORK/chroot.log" 2>&1 || { tail -40 "$WORK/chroot.log"; exit 1; }; }
has_ko() { find "$1" -name 'zfs.ko*' | grep -q .; }
# Headers first, so that zfs-dkms builds for the guest's kernel, not the host's.
run "apt-get update -qq && apt-get install -y -qq --no-install-recommends linux-headers-$KVER"
# The modules carry no debug info and no BTF, which nothing here reads: kbuild appends KCFLAGS after
# the kernel's -g, so -g0 wins, and with the headers' BTF-only vmlinux set aside Makefile.modfinal
# skips pahole for every module it links (zfs.ko and configure's two hundred probes; Debian's
# kernels have CONFIG_DEBUG_INFO and CONFIG_DEBUG_INFO_BTF_MODULES). One DKMS build of 2.4.4 in
# this image's chroot took 362 s of CPU as Debian builds it, 323 s without BTF and 280 s without
# either (2026-11-28; docs/test-guest.md#building-the-image). Each install's dkms inherits KCFLAGS.
run "cd /usr/src/linux-headers-$KVER && if [ -e vmlinux ]; then mv vmlinux vmlinux.not-for-btf; fi"
NODEBUG="export KCFLAGS=-g0;"
run "$NODEBUG apt-get install -y -qq --no-install-recommends zfs-dkms zfsutils-linux"
has_ko "$ROOT/lib/modules/$KVER" || { echo "build-image.sh: zfs.ko was not built for $KVER" >&2; tail -40 "$WORK/chroot.log"; exit 1; }
t2=$(date +%s)
if [ "$DIST" = trixie ]; then
  # Keep trixie's 2.3 (modules, userland, source) under /opt/zfs-2.3, then upgrade to backports' 2.4.
  run 'set -e; O=/opt/zfs-2.3; mkdir -p $O/modules $O/src
    cp -a /lib/modules/'"$KVER"'/updates/dkms/. $O/modules/
    v=$(dpkg-query -W -f="\${Version}" zfs-dkms); echo "$v" > $O/version
    cp -a /usr/src/zfs-${v%%-*} $O/src/
    for p in zfsutils-linux $(dpkg-query -W -f="\${Package}\n" "libzfs*linux" "libzpool*linux" "libnvpair*linux" "libuutil*linux" 2>/dev/null); do
      dpkg-query -W -f="\${Status}" "$p" 2>/dev/null | grep -q "install ok installed" || continue
      dpkg -L "$p" | while read -r f; do if [ -L "$f" ] || [ -f "$f" ]; then cp -a --parents "$f" $O/; fi; done
    done'
  printf 'Types: deb\nURIs: %s\nSuites: trixie-backports\nComponents: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$MIRROR" > "$ROOT/etc/apt/sources.list.d/backports.sources"
  run "$NODEBUG apt-get update -qq && apt-get install -y -qq --no-install-recommends -t trixie-backports zfs-dkms zfsutils-linux"
  has_ko "$ROOT/lib/modules/$KVER" || { echo "build-image.sh: the backports zfs.ko was not built for $KVER" >&2; tail -40 "$WORK/chroot.log"; exit 1; }
  has_ko "$ROOT/opt/zfs-2.3/modules" || { echo "build-image.sh: no 2.3 zfs.ko kept" >&2; exit 1; }
  [ -x "$ROOT/opt/zfs-2.3/usr/sbin/zpool" ] || { echo "build-image.sh: no /opt/zfs-2.3/usr/sbin/zpool kept" >&2; exit 1; }
  # The kept userland must find its own libraries first, not 2.4's (same sonames for libnvpair and libuutil).
  if chroot "$ROOT" env LD_LIBRARY_PATH=/opt/zfs-2.3/usr/lib/x86_64-linux-gnu ldd /opt/zfs-2.3/usr/sbin/zpool \
       | grep -E 'lib(zfs|zpool|nvpair|uutil)' | grep -v '=> /opt/zfs-2.3/'; then
    echo "build-image.sh: /opt/zfs-2.3's zpool links a library outside /opt/zfs-2.3" >&2; exit 1
  fi
fi
t3=$(date +%s)
run "apt-get install -y -qq --no-install-recommends fio bonnie++ python3 python3-rich python3-numpy python3-scipy \
     python3-pytest python3-hypothesis python3-mpmath gdisk \
     python3-lz4 python3-zstandard openssh-server iproute2 && apt-get clean"
ZFSV=$(chroot "$ROOT" dpkg-query -W -f='${Version}' zfs-dkms)
MAIN=$(case "$DIST" in bookworm) echo 2.1;; trixie) echo 2.4;; esac)
EXTRA=""
[ "$DIST" = trixie ] && EXTRA="zfs-2.3=$(cat "$ROOT/opt/zfs-2.3/version")"
for m in dev/pts dev sys proc; do umount "$ROOT/$m"; done
t4=$(date +%s)

install -m 755 "$HERE/ci-init" "$ROOT/sbin/ci-init"
rm -f "$ROOT/etc/resolv.conf"
cp "$ROOT/boot/vmlinuz-$KVER" "$WORK/vmlinuz"
cp "$ROOT/boot/initrd.img-$KVER" "$WORK/initrd.img"
truncate -s 6G "$WORK/rootfs.img"
mkfs.ext4 -q -F -L zroot -d "$ROOT" "$WORK/rootfs.img"
t5=$(date +%s)
printf 'dist=%s\nzfs-%s=%s\n%s\nkernel=%s\ndebootstrap_s=%s\nzfs_s=%s\nzfs_second_s=%s\ntools_s=%s\nimage_s=%s\n' \
  "$DIST" "$MAIN" "$ZFSV" "$EXTRA" "$KVER" $((t1 - t0)) $((t2 - t1)) $((t3 - t2)) $((t4 - t3)) $((t5 - t4)) > "$WORK/versions.txt"
mv "$WORK/vmlinuz" "$WORK/initrd.img" "$WORK/rootfs.img" "$OUT/"
mv "$WORK/versions.txt" "$OUT/"
cat "$OUT/versions.txt"
