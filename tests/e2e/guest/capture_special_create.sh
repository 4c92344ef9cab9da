#!/bin/sh
# The metadata a fresh pool leaves on its special vdevs, on the real module: USED+AVAIL right after
# `zpool create` and after one `zpool sync`, with the MOS's object count, for pools on sparse files
# (docs/capacity.md#the-kernels-count). On the host, per series, keeping the ROW lines:
#   python3 tests/e2e/guest/guest.py 2.4 "$(cat tests/e2e/guest/capture_special_create.sh)" \
#       | grep -E '^(zfs-|ROW)' > out.txt
# tests/data/special-create/layouts.txt names each pool's layout in zfslab's grammar.
# SETS picks the sets to run (default all): "SETS=rotor; $(cat ...)" runs the third alone. The
# "alloc2" and "repeat" sets (not in the default) need two vCPUs (guest.py --cpus 2 ...): it sets
# spa_cpus_per_allocator=1, so pools made after have two allocators, as on a host of 8 to 11 CPUs.
set -u
SETS=${SETS:-first tree rotor objects}
zfs version | head -1
F=/var/tmp/zp; mkdir -p $F
mkf() { truncate -s "$2" "$F/$1"; echo "$F/$1"; }
n=0
probe() {  # probe NAME ASHIFT SIZE SPECIALSIZE VDEVS (D: a data file, S: a class file)
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
  # each top-level vdev's ALLOC (its metaslab group), in vdev order: which special vdevs took blocks
  v=$(zpool list -vHp "$name" | awk -F'\t' '$1 == "" && $4 ~ /^[0-9]+$/ {printf "%s%s", sep, $4; sep=","}')
  o=$(zdb -d "$name" 2>/dev/null | awk '/^Dataset mos/ {for(i=1;i<=NF;i++) if ($i ~ /objects/) print $(i-1)}' | tr -d ',')
  # OBJS=1: the MOS's objects (zdb -dd: dsize is all copies' sectors), as OBJ lines
  [ -n "${OBJS:-}" ] && zdb -dd "$name" 2>/dev/null \
      | awk -v p="$name" '/^Dataset / {m = ($2 == "mos")} m && $1 ~ /^[0-9]+$/ {print "OBJ", p, $0}'
  zpool sync "$name"
  s=$(zfs list -Hp -o used,avail "$name" | awk '{print $1+$2, $1}')
  echo "ROW $name a$ashift $size $ssize create=$c sync=$s mos_objects=$o top_alloc=$v :: $*"
  zpool destroy "$name"; rm -f $F/*
}
case " $SETS " in *" first "*)
# the first set (pools p1-p17)
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
;; esac
case " $SETS " in *" tree "*)
# the second set: the vdev tree grown one kind at a time, at ashift 12, 9 and 13
for a in 12 9 13; do
probe k1a$a $a 64G 16G raidz1 D D D special mirror S S
probe k2a$a $a 64G 16G raidz1 D D D special mirror S S special mirror S S
probe k3a$a $a 64G 16G raidz1 D D D special mirror S S special mirror S S special mirror S S
probe k4a$a $a 64G 16G raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
probe d2a$a $a 64G 16G raidz1 D D D raidz1 D D D special mirror S S
probe d3a$a $a 64G 16G raidz1 D D D raidz1 D D D raidz1 D D D special mirror S S
probe d4a$a $a 64G 16G raidz1 D D D raidz1 D D D raidz1 D D D raidz1 D D D special mirror S S
probe d6a$a $a 64G 16G mirror D D mirror D D mirror D D mirror D D mirror D D mirror D D special mirror S S
probe w12a$a $a 64G 16G raidz2 D D D D D D D D D D D D special mirror S S
probe l1a$a $a 64G 16G raidz1 D D D special mirror S S log mirror S S
probe l2a$a $a 64G 16G raidz1 D D D special mirror S S log mirror S S mirror S S
probe s2a$a $a 64G 16G raidz1 D D D special mirror S S spare D D
probe s3a$a $a 64G 16G raidz1 D D D special mirror S S spare D D D
probe e1a$a $a 64G 16G raidz1 D D D special mirror S S dedup mirror S S
probe e2a$a $a 64G 16G raidz1 D D D special mirror S S dedup mirror S S mirror S S
probe c2a$a $a 64G 16G raidz1 D D D special mirror S S cache S S
probe m3a$a $a 64G 16G raidz1 D D D special mirror S S S
probe x1a$a $a 64G 16G raidz1 D D D raidz1 D D D raidz1 D D D special mirror S S special mirror S S log S
done
;; esac
case " $SETS " in *" rotor "*)
# the third set: four and five special mirrors, and four beside more data vdevs (issue #38: the
# class's rotor puts a MOS block's three copies on three special vdevs, so a fourth stays empty)
for a in 12 13; do
probe k4b$a $a 64G 16G raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
probe k5a$a $a 64G 16G raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S special mirror S S
probe r4d2a$a $a 64G 16G raidz1 D D D raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
probe r4d3a$a $a 64G 16G raidz1 D D D raidz1 D D D raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
done
;; esac
case " $SETS " in *" objects "*)
# the fourth set: the MOS's object count, not the number of top-level vdevs, adds the 4th dnode block
for a in 12 13; do
probe o12s3a$a $a 64G 16G raidz2 D D D D D D D D D D D D special mirror S S special mirror S S special mirror S S
probe o4m1a$a $a 64G 16G mirror D D mirror D D mirror D D mirror D D special mirror S S
done
;; esac
case " $SETS " in *" alloc2 "*)
# two allocators (spa_alloc_count = min(4, ncpus / spa_cpus_per_allocator), spa_misc.c:813):
# each allocator's rotor starts on another special vdev and takes a metaslab of its own
echo "nproc=$(nproc)"; echo 1 > /sys/module/zfs/parameters/spa_cpus_per_allocator
probe k1a12 12 64G 16G raidz1 D D D special mirror S S
probe k2a12 12 64G 16G raidz1 D D D special mirror S S special mirror S S
probe k3a12 12 64G 16G raidz1 D D D special mirror S S special mirror S S special mirror S S
probe k4a12 12 64G 16G raidz1 D D D special mirror S S special mirror S S special mirror S S special mirror S S
probe d2a12 12 64G 16G raidz1 D D D raidz1 D D D special mirror S S
;; esac
case " $SETS " in *" repeat "*)
# issue #38: the same create REPEAT times (default 4) in one boot, with the same file names (n=0),
# to tell a rule of the layout from a spread between identical creates: ashift 9 (the MOS blocks'
# compressed sizes), ashift 12 with one allocator (the control), then two allocators
# (RA=13 makes the ashift-12 pools at 13 instead; R9=0 skips the ashift-9 ones)
echo "nproc=$(nproc)"; R=${REPEAT:-4}; OBJS=1; RA=${RA:-12}; [ "${R9:-1}" = 0 ] && R=0
i=1; while [ $i -le $R ]; do n=0; probe k1a9r$i 9 64G 16G raidz1 D D D special mirror S S; i=$((i+1)); done
i=1; while [ $i -le $R ]; do n=0; probe k3a9r$i 9 64G 16G raidz1 D D D special mirror S S special mirror S S special mirror S S; i=$((i+1)); done
OBJS=""; R=${REPEAT:-4}
i=1; while [ $i -le $R ]; do n=0; probe k1a${RA}r$i $RA 64G 16G raidz1 D D D special mirror S S; i=$((i+1)); done
echo 1 > /sys/module/zfs/parameters/spa_cpus_per_allocator
i=1; while [ $i -le $R ]; do n=0; probe k1a${RA}m$i $RA 64G 16G raidz1 D D D special mirror S S; i=$((i+1)); done
i=1; while [ $i -le $R ]; do n=0; probe k3a${RA}m$i $RA 64G 16G raidz1 D D D special mirror S S special mirror S S special mirror S S; i=$((i+1)); done
;; esac
