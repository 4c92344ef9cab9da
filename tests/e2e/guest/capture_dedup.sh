#!/bin/sh
# Captures a pool with deduplication on and a dedup table in use (what `zfslab pool`'s dedup finding
# reads), on the real module in the test guest: tests/data/pools/zfs-SERIES/dedup/
# (docs/pool.md#findings).
#
# usage (on the host, root), once per series:
#   python3 tests/e2e/guest/guest.py 2.4 'sh /mnt/repo/tests/e2e/guest/capture_dedup.sh'
# then copy the share's pools/dedup to tests/data/pools/zfs-SERIES/.
# raidz1:3 of 1 GiB sparse files, dedup=on, one 32 MiB random file written four times (the
# table's entries are referenced four times each), plus 16 MiB written once; then every listing
# of capture_lib.sh, and `zpool status -D` (the table's entries, its size on disk and in core).
set -eu
. "$(dirname "$0")/capture_lib.sh"
files /var/tmp/zfslab-dedup
for i in 1 2 3; do truncate -s 1G "$F/d$i"; done
zpool create -o ashift=12 -O dedup=on -O compression=off dedup raidz1 "$F/d1" "$F/d2" "$F/d3"
head -c 32M /dev/urandom > "$F/once"
for i in 1 2 3 4; do cp "$F/once" "/dedup/copy$i"; done
head -c 16M /dev/urandom > /dedup/single
sync; zpool sync dedup
cap dedup
zpool status -D -P dedup > "$O/dedup/zpool_status_DP.txt"
if [ $JSON = yes ]; then
  zpool status -D -j -P --json-int dedup > "$O/dedup/zpool_status_DjP.json" 2>&1 || true
fi
grep MemTotal /proc/meminfo > "$O/dedup/meminfo.txt"
zpool destroy dedup
rm -rf "$F"
ls -l "$O/dedup"
