#!/bin/sh
# The metadata a fresh pool leaves on its special vdevs, on the real module: USED+AVAIL right after
# `zpool create` and after one `zpool sync`, for pools on sparse files (docs/capacity.md#the-kernels-count).
#   python3 tests/e2e/guest/guest.py 2.4 "$(cat tests/e2e/guest/capture_special_create.sh)" | grep -E "^(zfs-|ROW)" \
#       > tests/data/special-create/zfs-2.4.4.txt        # then 2.3 into zfs-2.3.9.txt
# ZDB=NAME prints zdb -bb of that pool (by block type) before it is destroyed.
set -u
zfs version | head -1
F=/var/tmp/zp; mkdir -p $F
mkf() { truncate -s "$2" "$F/$1"; echo "$F/$1"; }
n=0
probe() {  # probe NAME ASHIFT SIZE SPECIALSIZE vdev-spec-with-D-and-S-placeholders
  name=$1 ashift=$2 size=$3 ssize=$4; shift 4
  args=""
  for w in "$@"; do
    case $w in
      D) n=$((n+1)); args="$args $(mkf d$n $size)";;
      S) n=$((n+1)); args="$args $(mkf s$n $ssize)";;
      *) args="$args $w";;
    esac
  done
  zpool create -f -o ashift=$ashift "$name" $args || { echo "$name create failed"; return; }
  c=$(zfs list -Hp -o used,avail "$name" | awk '{print $1+$2, $1}')
  zpool sync "$name"
  s=$(zfs list -Hp -o used,avail "$name" | awk '{print $1+$2, $1}')
  echo "ROW $name a$ashift $size $ssize create=$c sync=$s :: $*"
  if [ "${ZDB:-}" = "$name" ]; then zdb -bb "$name" | grep -E "^ +[0-9]" | grep -v "^ *[0-9.]*[KM]*:" | head -40; fi
  zpool destroy "$name"; rm -f $F/*
}
ZDB=${ZDB:-}
probe p1 12 64G 16G raidz2 D D D D special mirror S S
probe p2 12 64G 16G mirror D D special mirror S S
probe p3 12 64G 16G mirror D D mirror D D special mirror S S
probe p4 12 64G 16G raidz1 D D D special mirror S S special mirror S S
probe p5 12 64G 16G raidz2 D D D D D D special mirror S S S spare D
probe p6 12 64G 16G raidz1 D D D special mirror S S log mirror S S cache S
probe p7 12 64G 16G raidz1 D D D raidz1 D D D raidz1 D D D special mirror S S special mirror S S
probe p8 12 64G 16G raidz1 D D D dedup mirror S S
probe p9 12 64G 16G raidz1 D D D special mirror S S dedup mirror S S
probe p10 12 4T 1T raidz2 D D D D D D special mirror S S S
probe p11 12 12T 800G raidz2 D D D D D D D D special mirror S S
probe p12 9 64G 16G raidz2 D D D D special mirror S S
probe p13 9 64G 16G mirror D D mirror D D special mirror S S
probe p14 13 64G 16G raidz2 D D D D special mirror S S
probe p15 12 64G 16G raidz1 D D D special S
probe p16 12 2T 400G raidz1 D D D D D special mirror S S special mirror S S log S
probe p17 12 64G 16G draid1:2d:4c:0s D D D D special mirror S S
