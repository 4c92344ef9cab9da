#!/bin/sh
# The MOS of fresh pools with 3 to 5 special mirrors, as zdb sees it right after zpool create and the
# count (USED+AVAIL) before and after zdb ran, each top vdev's ALLOC and the txg history (issue #38;
# docs/capacity.md#the-kernels-count). On the host:
#   python3 tests/e2e/guest/guest.py 2.4 "$(cat tests/e2e/guest/zdb_special_create.sh)" > out.txt
set -u
zfs version | head -1
F=/var/tmp/zp; mkdir -p $F
n=0
mkf() { truncate -s "$2" "$F/$1"; echo "$F/$1"; }
diag() {
  name=$1 ashift=$2; shift 2
  args=""
  for w in "$@"; do
    case $w in
      D) n=$((n+1)); args="$args $(mkf d$n 64G)";;
      S) n=$((n+1)); args="$args $(mkf s$n 16G)";;
      *) args="$args $w";;
    esac
  done
  zpool create -f -o ashift=$ashift "$name" $args || { echo "$name create failed"; return; }
  a=$(zfs list -Hp -o used,avail "$name" | awk '{print $1+$2}')
  t1=$(zpool get -Hp -o value freeing "$name")
  echo "=== $name :: $*"
  zdb -dddd "$name" 2>&1 | grep -E "^Dataset|^ +[0-9]+ +[0-9]+ +[0-9.]+K? " 
  b=$(zfs list -Hp -o used,avail "$name" | awk '{print $1+$2}')
  echo "USEDAVAIL before_zdb=$a after_zdb=$b"
  zpool list -vHp "$name" | awk -F'\t' '$1 == "" && $4 ~ /^[0-9]+$/ {printf "%s%s", sep, $4; sep=","} END {print ""}'
  cat /proc/spl/kstat/zfs/$name/txgs | tail -6
  echo "--- end $name"
  zpool destroy "$name"; rm -f $F/*
}
for i in 1 2; do
diag k4 12 raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
diag k5 12 raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S special mirror S S
diag r4d2 12 raidz1 D D D raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
diag k3 12 raidz1 D D D special mirror S S special mirror S S special mirror S S
done
