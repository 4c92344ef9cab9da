#!/bin/sh
# USED+AVAIL of fresh pools polled every 0.7 s after zpool create, with the last synced and the syncing
# txg (issue #38: the count right after create is txg 4's, with txg 5 syncing). On the host:
#   python3 tests/e2e/guest/guest.py 2.4 "$(cat tests/e2e/guest/poll_special_create.sh)" | grep -E '^(zfs-|POLL)'
set -u
zfs version | head -1
F=/var/tmp/zp; mkdir -p $F
n=0
mkf() { truncate -s "$2" "$F/$1"; echo "$F/$1"; }
poll() {
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
  i=0
  while [ $i -lt 14 ]; do
    c=$(zfs list -Hp -o used,avail "$name" | awk '{print $1+$2}')
    t=$(awk '$3=="C" {last=$1} $3=="S" {s=$1} END {print "synced=" last, "syncing=" s}' /proc/spl/kstat/zfs/$name/txgs)
    echo "POLL $name $i $c $t"
    i=$((i+1)); sleep 0.7
  done
  zpool destroy "$name"; rm -f $F/*
}
poll k3 12 raidz1 D D D special mirror S S special mirror S S special mirror S S
poll k4 12 raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
poll r4d2 12 raidz1 D D D raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
poll k5 12 raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S special mirror S S
