#!/bin/sh
# Captures a pool grown by replacing every disk with a larger one (what `zfslab pool --replace-with`
# predicts), on the real module in the test guest: tests/data/pools/zfs-SERIES/replaced_before/ and
# replaced/ (docs/pool.md#growing-the-pool).
#
# usage (on the host, root), once per series:
#   python3 tests/e2e/guest/guest.py 2.4 'sh /mnt/repo/tests/e2e/guest/capture_replaced.sh'
# then copy the share's pools/replaced* to tests/data/pools/zfs-SERIES/.
# raidz1:3 of 1 GiB sparse files, 64 MiB written, autoexpand on; each file replaced by a 2 GiB one
# (zpool replace -w: one resilver at a time), then the listings again. Files stand for disks: ZFS
# sees a file's whole size, so the sizes are exact without partition tables.
set -eu
. "$(dirname "$0")/capture_lib.sh"
files /var/tmp/zfslab-replaced
for i in 1 2 3; do truncate -s 1G "$F/small$i"; truncate -s 2G "$F/large$i"; done
zpool create -o ashift=12 -o autoexpand=on -O compression=off replaced raidz1 "$F/small1" "$F/small2" "$F/small3"
dd if=/dev/urandom of=/replaced/fill bs=1M count=64 status=none; sync; zpool sync replaced
cap replaced
mv "$O/replaced" "$O/replaced_before"
for i in 1 2 3; do zpool replace -w replaced "$F/small$i" "$F/large$i"; done
zpool sync replaced
cap replaced
zpool destroy replaced
rm -rf "$F"
ls -l "$O/replaced_before" "$O/replaced"
