#!/bin/sh
# Captures a pool made with ashift 9 on disks of 512-byte logical and 4096-byte physical sectors (a
# 512e disk: the case the `ashift-below-sector` finding is for), on the real module in the test
# guest: tests/data/pools/zfs-SERIES/ashift9/ (docs/pool.md#test-data).
#
# usage (on the host, root), once per series:
#   python3 tests/e2e/guest/guest.py 2.4 'sh /mnt/repo/tests/e2e/guest/capture_4k.sh'
# then copy the share's pools/ashift9 to tests/data/pools/zfs-SERIES/.
# The guest's qemu disks report 512/512, and every other test boots them so; the kernel's scsi_debug
# module gives three more disks inside this boot only: 256 MiB each in the guest's RAM, each with its
# own store (per_host_store=1: one shared store would give ZFS three copies of one label),
# physblk_exp=3 (physical sector 512 << 3), lbpu=1 (they take UNMAP, as an SSD does: scsi_debug
# reports itself solid-state, and autotrim=on is set so that the pool is right but for its ashift).
# raidz1:3, ashift=9, lz4, a copy of /usr/share/doc and 16 MiB of random data; then every listing of
# capture_lib.sh, lsblk's answer for each leaf as `zfslab pool` asks it (lsblk.json, one JSON
# document a line, in the order of zpool create) and the kernel's sector sizes (disks.txt).
set -eu
. "$(dirname "$0")/capture_lib.sh"
modprobe scsi_debug dev_size_mb=256 num_tgts=1 add_host=3 per_host_store=1 physblk_exp=3 lbpu=1
udevadm settle
S=$(lsblk -d -n -o PATH,MODEL | awk '$2 == "scsi_debug" {print $1}')
[ "$(echo $S | wc -w)" = 3 ] || { echo "scsi_debug gave: $S"; exit 1; }
# by-id names, as a pool on real disks is made
L=""
for dev in $S; do
  L="$L $(for link in /dev/disk/by-id/scsi-3*; do [ "$(readlink -f "$link")" = "$dev" ] && echo "$link"; done | head -1)"
done
mk -o ashift=9 -o autotrim=on -O compression=lz4 ashift9 raidz1 $L
cp -a /usr/share/doc /ashift9/ 2>/dev/null || true
head -c 16M /dev/urandom > /ashift9/random
sync; zpool sync ashift9
cap ashift9
for leaf in $L; do
  lsblk -J -b -d -o PATH,SIZE,PHY-SEC,ROTA "$leaf-part1" | tr -d '\n '; echo
done > "$O/ashift9/lsblk.json"
for dev in $S; do
  b=$(basename "$dev")
  echo "$dev $(blockdev --getsize64 "$dev") $(cat /sys/block/$b/queue/logical_block_size)" \
       "$(cat /sys/block/$b/queue/physical_block_size) $(cat /sys/block/$b/queue/rotational)"
done > "$O/ashift9/disks.txt"
zpool destroy ashift9
rmmod scsi_debug
ls -l "$O/ashift9"
