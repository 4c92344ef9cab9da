#!/bin/sh
# Captures the zpool/zfs/fio output that the parser tests read (tests/data/zfs-SERIES), on the
# real module in the test guest: docs/test-guest.md#captured-output.
#
# usage (on the host, root):
#   python3 tests/e2e/guest/guest.py SERIES 'sh /mnt/repo/tests/e2e/guest/capture-output.sh'
# then copy the share's zfs-out/* (guest.py prints the share's path) to tests/data/zfs-SERIES/.
# Needs the guest's eight disks (sda..sdh); the disks are wiped.
set -u
O=/mnt/host/zfs-out
mkdir -p "$O"
cd "$O"
# The resilver must be slow enough to be seen running, so the pool holds some data.
zpool create -f -o ashift=12 -O compression=off tank raidz2 sda sdb sdc sdd sde spare sdf
zpool status tank > status_online.txt
zfs version > zfs_version.txt
zpool list -Hp tank > zpool_list_Hp.txt
zpool list -Hp -o name,size,allocated,free,health tank > zpool_list_Hp_o.txt
zfs list -Hp -o name,used,avail,refer tank > zfs_list_Hp.txt
zfs get -Hp compression,recordsize,available tank > zfs_get_Hp.txt
zpool get -Hp size,ashift,health tank > zpool_get_Hp.txt
fio --output-format=json --name=w --directory=/tank --rw=write --bs=1M --size=64M --ioengine=psync \
  --end_fsync=1 --verify=crc32c --do_verify=0 --verify_state_save=0 > fio_write.json
# read under another job name than the writer: fio reports the verify mismatch as error 84
fio --output-format=json --name=r --directory=/tank --rw=read --bs=1M --size=64M --ioengine=psync \
  --verify=crc32c --filename=/tank/w.0.0 > fio_read_verify_mismatch.json 2>&1
fio --output-format=json --name=rr --directory=/tank --rw=randwrite --bs=4k --size=16M --ioengine=psync \
  --fsync=1 --runtime=3 > fio_randwrite_sync.json
dd if=/dev/urandom of=/tank/fill bs=1M count=192 status=none; sync
zpool offline tank sdb
zpool status tank > status_degraded.txt
zpool scrub -w tank
zpool status tank > status_scrub_repaired.txt
zpool online tank sdb
zpool wait -t resilver tank
# damage two members behind ZFS's back (past the front labels), then replace a third
dd if=/dev/urandom of=/dev/sdb bs=1M seek=64 count=64 conv=notrunc status=none
dd if=/dev/urandom of=/dev/sdc bs=1M seek=96 count=64 conv=notrunc status=none
sync; echo 3 > /proc/sys/vm/drop_caches
zpool replace tank sdd sdg
i=0
while [ $i -lt 600 ]; do
  zpool status tank > status.tmp
  if grep -q '(resilvering)' status.tmp; then mv status.tmp status_resilvering.txt; break; fi
  i=$((i + 1))
done
rm -f status.tmp
zpool wait -t resilver tank
zpool status tank > status_after_replace.txt
zpool destroy tank
{ zpool status nosuchpool; echo $?; } > status_nopool.txt 2>&1
zpool create -f dr draid2:2d:6c:1s sdc sdd sde sdf sdg sdh
zpool status dr > status_draid.txt
# a disk of an active pool, without -f
{ zpool create inuse sdc; echo $?; } > create_inuse.txt 2>&1
zpool destroy inuse 2>/dev/null
dd if=/dev/urandom of=/dr/fill bs=1M count=32 status=none; sync
zpool offline dr sdc
zpool replace dr sdc draid2-0-0
zpool wait -t resilver dr
zpool status dr > status_draid_spare.txt
zpool destroy dr
ls -l "$O"
# leave the disks blank for the next payload of the same boot
for d in sda sdb sdc sdd sde sdf sdg sdh; do
  zpool labelclear -f "/dev/${d}1" 2>/dev/null; wipefs -aq "/dev/$d"
done
