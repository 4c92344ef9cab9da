#!/bin/sh
# Captures pool shapes the model of `zfslab pool` had no real output for, on the real module in the
# test guest: tests/data/pools/zfs-SERIES/{mixed,dspare,dnospare,datasets}/ (docs/pool.md#test-data).
#
# usage (on the host, root), once per series, from the checkout to capture (guest.py mounts its own):
#   python3 tests/e2e/guest/guest.py 2.4 'sh /mnt/repo/tests/e2e/guest/capture_shapes.sh'
# then copy the share's pools/* to tests/data/pools/zfs-SERIES/.
# All on sparse files (ZFS sees the whole file), ashift 12, no guest disk needed:
# - mixed: disks of several sizes, between vdevs and within one: a mirror of 1 and 2 GiB, a raidz1
#   of three 1.5 GiB, a raidz1 of 1, 1.5 and 2 GiB (zpool create -f: the sizes and the replication
#   levels differ);
# - dspare: draid1:2d:6c:1s (one distributed spare, listed under spares as draid1-0-0); dnospare:
#   draid2:3d:7c:0s (no spare; groups of 5 across 7 children). zpool create refuses a pool named
#   draid ("name is reserved"), as mirror and raidz;
# - datasets: raidz1 of three 1 GiB, lz4, with child datasets of their own recordsize: db 16K,
#   media 1M, small 4K (no more than the 4 KiB allocation unit), nomount (mountpoint=none) and a
#   volume (no recordsize); capture_lib.sh's cap takes `zfs get -r` of every filesystem.
set -eu
. "$(dirname "$0")/capture_lib.sh"
files /var/tmp/zfslab-shapes
for n in m1:1G m2:2G a1:1536M a2:1536M a3:1536M b1:1G b2:1536M b3:2G; do
  truncate -s "${n#*:}" "$F/${n%%:*}"
done
mk -o ashift=12 mixed mirror "$F/m1" "$F/m2" raidz1 "$F/a1" "$F/a2" "$F/a3" raidz1 "$F/b1" "$F/b2" "$F/b3"
cap mixed
zpool destroy mixed

for i in 1 2 3 4 5 6 7; do truncate -s 1G "$F/d$i"; done
mk -o ashift=12 dspare draid1:2d:6c:1s "$F/d1" "$F/d2" "$F/d3" "$F/d4" "$F/d5" "$F/d6"
cap dspare
zpool destroy dspare
mk -o ashift=12 dnospare draid2:3d:7c:0s "$F/d1" "$F/d2" "$F/d3" "$F/d4" "$F/d5" "$F/d6" "$F/d7"
cap dnospare
zpool destroy dnospare

mk -o ashift=12 -O compression=lz4 datasets raidz1 "$F/d1" "$F/d2" "$F/d3"
zfs create -o recordsize=16K datasets/db
zfs create -o recordsize=1M datasets/media
zfs create -o recordsize=4K datasets/small
zfs create -o mountpoint=none datasets/nomount
zfs create -V 64M datasets/vol
zpool sync datasets
cap datasets
zpool destroy datasets
rm -rf "$F"
ls -lR "$O"
