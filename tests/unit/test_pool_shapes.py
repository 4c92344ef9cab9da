"""model/pool_model.py on the pool shapes tests/e2e/guest/capture_shapes.sh built on the real module
(docs/pool.md#model-against-reality): disks of several sizes, between vdevs and within one, and dRAID
with and without a distributed spare, each read from JSON and text and set against ZFS to the byte."""

from __future__ import annotations

import dataclasses

import pytest

from test_pool_model import codes, version
from test_pool_read import SERIES, read_both
from zfslab.model.capacity import pool_capacity, rules_for
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import VdevKind
from zfslab.model.pool_growth import MIXED_SIZES, growth, replacement
from zfslab.model.pool_model import check_model, class_alloc_bytes, pool_layout
from zfslab.report.pool_view import pool_lines

GIB = 2**30
MIXED = "mirror:2@1x2GiB/1x1GiB+raidz1:3@1536MiB+raidz1:3@1x2GiB/1x1536MiB/1x1GiB"


@pytest.mark.parametrize("series", SERIES)
def test_disks_of_several_sizes_agree_to_the_byte(series):
    """A mirror of 1 and 2 GiB files, a raidz1 of three 1.5 GiB, a raidz1 of 1, 1.5 and 2 GiB."""
    for state in read_both(series, "mixed"):
        check = check_model(state, version(series))
        assert check.layout == MIXED and check.vdev_bytes is None and check.ashift == 12
        assert (check.pool_size_bytes, check.pool_usable_bytes) == (8254390272, 5651447808)
        assert (check.size_diff_bytes, check.usable_diff_bytes) == (0, 0), check
        assert check.agrees is True and check.reason == ""


@pytest.mark.parametrize("series", SERIES)
def test_each_vdev_of_mixed_disks_is_sized_by_its_smallest_child(series):
    """Each vdev's SIZE as ZFS shows it is the model's for its smallest disk (vdev_mirror_open and
    vdev_raidz_open take the minimum child asize); counted by its largest, every mixed vdev is off."""
    state = read_both(series, "mixed")[0]
    layout = pool_layout(state, sized=True)
    sizes = {b: b for g in layout.groups for _, b in g.sizes}
    cap = pool_capacity(layout, sizes, ashift=12, rules=rules_for(version(series)), class_alloc_bytes=0)
    assert [v.size_bytes for v in cap.vdevs] == [v.size_bytes for v in state.vdevs] \
        == [1006632960, 4294967296, 2952790016]
    for v, vcap in zip(state.vdevs, cap.vdevs):
        largest = max(leaf.device_bytes for leaf in v.leaves)
        if largest != min(leaf.device_bytes for leaf in v.leaves):
            alike = parse_layout(f"{'mirror' if v.kind == 'mirror' else 'raidz1'}:{len(v.children)}")
            assert pool_capacity(alike, largest, ashift=12, rules=rules_for(version(series))).size_bytes \
                != v.size_bytes


DRAID = {"dspare": ("draid1:2d:6c:1s", (1, 2, 6, 1), 4831764480, 3083812912),
         "dnospare": ("draid2:3d:7c:0s", (2, 3, 7, 0), 6979112960, 3914213032)}


@pytest.mark.parametrize("series", SERIES)
@pytest.mark.parametrize("pool", sorted(DRAID))
def test_a_draid_vdev_is_read_from_json_and_text_and_agrees_to_the_byte(series, pool):
    layout, (parity, data, children, spares), size, usable = DRAID[pool]
    for state in read_both(series, pool):
        (group,) = pool_layout(state).groups
        assert group.kind is VdevKind.DRAID
        assert (group.parity, group.draid_data, group.width, group.draid_spares) == (parity, data, children, spares)
        check = check_model(state, version(series))
        assert check.layout == layout and check.vdev_bytes == GIB
        assert (check.pool_size_bytes, check.pool_usable_bytes) == (size, usable)
        assert check.agrees is True, (state.source, check)


@pytest.mark.parametrize("series", SERIES)
def test_a_distributed_spare_is_no_hot_spare_and_no_disk(series):
    """zpool status lists draid1-0-0 under spares (JSON vdev_type "dspare"): it is the layout's 1s,
    not a spare:1, and has no device for lsblk or smartctl to read. Before, the JSON form of any dRAID
    pool with a spare failed to read ("dspare is not what zfslab reads")."""
    for state in read_both(series, "dspare"):
        (spare,) = state.of_class("spare")
        assert (spare.name, spare.kind, spare.state, spare.leaves) == ("draid1-0-0", "dspare", "AVAIL", ())
        assert str(pool_layout(state)) == "draid1:2d:6c:1s"  # no +spare:1


def test_a_draid_name_that_does_not_match_its_children_is_not_modelled():
    state = read_both("zfs-2.4", "dspare")[0]
    v = state.vdevs[0]
    bad = dataclasses.replace(state, vdevs=(dataclasses.replace(v, name="draid1:2d:7c:1s-0"),) + state.vdevs[1:])
    check = check_model(bad, version("zfs-2.4"))
    assert check.agrees is None and check.reason == "draid1:2d:7c:1s-0 names 7 children but zpool shows 6"


def test_mixed_sizes_print_within_80_columns_and_replacing_says_it_has_no_figures():
    state = read_both("zfs-2.4", "mixed")[0]
    check = check_model(state, version("zfs-2.4"))
    lines = pool_lines(state, check)
    assert max(map(len, lines)) <= 80
    assert "  " + MIXED in lines and "ashift 12, disks of several sizes, each as ZFS sees it after the @" in lines
    (replaced,) = replacement(state, check, 4 * GIB, streaming_mb_s=200).options
    assert replaced.reason == MIXED_SIZES and replaced.gain_bytes is None


@pytest.mark.parametrize("series", SERIES)
def test_adding_a_vdev_to_a_pool_of_several_sizes_gives_what_zfs_shows(series):
    """The mixed pool without its raidz1 of three 1.5 GiB files, then --add of three such files: the
    figures are the mixed pool's as ZFS shows them (a vdev added later is laid out as at creation,
    docs/pool.md#growing-the-pool; the order of the vdevs changes neither figure)."""
    for state in read_both(series, "mixed"):
        before = dataclasses.replace(state, vdevs=tuple(v for v in state.vdevs if v.name != "raidz1-1"))
        check = check_model(before, version(series))
        assert check.vdev_bytes is None and check.model_usable_bytes is not None
        grown = growth(before, check, 3, 1536 << 20, whole_disk=False)
        raidz = next(o for o in grown.options if o.adds == "raidz1:3")
        assert (raidz.size_after_bytes, raidz.usable_after_bytes) == (state.size_bytes, state.usable_bytes)
        assert raidz.gain_bytes == state.usable_bytes - check.model_usable_bytes


@pytest.mark.parametrize("series", SERIES)
def test_growth_beside_a_draid_keeps_its_geometry(series):
    """A raidz added beside the dRAID: the dRAID keeps its groups and spares in the figures (it was
    rebuilt without them and refused: "a dRAID group needs at least 1 data disk, got 0d")."""
    state = read_both(series, "dspare")[0]
    check = check_model(state, version(series))
    grown = growth(state, check, 3, GIB, whole_disk=False)
    raidz = next(o for o in grown.options if o.adds == "raidz1:3")
    alone = pool_capacity(parse_layout("raidz1:3"), GIB, ashift=12, rules=rules_for(version(series)))
    assert raidz.gain_bytes is not None and 0 < raidz.gain_bytes <= alone.usable_bytes + alone.slop_bytes
    assert "no dRAID vdev is there" in grown.note


@pytest.mark.parametrize("series", SERIES)
@pytest.mark.parametrize("pool", ["special", "healthy"])
def test_the_sized_reading_of_a_pool_of_one_size_gives_its_figures(series, pool):
    """The path a pool of several sizes takes (each vdev, special and log ones too, on its own disks;
    spares and cache left out) gives the one-size pool's figures to the byte on pools of one size."""
    state = read_both(series, pool)[0]
    check = check_model(state, version(series))
    layout = pool_layout(state, sized=True)
    sized = pool_capacity(layout, {check.vdev_bytes: check.vdev_bytes}, ashift=12, rules=rules_for(version(series)),
                          class_alloc_bytes=class_alloc_bytes(state))
    assert (sized.size_bytes, sized.usable_bytes) == (state.size_bytes, state.usable_bytes)


@pytest.mark.parametrize("series", SERIES)
def test_the_findings_on_the_shapes(series):
    """mixed: its vdevs differ in kind, width and size (unequal-vdevs); the dRAID pools: nothing (a
    dRAID survives its parity, like the rest); datasets' 4K child: test_pool_findings_recordsize.py."""
    expected = {"mixed": ["unequal-vdevs"], "dspare": [], "dnospare": []}
    for pool, want in expected.items():
        for state in read_both(series, pool):
            assert codes(state) == want, (pool, state.source)
