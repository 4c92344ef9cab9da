# Sourced by the capture scripts (capture_pools.sh, capture_replaced.sh, capture_dedup.sh): the
# module's version, whether zpool speaks JSON, `mk` and `cap` (every listing zfslab pool reads,
# into $O/POOL/), and `files DIR` for the scripts whose pools stand on sparse files.
# O, the output folder: the guest's share unless the caller set another.
O=${O:-/mnt/host/pools}
mkdir -p "$O"
files() { F=$1; mkdir -p "$F"; }  # the folder of a script's sparse files, in F
V=$(zfs version | head -1)
echo "$V" > "$O/zfs_version.txt"
JSON=no
zpool status -j -P --json-int >/dev/null 2>&1 && JSON=yes
# zpool create right after a destroy can fail "currently unavailable" while udev re-reads the
# partition tables (docs/safety.md#a-create-right-after-a-destroy): settle and retry.
mk() {
  n=0
  until zpool create -f "$@"; do
    n=$((n + 1)); [ $n -ge 5 ] && { echo "create failed: $*"; exit 1; }
    udevadm settle; sleep 2
  done
}

cap() {  # cap POOL [SUFFIX]: every listing of one pool into $O/POOL/
  p=$1; s=${2:-}; o=$O/$p; mkdir -p "$o"
  zpool list -vHp "$p" > "$o/zpool_list_vHp$s.txt"
  zpool list -vHPp "$p" > "$o/zpool_list_vHPp$s.txt"
  zpool status -P "$p" > "$o/zpool_status_P$s.txt"
  zpool status -P -p "$p" > "$o/zpool_status_Pp$s.txt"
  zpool get -Hp all "$p" > "$o/zpool_get_Hp$s.txt"
  zfs get -Hp all "$p" > "$o/zfs_get_Hp$s.txt"
  # every filesystem's recordsize (a child dataset may set its own)
  zfs get -Hp -r -t filesystem recordsize,compression,mountpoint "$p" > "$o/zfs_get_rHp$s.txt"
  zpool history "$p" > "$o/zpool_history$s.txt"
  # 2.2+: each vdev's own properties (ashift, asize, psize...)
  zpool get -Hp all "$p" all-vdevs > "$o/zpool_get_vdevs_Hp$s.txt" 2>&1
  if [ $JSON = yes ]; then
    zpool status -j -P --json-int "$p" > "$o/zpool_status_jP$s.json"
    zpool list -j -v --json-int "$p" > "$o/zpool_list_jv$s.json" 2> "$o/zpool_list_jv$s.err"
    zpool list -j -v -P --json-int "$p" > "$o/zpool_list_jvP$s.json" 2> "$o/zpool_list_jvP$s.err"
    zpool get -j --json-int all "$p" > "$o/zpool_get_j$s.json"
    zfs get -j --json-int all "$p" > "$o/zfs_get_j$s.json"
    zfs get -j --json-int -r -t filesystem recordsize,compression,mountpoint "$p" > "$o/zfs_get_rj$s.json"
    zpool get -j --json-int all "$p" all-vdevs > "$o/zpool_get_vdevs_j$s.json" 2>&1
  fi
}

