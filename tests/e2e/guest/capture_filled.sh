#!/bin/sh
# Captures a pool about 70 % full (ALLOC / SIZE, zpool list's CAP) of real files with compression,
# on the real module in the test guest: tests/data/pools/zfs-SERIES/filled/ (docs/pool.md#test-data).
#
# usage (on the host, root), once per series:
#   python3 tests/e2e/guest/guest.py 2.4 'sh /mnt/repo/tests/e2e/guest/capture_filled.sh'
# then copy the share's pools/filled to tests/data/pools/zfs-SERIES/.
# raidz1:3 of 512 MiB sparse files, lz4: about 700 MB to write under TCG (some 25 MB/s into a pool
# in the guest), where the 2 GiB disks would take 2.8 GB. Not smaller: the slop space is at least
# 128 MiB (spa_get_slop_space()), so on a smaller pool ZFS's AVAIL reaches 0 before CAP reaches 70 %.
# The files: the guest's /usr/share (text, compresses), its kernel modules (.ko.xz: already
# compressed), /usr/lib/python3, then copies of /usr/lib/python3 (Python source: text) while CAP is
# under 60 %, then 8 MiB of random data at a time (under 1 % of SIZE each) until it is 70 %; then
# every listing of capture_lib.sh.
set -eu
. "$(dirname "$0")/capture_lib.sh"
files /var/tmp/zfslab-filled
for i in 1 2 3; do truncate -s 512M "$F/d$i"; done
zpool create -o ashift=12 -O compression=lz4 filled raidz1 "$F/d1" "$F/d2" "$F/d3"
cp -a /usr/share /lib/modules /usr/lib/python3 /filled/
cap_percent() { zpool sync filled; zpool list -Hp -o alloc,size filled | awk '{print int(100 * $1 / $2)}'; }
i=0
while [ "$(cap_percent)" -lt 60 ]; do
  i=$((i + 1)); cp -a /usr/lib/python3 "/filled/python$i"
done
while [ "$(cap_percent)" -lt 70 ]; do
  i=$((i + 1)); head -c 8M /dev/urandom > "/filled/random$i"
done
zpool sync filled
cap filled
zpool destroy filled
rm -rf "$F"
ls -l "$O/filled"
