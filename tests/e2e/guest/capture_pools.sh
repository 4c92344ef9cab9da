#!/bin/sh
# Captures what `zfslab pool` reads (tests/data/pools/zfs-SERIES/POOL/), on the real module in the
# test guest: docs/pool.md#test-data.
#
# usage (on the host, root), once per series:
#   python3 tests/e2e/guest/guest.py 2.4 'sh /mnt/repo/tests/e2e/guest/capture_pools.sh'
# then copy the share's pools/* (guest.py prints the share's path) to tests/data/pools/zfs-SERIES/.
# Needs the guest's eight 2 GiB disks; they are wiped. Each pool is built, captured and destroyed
# in turn: healthy (raidz2:6), degraded (a mirror with one side offline, then a replace polled
# until its resilver is seen), oops (raidz2:4 plus one disk added with -f), special (raidz2:4 with
# a special mirror, a log and a cache), files (raidz1:3, lz4, real files, one scrub), expanded
# (raidz1:3 after one `zpool attach`, 2.3+).
set -u
D=/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_ZFSLAB000
d() { echo "$D$1"; }
. "$(dirname "$0")/capture_lib.sh"
# the disks as the kernel sees them (sizes, sector sizes, rotational)
for i in 0 1 2 3 4 5 6 7; do
  b=$(basename "$(readlink -f "$(d $i)")")
  echo "$(d $i) $(blockdev --getsize64 /dev/$b) $(cat /sys/block/$b/queue/logical_block_size)" \
       "$(cat /sys/block/$b/queue/physical_block_size) $(cat /sys/block/$b/queue/rotational)"
done > "$O/disks.txt"
command -v smartctl >/dev/null && smartctl -j -a "$(d 0)" > "$O/smartctl_j_a.json"

mk -o ashift=12 healthy raidz2 "$(d 0)" "$(d 1)" "$(d 2)" "$(d 3)" "$(d 4)" "$(d 5)" spare "$(d 6)"
cap healthy
zpool destroy healthy

mk -o ashift=12 -O compression=off degraded mirror "$(d 0)" "$(d 1)"
dd if=/dev/urandom of=/degraded/fill bs=1M count=256 status=none; sync
zpool offline degraded "$(d 1)"
cap degraded
# a replace onto a third disk, polled until the resilver shows
zpool replace degraded "$(d 1)" "$(d 2)"
i=0
while [ $i -lt 400 ]; do
  zpool status -P degraded > "$O/degraded/st.tmp"
  if grep -q 'resilver in progress' "$O/degraded/st.tmp"; then
    cap degraded _resilvering; break
  fi
  i=$((i + 1))
done
rm -f "$O/degraded/st.tmp"
zpool wait -t resilver degraded
zpool destroy degraded

mk -o ashift=12 oops raidz2 "$(d 0)" "$(d 1)" "$(d 2)" "$(d 3)"
zpool add -f oops "$(d 4)"
cap oops
zpool destroy oops

mk -o ashift=12 special raidz2 "$(d 0)" "$(d 1)" "$(d 2)" "$(d 3)" special mirror "$(d 4)" "$(d 5)" \
   log "$(d 6)" cache "$(d 7)"
cap special
zpool destroy special

mk -o ashift=12 -O compression=lz4 files raidz1 "$(d 0)" "$(d 1)" "$(d 2)"
cp -a /usr/share /usr/lib/python3 /files/ 2>/dev/null
sync; zpool sync files
zpool scrub -w files
cap files
zpool destroy files

if [ $JSON = yes ]; then
  mk -o ashift=12 expanded raidz1 "$(d 0)" "$(d 1)" "$(d 2)"
  zpool attach -w expanded raidz1-0 "$(d 3)"
  cap expanded
  zpool destroy expanded
fi

{ zpool status -P nosuchpool; echo "rc=$?"; } > "$O/status_nopool.txt" 2>&1
{ zpool list -vHp nosuchpool; echo "rc=$?"; } > "$O/list_nopool.txt" 2>&1
ls -lR "$O"
for i in 0 1 2 3 4 5 6 7; do
  zpool labelclear -f "$(d $i)-part1" 2>/dev/null; wipefs -aq "$(d $i)"
done
