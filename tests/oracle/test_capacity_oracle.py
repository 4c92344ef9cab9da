"""zfslab's capacity against the real OpenZFS code (libzpool), to the byte, for each version the
oracle runs (2.1 on the host, 2.4 and 2.3 in the trixie chroot: conftest.py), each with the rule
set rules_for() gives its version.

SIZE is zpool list -Hp SIZE; USED+AVAIL is zfs list -Hp of the root dataset. USED alone
moves with txg timing, so only the sum is compared (docs/test-guest.md#golden-table).
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zfslab.model.capacity import osizes, pool_capacity
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.units import GB, TB

pytestmark = pytest.mark.oracle

CASES = [
    # mirrors and stripes
    ("mirror:2", TB, 12), ("mirror:3", 2 * TB, 9), ("6xmirror:2", 4 * TB, 12), ("3xmirror:4", 500 * GB, 13),
    ("4xdisk", 3 * TB, 12), ("disk", GB, 12), ("12xdisk", 20 * TB, 12),
    # raidz1-3, widths 3-24
    ("raidz1:3", 4 * TB, 12), ("raidz1:4", 6 * TB, 9), ("raidz1:5", 10 * GB, 12), ("raidz1:7", 8 * TB, 13),
    ("raidz1:9", 2 * TB, 12), ("raidz1:12", 12 * TB, 12), ("raidz1:16", 1 * TB, 9), ("raidz1:24", 3 * TB, 12),
    ("raidz2:4", 4 * TB, 12), ("raidz2:6", 20 * TB, 12), ("raidz2:8", 16 * TB, 9), ("raidz2:10", 5 * GB, 12),
    ("raidz2:11", 14 * TB, 12), ("raidz2:13", 18 * TB, 13), ("raidz2:15", 800 * GB, 12), ("raidz2:20", 10 * TB, 12),
    ("raidz3:5", 4 * TB, 12), ("raidz3:7", 22 * TB, 12), ("raidz3:9", 6 * TB, 9), ("raidz3:11", 4 * TB, 12),
    ("raidz3:14", 3 * TB, 13), ("raidz3:17", 2 * GB, 12), ("raidz3:19", 12 * TB, 12), ("raidz3:23", 4 * TB, 12),
    # several vdevs, spares
    ("2xraidz1:5", 4 * TB, 12), ("3xraidz2:6", 8 * TB, 12), ("2xraidz3:8", 12 * TB, 9), ("4xraidz2:4", GB * 3, 12),
    ("raidz2:6+spare:1", 4 * TB, 12), ("raidz1:4+mirror:2", 2 * TB, 12),
    # dRAID
    ("draid1:4d:8c:1s", 4 * TB, 12), ("draid2:8d:24c:1s", 4 * TB, 12), ("draid3:4d:12c:2s", 10 * TB, 12),
    ("draid2:3d:10c:0s", 2 * TB, 9), ("draid1:7d:8c:0s", 16 * TB, 13), ("2xdraid2:4d:8c:1s", 3 * TB, 12),
    ("draid2:10d:24c:2s", 4 * TB, 12), ("draid2:5d:16c:3s", 5 * GB, 12),
]


@pytest.mark.parametrize("layout,vdev_bytes,ashift", CASES, ids=[f"{c[0]}-{c[1]}-a{c[2]}" for c in CASES])
def test_capacity_equals_libzpool(zspace, layout, vdev_bytes, ashift):
    lay = parse_layout(layout)
    real = zspace(lay, vdev_bytes, ashift)
    ours = pool_capacity(lay, vdev_bytes, ashift=ashift, rules=zspace.version)
    assert ours.size_bytes == real.size_bytes, real.raw
    assert ours.usable_bytes == real.usable_bytes, real.raw
    assert ours.slop_bytes == real.slop_bytes, real.raw  # spa_get_slop_space


@st.composite
def layouts(draw):
    kind = draw(st.sampled_from([VdevKind.MIRROR, VdevKind.RAIDZ, VdevKind.DRAID, VdevKind.DISK]))
    if kind is VdevKind.DISK:
        return Layout((VdevGroup(kind, 1, 0, draw(st.integers(1, 6))),))
    if kind is VdevKind.MIRROR:
        w = draw(st.integers(2, 4))
        return Layout((VdevGroup(kind, w, w - 1, draw(st.integers(1, 4))),))
    p = draw(st.integers(1, 3))
    if kind is VdevKind.RAIDZ:
        return Layout((VdevGroup(kind, draw(st.integers(p + 1, 16)), p, draw(st.integers(1, 2))),))
    d, s = draw(st.integers(1, 10)), draw(st.integers(0, 2))
    return Layout((VdevGroup(kind, draw(st.integers(d + p + s, 20)), p, 1, d, s),))


@settings(max_examples=12, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(layout=layouts(), vdev_bytes=st.integers(GB, 24 * TB), ashift=st.sampled_from([9, 12, 13]))
def test_generated_layouts_equal_libzpool(zspace, layout, vdev_bytes, ashift):
    real = zspace(layout, vdev_bytes, ashift)
    ours = pool_capacity(layout, vdev_bytes, ashift=ashift, rules=zspace.version)
    assert (ours.size_bytes, ours.usable_bytes) == (real.size_bytes, real.usable_bytes), real.raw


# Disks of several sizes (docs/capacity.md#mixed-disk-sizes): files of the sizes written in the
# layout; each vdev on its own files, spanning ones counted as their smallest child.
MIXED = [
    ("raidz2:8@12TB+raidz2:4@8TB", 12), ("2xraidz2:4@12TB+raidz2:4@8TB", 12), ("raidz2:12@8x12TB/4x8TB", 12),
    ("raidz2:6@12TB+raidz2:6@2x12TB/4x8TB", 12), ("4xmirror:2@12TB+2xmirror:2@8TB", 12),
    ("raidz3:8@12TB+mirror:4@8TB", 9), ("draid2:8d:12c:1s@8x12TB/4x8TB", 12),
    ("raidz1:5@12TB+raidz1:5@1x12TB/4x8TB+spare:2@12TB", 12), ("8xdisk@12TB+4xdisk@8TB", 12),
    ("raidz2:6@20GB+mirror:3@10GB", 12), ("raidz1:3@3x4000787030016+raidz1:3@2x3TB/1x2TB", 13),
]


@pytest.mark.parametrize("layout,ashift", MIXED, ids=[f"{c[0]}-a{c[1]}" for c in MIXED])
def test_mixed_sizes_equal_libzpool(zspace, layout, ashift):
    lay = parse_layout(layout)
    files = osizes(lay, whole_disk=False)
    real = zspace(lay, files, ashift)
    ours = pool_capacity(lay, files, ashift=ashift, rules=zspace.version)
    assert (ours.size_bytes, ours.usable_bytes, ours.slop_bytes) == (real.size_bytes, real.usable_bytes,
                                                                     real.slop_bytes), real.raw
