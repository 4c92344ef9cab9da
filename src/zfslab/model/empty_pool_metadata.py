"""The metadata `zpool create` leaves on the special vdevs of an empty pool, which OpenZFS 2.3.7+
and 2.4.1+ add back to USED+AVAIL (spa_update_dspace; docs/capacity.md#allocation-classes).

Every metadata block goes to the special class (spa_preferred_class), so the new pool's own blocks
land there: the MOS (object directory, config, feature and history objects, each top-level and leaf
vdev's ZAP, the metaslab arrays, space maps) with three copies of each block (the MOS's os_copies is
spa_max_replication), and the root dataset's ZPL objects (zfs_create_fs) with two. How many MOS
blocks a pool starts with was counted on libzpool 2.1.11, 2.3.9 and 2.4.4 over the 21 special-vdev
layouts of tests/oracle/test_classes_oracle.py: always whole MOS blocks (3 copies), 2.4 one more
than 2.3, growing with the vdev tree that the config and the vdev ZAPs describe. The count below is
the least-squares line through the 2.3.9 and 2.4.4 counts at ashift 12; it is within 8 copies of
every count on 2.3.9 and 2.4.4 at ashift 9, 12 and 13 (one run and the next of the same layout
differ by up to 2, as the frees of the last txgs are still deferred), which
tests/oracle/test_classes_oracle.py holds it to.
"""

from __future__ import annotations

from zfslab.model.layouts import Layout

# MOS block copies of an empty pool at ashift 12, as a line in the vdev tree's size (see above)
MOS_COPIES_BASE = 49.0          # 2.3: the pool's fixed objects
MOS_COPIES_BASE_24 = 52.0       # 2.4: one MOS block more (three copies)
MOS_COPIES_PER_TOP_VDEV = 2.0   # its vdev ZAP, metaslab array and space maps
MOS_COPIES_PER_LEAF = 0.7       # its leaf ZAP and its entry in the packed config
MOS_COPIES_PER_AUX_DEVICE = 3.5  # a cache device or hot spare: its own config list entry
MOS_COPIES = 3                  # spa_max_replication: SPA_DVAS_PER_BP
# a MOS block compresses to 1.5 KB on average (libzpool, ashift 9: 170 sectors of 512 B for 57 copies);
# at ashift 12 and above each copy is one sector
MOS_MEAN_PSIZE_BYTES = 1536
# the ZPL's objects of the root dataset (not in libzpool, whose spa_create makes no ZPL): the ZAPs of
# the master node, the SA master, registry and layouts, the unlinked set, the shares directory and the
# root directory (footprint's DATASET_BASE_BLOCKS less the objset and meta-dnode blocks the oracle has),
# two copies each (redundant_metadata=all)
ZPL_ROOT_BLOCKS = 7
ZPL_COPIES = 2
TOLERANCE_COPIES = 8  # what the model is held to against libzpool, in block copies

# What the kernel's `zpool create` leaves on the special class right after it returns, counted in
# the 2.3.9 and 2.4.4 guests on one vCPU (more CPUs: KERNEL_SPREAD_SECTORS below;
# docs/capacity.md#the-kernels-count): one-sector block copies at ashift 12, the same on both versions, on whole disks and on files of 16 GiB to 12 TiB alike,
# whatever the leaves and the kind of the data vdevs. It is more than libzpool's spa_create and the
# ZPL above (by 9 to 23 copies): the kernel's create also logs the command to the pool's history and
# syncs the ZPL's creation in txgs of its own. Each further top-level vdev of a class adds its
# metaslab array and the space maps the class's allocations touch; the spares' and the cache
# devices' config lists are one block each, however many devices they hold; and a MOS of 69
# objects or more as zdb lists them a few txgs later (two log space maps more) has, when create
# returns (txg 4 synced, the next syncing), reached object 96 (ids 0, 1, then 32 on), which needs a
# fourth dnode block of 32; the meta-dnode's three block pointers cannot
# hold it, so it also grows an L1 block (dnode_new_blkid(), module/zfs/dnode.c:2111-2115 in 2.4.4;
# the MOS gets no preset levels, dmu_objset.c:1108): 2 blocks, 6 copies. The raidz1:3 with four
# special mirrors has 68 (highest id 95 at create): its object 96 is the next txg's log space map,
# and a sync later it holds those 6 copies too.
#
# Only special vdevs that take a block count as "further": with one allocator a block's first copy
# goes to the class's rotor and its ditto copies to the next groups of the ring
# (metaslab_alloc_dva_range(), metaslab.c:5420-5427), and the rotor is the last special vdev
# activated (metaslab_group_activate(), metaslab.c:1148-1161) and moves on only after
# metaslab_aliquot (2 MiB) of first copies (metaslab_class_rotate(), metaslab.c:639-697), far more
# than an empty pool writes. So the MOS's three copies land on the last special vdev and the next
# two, and a fourth or fifth special vdev holds nothing (no space map, no unflushed-txg object:
# metaslab_sync() makes them for a metaslab that allocated, metaslab.c:4309,
# metaslab_update_ondisk_flush_data(), metaslab.c:6338-6347). One allocator is what a host with
# fewer than 8 CPUs has (spa_alloc_count = min(spa_num_allocators 4, ncpus / spa_cpus_per_allocator
# 4), at least 1: spa_misc.c:813); with more, each allocator's rotor starts on another group
# (metaslab.c:1158) and each takes a metaslab of its own, so more of the class holds blocks.
# A special vdev left without blocks still adds 6 copies (measured: raidz1:3 with 5 special mirrors,
# and 4 beside 2 and 3 data vdevs; zdb shows each special top-level vdev's ZAP at 2 blocks, 3
# copies each, written or not, where a data vdev's ZAP is embedded in its block pointer).
KERNEL_ASHIFTS = (12, 13)
KERNEL_BASE_COPIES = 86           # one special top-level vdev, the data vdevs, the MOS and the root ZPL
KERNEL_PER_SPECIAL_TOP_COPIES = 9  # a further special top-level vdev that takes blocks (3 blocks, 3 copies)
KERNEL_SPECIAL_TOPS_WRITTEN = 3   # spa_max_replication: the MOS's copies reach this many special vdevs
KERNEL_PER_IDLE_SPECIAL_TOP_COPIES = 6  # a special top-level vdev beyond those: no blocks but its ZAP's 2
KERNEL_PER_LOG_OR_DEDUP_TOP_COPIES = 6   # a log or dedup top-level vdev (2 blocks, 3 copies)
KERNEL_AUX_LIST_COPIES = 3        # hot spares, and cache devices: each list is 1 block, 3 copies
# the MOS's objects as zdb -dddd lists them a few txgs after create (object 0 included, and the log
# space maps of the two txgs after create's), fitted to 4 to 7 top-level vdevs
# (tests/data/special-create/zdb-*-rotor.txt, zdb in *-tree.txt): the pool's own, and for each
# top-level vdev its ZAP, its metaslab array and a ZAP per leaf, and for each special vdev written to
# its space map
KERNEL_MOS_FIXED_OBJECTS = 44
KERNEL_MOS_OBJECTS_PER_TOP = 2
KERNEL_MOS_OBJECTS_PER_LEAF = 1
KERNEL_MOS_OBJECTS_PER_WRITTEN_SPECIAL = 1
KERNEL_MOS_WIDE_OBJECTS = 69      # from here the ids at create (2 fewer) reach 96: a 4th dnode block
KERNEL_WIDE_TREE_COPIES = 6       # that block and the meta-dnode's new L1, 3 copies each
KERNEL_ASHIFT_13_LESS = 3         # at 8 KiB sectors one block fewer (3 copies) in every pool measured
# At ashift 9 a copy is as many 512 B sectors as its block compresses to, and that moves between
# identical creates: the ZAPs' random salts, the config's random GUIDs, and the moment zfs list
# catches (docs/capacity.md#the-kernels-count). The most likely figure is the kernel's block count
# times the median sectors per copy over the 20 pools captured per version at ashift 9
# (tests/data/special-create/zfs-*-tree.txt and p12, p13): 2.3.9 2.584, 2.4.4 2.972. On one CPU every
# capture, repeats included, is within -12..+39 sectors of it on 2.3.9 and -26..+65 on 2.4.4.
KERNEL_ASHIFT_9_SECTORS_PER_COPY = 2.584
KERNEL_ASHIFT_9_SECTORS_PER_COPY_24 = 2.972
# The prediction is what a host with one CPU leaves. The same create repeated in one boot
# (tests/data/special-create/repeat-cpus{1,2,4}-*.txt, alloc2-*.txt) gives other figures too, so the
# spread measured over every capture, real minus predicted, in sectors (ashift 13: as 12, in copies):
# - zfs list after the txg that logs the command to the history has synced: about 40 copies more
#   (its new MOS blocks counted, the old ones still deferred frees); once in 16 creates on one vCPU;
# - on 2+ CPUs the MOS's object ids come in chunks of 128 per CPU (dmu_object_alloc_impl(),
#   CPU_SEQID_UNSTABLE % boot_ncpus, dmu_object.c:62 in 2.4.4): each further chunk used is a dnode
#   block more, and ids past 95 need the meta-dnode's L1: 6 copies more on 2 CPUs, 9 on 4;
# - with several allocators (8+ CPUs) each allocator's rotor starts on another special vdev, so a
#   special vdev the single rotor leaves idle takes blocks: 3 more each;
# - at ashift 9, also the compressed sizes (the ZAPs' random salts, the config's random GUIDs, the
#   device paths in the config and the command in the history).
KERNEL_SPREAD_SECTORS = {12: (0, 55), 13: (0, 55)}
KERNEL_SPREAD_SECTORS_ASHIFT_9 = (-12, 127)
KERNEL_SPREAD_SECTORS_ASHIFT_9_24 = (-26, 132)
def copy_bytes(ashift: int) -> int:
    """Bytes one copy of a MOS block allocates at this ashift."""
    sector = 1 << ashift
    return -(-MOS_MEAN_PSIZE_BYTES // sector) * sector


def mos_copies(layout: Layout, *, openzfs_24: bool) -> int:
    """Copies of MOS blocks the empty pool's special vdevs hold (0 without a special vdev)."""
    if not any(c.alloc_class == "special" for c in layout.classes):
        return 0
    tops = sum(g.count for g in layout.groups) + sum(c.group.count for c in layout.classes)
    leaves = sum(g.disks for g in layout.groups) + sum(c.group.disks for c in layout.classes)
    aux = layout.cache_devices + layout.hot_spares
    base = MOS_COPIES_BASE_24 if openzfs_24 else MOS_COPIES_BASE
    return round(base + MOS_COPIES_PER_TOP_VDEV * tops + MOS_COPIES_PER_LEAF * leaves
                 + MOS_COPIES_PER_AUX_DEVICE * aux)


def mos_bytes(layout: Layout, ashift: int, *, openzfs_24: bool) -> int:
    """What the MOS of the empty pool allocates on its special vdevs: what libzpool measures."""
    return mos_copies(layout, openzfs_24=openzfs_24) * copy_bytes(ashift)


def kernel_create_copies(layout: Layout, ashift: int = 12) -> int:
    """Block copies on the special class right after the kernel's `zpool create` (ashift 12 or 13)."""
    tops = {kind: sum(c.group.count for c in layout.classes if c.alloc_class == kind)
            for kind in ("special", "log", "dedup")}
    written = min(tops["special"], KERNEL_SPECIAL_TOPS_WRITTEN)   # one allocator; see above
    groups = [*layout.groups, *(c.group for c in layout.classes)]
    mos_objects = (KERNEL_MOS_FIXED_OBJECTS + KERNEL_MOS_OBJECTS_PER_WRITTEN_SPECIAL * written
                   + sum(g.count * (KERNEL_MOS_OBJECTS_PER_TOP + KERNEL_MOS_OBJECTS_PER_LEAF * g.width)
                         for g in groups))
    wide = mos_objects >= KERNEL_MOS_WIDE_OBJECTS
    return (KERNEL_BASE_COPIES + KERNEL_PER_SPECIAL_TOP_COPIES * (written - 1)
            + KERNEL_PER_IDLE_SPECIAL_TOP_COPIES * (tops["special"] - written)
            + KERNEL_PER_LOG_OR_DEDUP_TOP_COPIES * (tops["log"] + tops["dedup"])
            + KERNEL_AUX_LIST_COPIES * ((layout.hot_spares > 0) + (layout.cache_devices > 0))
            + KERNEL_WIDE_TREE_COPIES * wide - KERNEL_ASHIFT_13_LESS * (ashift == 13))


def empty_pool_special_bytes(layout: Layout, ashift: int, *, openzfs_24: bool) -> int:
    """Deflated bytes the special vdevs of a pool just made by `zpool create` hold: the MOS and the
    root dataset's ZPL objects; at ashift 12 and 13 the kernel's own count, elsewhere libzpool's line
    and the ZPL's blocks. A pool with dedup but no special vdev holds nothing there (the DDT is empty),
    nor one without either."""
    if not any(c.alloc_class == "special" for c in layout.classes):
        return 0
    if ashift in KERNEL_ASHIFTS:
        return kernel_create_copies(layout, ashift) * copy_bytes(ashift)
    if ashift == 9:
        per_copy = KERNEL_ASHIFT_9_SECTORS_PER_COPY_24 if openzfs_24 else KERNEL_ASHIFT_9_SECTORS_PER_COPY
        return round(kernel_create_copies(layout, 12) * per_copy) * 512
    return mos_bytes(layout, ashift, openzfs_24=openzfs_24) + ZPL_ROOT_BLOCKS * ZPL_COPIES * copy_bytes(ashift)


def empty_pool_special_spread_bytes(ashift: int, *, openzfs_24: bool) -> tuple[int, int] | None:
    """How far below and above empty_pool_special_bytes() the kernel's figure was measured over repeated
    identical creates on 1 to 4 CPUs (see KERNEL_SPREAD_SECTORS); None where not measured."""
    if ashift in KERNEL_SPREAD_SECTORS:
        low, high = KERNEL_SPREAD_SECTORS[ashift]
    elif ashift == 9:
        low, high = KERNEL_SPREAD_SECTORS_ASHIFT_9_24 if openzfs_24 else KERNEL_SPREAD_SECTORS_ASHIFT_9
    else:
        return None
    return low << ashift, high << ashift
