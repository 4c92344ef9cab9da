"""Pools with special, dedup, log and cache vdevs against the real OpenZFS code (libzpool), to the
byte, on each version the oracle runs (2.1, 2.3, 2.4: conftest.py), each with the rule set
rules_for() gives its version (docs/capacity.md#allocation-classes).

Class disks name their own size (special SSDs are smaller than the data disks); the harness makes
each file that size. From 2.3.7 and 2.4.1 USED+AVAIL also counts what the special and dedup vdevs
hold (spa_update_dspace): in the empty pool, the metadata zpool create wrote there, which the harness
reads (metaslab_class_get_dalloc) and the model takes as class_alloc_bytes.
"""

import pytest

from zfslab.model.capacity import pool_capacity, rules_for
from zfslab.model.empty_pool_metadata import TOLERANCE_COPIES, copy_bytes, empty_pool_special_bytes, mos_bytes
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.units import GB, TB

pytestmark = pytest.mark.oracle

# (layout, bytes of each data disk, ashift); class disks are sized in the layout
CASES = [
    # special: 2-way, 3-way, single; over raidz, mirror, dRAID, stripe
    ("raidz2:6+special=mirror:2@400GB", 4 * TB, 12),
    ("raidz2:6+special=mirror:3@400GB", 4 * TB, 12),
    ("raidz1:4+special=mirror:2@200GB", 2 * TB, 9),
    ("raidz1:3+special=disk@100GB", TB, 12),
    ("3xmirror:2+special=mirror:2@1TB", 8 * TB, 12),
    ("2xmirror:3+special=mirror:3@500GB", 6 * TB, 9),
    ("4xdisk+special=disk@50GB", 2 * TB, 12),
    ("draid2:8d:24c:1s+special=mirror:3@960GB", 4 * TB, 12),
    ("draid1:4d:8c:1s+special=mirror:2@20GB", TB, 12),
    ("2xraidz2:8+special=2xmirror:3@1920GB", 16 * TB, 12),
    ("raidz3:11+special=mirror:4@800GB", 12 * TB, 12),
    ("raidz2:10+special=mirror:3@30GB", 20 * TB, 13),  # a special of under 64 metaslabs: no embedded log
    ("raidz2:6+special=mirror:2@12TB", 12 * TB, 12),  # a special as big as the data disks
    # dedup
    ("raidz2:6+dedup=mirror:2@200GB", 4 * TB, 12),
    ("3xmirror:2+dedup=mirror:2@400GB", 4 * TB, 9),
    ("raidz2:6+special=mirror:3@400GB+dedup=mirror:3@400GB", 8 * TB, 12),
    ("raidz1:5+special=disk@200GB+dedup=disk@100GB", 3 * TB, 12),
    # log: single and mirrored; not in SIZE nor AVAIL
    ("raidz2:6+log=disk@16GB", 4 * TB, 12),
    ("raidz2:6+log=mirror:2@32GB", 4 * TB, 12),
    ("2xmirror:2+log=2xdisk@200GB", 2 * TB, 9),
    ("draid2:4d:10c:1s+log=mirror:2@100GB", 2 * TB, 12),
    ("4xdisk+log=mirror:3@50GB", TB, 12),
    # cache: 1 and 2 devices
    ("raidz2:6+cache:1@500GB", 4 * TB, 12),
    ("mirror:2+cache:2@1TB", 8 * TB, 12),
    ("raidz1:3+cache:2@100GB", 10 * GB, 9),
    # combinations
    ("raidz2:6+special=mirror:2@400GB+log=mirror:2@32GB+cache:2@1TB", 12 * TB, 12),
    ("raidz2:6+special=mirror:3@1TB+log=mirror:2@100GB+cache:1@2TB+spare:1", 20 * TB, 12),
    ("3xraidz2:6+special=3xmirror:3@2TB+dedup=mirror:3@1TB+log=mirror:2@400GB+cache:2@2TB", 18 * TB, 12),
    ("6xmirror:2+special=mirror:2@800GB+log=disk@50GB+cache:1@500GB", 10 * TB, 12),
    ("draid2:10d:24c:2s+special=mirror:3@1920GB+log=mirror:2@200GB", 8 * TB, 12),
    ("raidz3:8+special=mirror:4@400GB+dedup=mirror:4@200GB+log=mirror:3@16GB+cache:2@100GB", 6 * TB, 9),
    ("2xraidz1:5+special=mirror:2@300GB+cache:1@300GB", 5 * GB * 200, 12),
    ("8xdisk+special=2xdisk@100GB+log=disk@10GB", 3 * TB, 12),
    ("raidz2:6+special=mirror:2@1x3700GB/1x3600GB", 8 * TB, 12),  # a special mirror of two sizes
    ("raidz2:8@12TB+raidz2:4@8TB+special=mirror:3@1TB+log=mirror:2@100GB", 0, 12),  # mixed data disks
]


def _capacity(lay, vdev_bytes, ashift, version, real):
    if lay.sized:
        files = {b: b for b in lay.disk_sizes()}
        return pool_capacity(lay, files, ashift=ashift, rules=version, class_alloc_bytes=real.class_dalloc_bytes)
    return pool_capacity(lay, vdev_bytes, ashift=ashift, rules=version, class_alloc_bytes=real.class_dalloc_bytes)


@pytest.mark.parametrize("layout,vdev_bytes,ashift", CASES, ids=[f"{c[0]}-{c[1]}-a{c[2]}" for c in CASES])
def test_class_layout_capacity_equals_libzpool(zspace, layout, vdev_bytes, ashift):
    lay = parse_layout(layout)
    real = zspace(lay, {b: b for b in lay.disk_sizes()} if lay.sized else vdev_bytes, ashift)
    ours = _capacity(lay, vdev_bytes, ashift, zspace.version, real)
    assert ours.size_bytes == real.size_bytes, real.raw  # zpool list SIZE
    assert ours.usable_bytes == real.usable_bytes, real.raw  # zfs list USED+AVAIL
    assert ours.slop_bytes == real.slop_bytes, real.raw
    # per class: special and dedup in SIZE (2.4: the special's embedded log apart), log apart
    special_elog = sum(v.embedded_log_bytes * v.group.count for v in ours.class_vdevs if v.alloc_class == "special")
    if ours.rules.special_embedded_log:
        assert special_elog == real.value("special_embedded_log_space"), real.raw  # deflate 512: = raw
    assert ours.class_size_bytes("special") - special_elog == real.value("special_space"), real.raw
    assert ours.class_size_bytes("dedup") == real.value("dedup_space"), real.raw
    assert ours.class_size_bytes("log") == real.value("log_space"), real.raw


def test_the_rule_sets_say_which_versions_add_class_allocations_back():
    """2.3.2 has no special/dedup term in spa_update_dspace, 2.3.9 and 2.4.4 have it (PR #18222)."""
    assert not rules_for("2.1.11").class_alloc_in_dspace
    assert not rules_for("2.3.2").class_alloc_in_dspace
    assert rules_for("2.3.9").class_alloc_in_dspace and rules_for("2.4.4").class_alloc_in_dspace
    assert rules_for("2.4.4").special_embedded_log and not rules_for("2.3.9").special_embedded_log


SPECIAL_CASES = [c for c in CASES if "special=" in c[0]]


@pytest.mark.parametrize("layout,vdev_bytes,ashift", SPECIAL_CASES, ids=[f"{c[0]}-a{c[2]}" for c in SPECIAL_CASES])
def test_the_empty_pools_own_metadata_on_the_special_vdev_is_predicted(zspace, layout, vdev_bytes, ashift):
    """What zpool create leaves on the special vdevs (the MOS, 3 copies a block) is predicted within
    TOLERANCE_COPIES block copies of libzpool's metaslab_class_get_dalloc(), so that, by default, USED+AVAIL
    matches to within those bytes where 2.3.7+ and 2.4.1+ add it back. libzpool makes no ZPL, so its
    objects (ZPL_ROOT_BLOCKS) are left out of the comparison."""
    lay = parse_layout(layout)
    files = {b: b for b in lay.disk_sizes()} if lay.sized else vdev_bytes
    real = zspace(lay, files, ashift)
    rules = rules_for(zspace.version)
    ours = pool_capacity(lay, files, ashift=ashift, rules=rules)  # the default: predicted
    assert ours.class_alloc_predicted and ours.class_alloc_bytes == empty_pool_special_bytes(
        lay, ashift, openzfs_24=rules.special_embedded_log)
    if not rules.class_alloc_in_dspace:  # 2.1: not added back, so the default is exact as before
        assert ours.usable_bytes == real.usable_bytes, real.raw
        return
    mos = mos_bytes(lay, ashift, openzfs_24=rules.special_embedded_log)
    unit = copy_bytes(ashift)
    assert abs(mos - real.class_dalloc_bytes) <= TOLERANCE_COPIES * unit, real.raw
    zpl = ours.class_alloc_bytes - mos
    assert abs(ours.usable_bytes - zpl - real.usable_bytes) <= TOLERANCE_COPIES * unit, real.raw
