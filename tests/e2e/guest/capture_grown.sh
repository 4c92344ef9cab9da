#!/bin/sh
# Captures pools before and after each way `zfslab pool --add` offers to grow them, on the real
# module in the test guest (docs/pool.md#growing-the-pool): tests/data/pools/zfs-SERIES/sgrow_*/
# and xgrow_*/.
#
# usage (on the host, root), once per series:
#   python3 tests/e2e/guest/guest.py 2.4 'sh /mnt/repo/tests/e2e/guest/capture_grown.sh'
# then copy the share's pools/sgrow_* and pools/xgrow_* to tests/data/pools/zfs-SERIES/.
# sgrow: the captured `special` pool's shape (raidz2:4 + special mirror + log + cache on the
# eight 2 GiB disks), then a raidz2 of four files added, then a special mirror of two, then a
# log of one. The files are the size ZFS sees of each disk's partition 1 (2,136,997,888 bytes:
# ZFS sees all of a file), so every leaf shows ZFS the same bytes.
# xgrow: raidz1:3 after one attach (captured), a second attach, then a mirror added with -f.
# dgrow: draid1:2d:4c:1s on four disks, then another draid1:2d:4c:1s of four files added (the way a
# dRAID pool grows), then a mirror of two; each add's zpool_add.txt says whether zpool took it as
# given or only with -f, and what it said.
# PARTS: the pools to make (default all), e.g. PARTS=dgrow for the dRAID steps alone.
set -u
PARTS=${PARTS:-"sgrow xgrow dgrow"}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
D=/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_ZFSLAB000
d() { echo "$D$1"; }
. "$(dirname "$0")/capture_lib.sh"
files /var/tmp/zfslab-grown
for i in 1 2 3 4 5 6 7; do truncate -s 2136997888 "$F/new$i"; done
snap() {  # snap POOL NAME: sync, then every listing into $O/NAME/
  zpool sync "$1"; sleep 1; zpool sync "$1"
  cap "$1"; rm -rf "$O/$2"; mv "$O/$1" "$O/$2"
  if [ -f "$O/$1.add.txt" ]; then mv "$O/$1.add.txt" "$O/$2/zpool_add.txt"; fi
}
add() {  # add POOL ARGS...: zpool add, with -f only when refused without (logged)
  p=$1; shift
  if zpool add "$p" "$@" 2> "$O/add.err"; then
    echo "as given" > "$O/$p.add.txt"
  else
    echo "zpool add $p $* refused: $(cat "$O/add.err"); again with -f"
    { echo "with -f"; cat "$O/add.err"; } > "$O/$p.add.txt"
    zpool add -f "$p" "$@" || { echo "add failed"; exit 1; }
  fi
  rm -f "$O/add.err"
}

if part sgrow; then
mk -o ashift=12 sgrow raidz2 "$(d 0)" "$(d 1)" "$(d 2)" "$(d 3)" special mirror "$(d 4)" "$(d 5)" \
   log "$(d 6)" cache "$(d 7)"
snap sgrow sgrow_before
add sgrow raidz2 "$F/new1" "$F/new2" "$F/new3" "$F/new4"
snap sgrow sgrow_added
add sgrow special mirror "$F/new5" "$F/new6"
snap sgrow sgrow_special
add sgrow log "$F/new7"
snap sgrow sgrow_log
zpool destroy sgrow
fi

if part xgrow && [ $JSON = yes ]; then
  mk -o ashift=12 xgrow raidz1 "$(d 0)" "$(d 1)" "$(d 2)"
  zpool attach -w xgrow raidz1-0 "$(d 3)"
  snap xgrow xgrow_before
  zpool attach -w xgrow raidz1-0 "$(d 4)"
  snap xgrow xgrow_attached
  add xgrow mirror "$(d 5)" "$(d 6)"
  snap xgrow xgrow_added
  zpool destroy xgrow
fi

if part dgrow; then
  mk -o ashift=12 dgrow draid1:2d:4c:1s "$(d 0)" "$(d 1)" "$(d 2)" "$(d 3)"
  snap dgrow dgrow_before
  add dgrow draid1:2d:4c:1s "$F/new1" "$F/new2" "$F/new3" "$F/new4"
  snap dgrow dgrow_added
  add dgrow mirror "$F/new5" "$F/new6"
  snap dgrow dgrow_mirror
  zpool destroy dgrow
fi
rm -rf "$F"
ls -l "$O"
for i in 0 1 2 3 4 5 6 7; do
  zpool labelclear -f "$(d $i)-part1" 2>/dev/null; wipefs -aq "$(d $i)"
done
