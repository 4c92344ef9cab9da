#!/usr/bin/env bash
# Builds the Debian 13 (trixie) chroot in which the libzpool oracle runs OpenZFS 2.4 and 2.3:
# docs/test-guest.md#newer-openzfs-in-a-trixie-chroot. Their libraries need trixie's C library,
# so the harness is compiled and run inside it (tests/oracle/harness.py).
#
# usage: oracle-chroot.sh OUTDIR      (root; tests/oracle/chroot.py picks OUTDIR by cache key)
#   /usr                 libzfslinux-dev from trixie-backports (2.4.x) with gcc and libc6-dev
#   /opt/zfs-trixie/usr  trixie's own libzpool6linux, libnvpair3linux, libuutil3linux and
#                        libzfslinux-dev (2.3.x), unpacked beside it: one apt root holds one
#                        libzfslinux-dev, and the harness links these with an rpath
#   /versions.txt        what was installed and the seconds per stage; written last, so a
#                        directory without it is not a finished build
set -euo pipefail
OUT=${1:?usage: oracle-chroot.sh OUTDIR}
[ "$(id -u)" = 0 ] || { echo "oracle-chroot.sh: debootstrap and chroot need root" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "oracle-chroot.sh: debootstrap is missing (bash scripts/install-test-deps.sh)" >&2; exit 2; }

MIRROR=$(awk '$1=="URIs:"{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
mkdir -p "$(dirname "$OUT")"
WORK=$(mktemp -d "${OUT%/}.build.XXXXXX")
ROOT=$WORK/root
trap 'rm -rf "$WORK"' EXIT

t0=$(date +%s)
# The host's keyring (debian-archive-keyring of bookworm) holds trixie's keys as well.
debootstrap --variant=minbase --components=main,contrib trixie "$ROOT" "$MIRROR" \
  >"$WORK/debootstrap.log" 2>&1 || { tail -30 "$WORK/debootstrap.log" >&2; exit 1; }
t1=$(date +%s)

printf 'Types: deb\nURIs: %s\nSuites: trixie-backports\nComponents: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
  "$MIRROR" > "$ROOT/etc/apt/sources.list.d/backports.sources"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/dev/shm"  # the harness binds the host's tmpfs here for its sparse files
# No /proc or /dev mounts: nothing here starts a service or needs them, and nothing is left mounted.
cat > "$ROOT/tmp/setup.sh" <<'SETUP'
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends -t trixie-backports gcc libc6-dev libzfslinux-dev
# trixie's own version, the one apt takes without -t
v23=$(apt-cache madison libzfslinux-dev | awk -F' *[|] *' '$3 ~ / trixie\/contrib / {print $2; exit}')
[ -n "$v23" ] || { echo "no libzfslinux-dev in trixie/contrib" >&2; exit 1; }
mkdir -p /opt/zfs-trixie/debs
cd /opt/zfs-trixie/debs
# root in a chroot whose _apt user cannot write here: skip apt's download sandbox
apt-get download -qq -o APT::Sandbox::User=root \
  "libzpool6linux=$v23" "libnvpair3linux=$v23" "libuutil3linux=$v23" "libzfslinux-dev=$v23"
for d in ./*.deb; do dpkg-deb -x "$d" /opt/zfs-trixie; done
cd / && rm -rf /opt/zfs-trixie/debs
echo "$v23" > /opt/zfs-trixie/version
apt-get clean
SETUP
chroot "$ROOT" sh /tmp/setup.sh >"$WORK/chroot.log" 2>&1 || { tail -40 "$WORK/chroot.log" >&2; exit 1; }
rm -f "$ROOT/tmp/setup.sh"
t2=$(date +%s)

bpo=$(chroot "$ROOT" dpkg-query -W -f='${Version}' libzfslinux-dev)
trixie=$(cat "$ROOT/opt/zfs-trixie/version")
libc=$(chroot "$ROOT" dpkg-query -W -f='${Version}' libc6)
gccv=$(chroot "$ROOT" gcc -dumpfullversion)
printf 'trixie-backports=%s\ntrixie=%s\nlibc6=%s\ngcc=%s\ndebootstrap_s=%s\napt_s=%s\n' \
  "$bpo" "$trixie" "$libc" "$gccv" $((t1 - t0)) $((t2 - t1)) > "$ROOT/versions.txt"

# Another build of the same key may have finished first: keep that one.
if mv -T "$ROOT" "$OUT" 2>/dev/null; then
  echo "oracle chroot $OUT: 2.4 from trixie-backports $bpo, 2.3 from trixie $trixie; debootstrap $((t1 - t0)) s, apt $((t2 - t1)) s" >&2
else
  [ -f "$OUT/versions.txt" ] || { echo "oracle-chroot.sh: cannot move the build to $OUT" >&2; exit 1; }
fi
