"""model/pool_growth.py: the ways to take new disks into a pool that exists, judged where real
ZFS did it in the guest (tests/e2e/guest/capture_pools.sh): the "oops" pool is raidz2:4 to which
`zpool add` gave one plain disk, and the "expanded" pool raidz1:3 to which `zpool attach` gave one;
zfslab's figure for that step, from the pool before it, must be what ZFS then showed."""

from __future__ import annotations

import dataclasses

import pytest

from test_pool_model import version
from test_pool_read import POOLS, SERIES, captured, read_both
from zfslab.model.capacity import linux_whole_disk_osize, pool_capacity
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.pool_growth import growth, replacement
from zfslab.model.pool_model import check_model, class_alloc_bytes
from zfslab.system.pool_read import raidz_attaches

GIB2 = 2 * 2**30  # the guest's disks


def without_last_data_vdev(state):
    """The pool as it was before `zpool add` gave it its last data vdev (figures from the model)."""
    vdevs = list(state.vdevs)
    last = max(i for i, v in enumerate(vdevs) if v.alloc_class == "normal")
    del vdevs[last]
    return dataclasses.replace(state, vdevs=tuple(vdevs))


@pytest.mark.parametrize("series", SERIES)
def test_adding_one_disk_to_raidz2_4_is_what_zfs_showed_after_zpool_add(series):
    for oops in read_both(series, "oops"):
        before = without_last_data_vdev(oops)
        check = check_model(before, version(series))
        grown = growth(before, check, 1, GIB2)
        disk = next(o for o in grown.options if o.adds == "disk")
        assert disk.usable_after_bytes == oops.usable_bytes  # real ZFS, after the real zpool add
        assert disk.survives == 0 and disk.commands == (f"zpool add -f {oops.name} NEW1",)
        assert any("loses the whole pool" in c for c in disk.cautions)
        assert "for good" in grown.note   # a raidz pool: zpool remove cannot take the disk back


@pytest.mark.parametrize("series", SERIES)
def test_attaching_one_disk_to_raidz1_3_is_what_zfs_showed_after_the_expansion(series):
    if not (POOLS / series / "expanded").exists():
        pytest.skip("no expanded pool in this capture")
    attached = raidz_attaches(captured(series, "expanded", "zpool_history.txt"), "expanded")
    for grown_pool, files in zip(read_both(series, "expanded"), read_both(series, "files")):
        real = check_model(grown_pool, version(series), expanded=True, attached=attached)
        assert real.agrees is True
        # the "files" pool is raidz1:3 of the same bytes per child: the expanded pool before its attach
        check = check_model(files, version(series))
        attach = next(o for o in growth(files, check, 1, GIB2).options if o.how == "zpool attach")
        assert attach.usable_after_bytes == grown_pool.usable_bytes
        assert attach.layout_after == "raidz1:4" and attach.survives == 1
        assert attach.commands[0] == "zpool attach files raidz1-0 NEW1" and not attach.cautions[0].startswith("then")


@pytest.mark.parametrize("series", SERIES)
def test_the_vdevs_like_the_pools_come_first_and_each_gain_is_the_models(series):
    for state in read_both(series, "healthy"):   # raidz2:6 and a spare
        check = check_model(state, version(series))
        grown = growth(state, check, 6, GIB2)
        first = grown.options[0]
        assert (first.how, first.adds, first.like_the_pool, first.cautions) == ("zpool add", "raidz2:6", True, ())
        assert first.commands == (f"zpool add {state.name} raidz2 NEW1 NEW2 NEW3 NEW4 NEW5 NEW6",)
        osize = check.vdev_bytes
        for o in grown.options:
            if o.how != "zpool add" or o.adds.startswith(("special=", "log=")):
                continue
            after = pool_capacity(parse_layout(o.layout_after), osize, ashift=12, rules=version(series))
            now = pool_capacity(parse_layout("raidz2:6"), osize, ashift=12, rules=version(series))
            assert o.usable_after_bytes == after.usable_bytes and o.gain_bytes == after.usable_bytes - now.usable_bytes
        shapes = {o.adds: o for o in grown.options}
        assert set(shapes) >= {"raidz2:6", "3xmirror:2", "raidz1:6", "raidz3:6"}
        assert any("loses the whole pool" in c for c in shapes["raidz1:6"].cautions)
        assert shapes["3xmirror:2"].commands[0].startswith(f"zpool add -f {state.name} mirror NEW1 NEW2 mirror")
        # then the raidz grown by the six: attach, one disk at a time, each expansion waited for
        attach = grown.options[1]
        assert (attach.how, attach.layout_after, attach.survives) == ("zpool attach", "raidz2:12+spare:1", 2)
        assert attach.commands == (f"zpool attach {state.name} raidz2-0 NEW1", f"zpool wait -t raidz_expand {state.name}")
        assert attach.cautions[0] == "then the same two for NEW2, NEW3, NEW4, NEW5, NEW6: a raidz vdev takes one disk at a time"


def test_attach_is_offered_for_a_single_raidz_and_refused_for_smaller_disks():
    state = read_both("zfs-2.4", "files")[0]
    check = check_model(state, version("zfs-2.4"))
    small = next(o for o in growth(state, check, 2, 2 * 10**9).options if o.how == "zpool attach")
    assert small.usable_after_bytes is None and "smaller" in small.reason
    large = next(o for o in growth(state, check, 2, 4 * 10**12).options if o.how == "zpool attach")
    assert any("autoexpand" in c for c in large.cautions) and large.gain_bytes > 0
    adds = [o for o in growth(state, check, 3, 4 * 10**12).options if o.how == "zpool add"]
    assert all(any("differ in size" in c for c in o.cautions) for o in adds)


def grown_in_guest(series, *steps):
    """The captures of tests/e2e/guest/capture_grown.sh, one pair (JSON, text) per step."""
    if not (POOLS / series / f"{steps[0]}").exists():
        pytest.skip(f"no {steps[0]} in this capture")
    pool = steps[0].split("_")[0]
    return [read_both(series, pool, folder=step) for step in steps]


DISK_OSIZE = 2_136_997_888   # what ZFS sees of each guest disk; the files capture_grown.sh adds are this size


@pytest.mark.parametrize("series", SERIES)
def test_each_add_to_the_special_pool_is_what_zfs_showed_but_the_metadata_written_since(series):
    """capture_grown.sh: the special pool's shape (raidz2:4 + special mirror + log + cache), then a
    raidz2:4 added, then a special mirror, then a log. Each step's SIZE is ZFS's to the byte; its
    USED+AVAIL is ZFS's but for what the special vdevs came to hold meanwhile (the new vdev's own
    metadata, added back to AVAIL by 2.3.7+ and 2.4.1+): with that, to the byte too."""
    steps = grown_in_guest(series, "sgrow_before", "sgrow_added", "sgrow_special", "sgrow_log")
    wanted = ("raidz2:4", "special=mirror:2", "log=disk")
    for form in (0, 1):
        for (before, after), adds, count in zip(zip(steps, steps[1:]), wanted, (4, 2, 1)):
            before, after = before[form], after[form]
            check = check_model(before, version(series))
            assert check.agrees is True
            assert check_model(after, version(series)).agrees is True
            option = next(o for o in growth(before, check, count, DISK_OSIZE, whole_disk=False).options
                          if o.adds == adds)
            assert option.size_after_bytes == after.size_bytes, adds
            written = class_alloc_bytes(after) - class_alloc_bytes(before)
            assert 0 < written <= 64 * 1024, adds   # a few 4 KiB blocks of metadata, three copies each
            assert option.usable_after_bytes + written == after.usable_bytes, adds
            # the pool's vdevs already differ (special mirror beside raidz2): zpool add took each without -f
            assert "-f" not in option.commands[0].split()
    added = next(o for o in growth(steps[0][0], check_model(steps[0][0], version(series)), 4, DISK_OSIZE,
                                   whole_disk=False).options if o.adds == "raidz2:4")
    assert added.commands == ("zpool add sgrow raidz2 NEW1 NEW2 NEW3 NEW4",) and added.like_the_pool
    assert added.survives == 1   # raidz2 twice, but the special mirror of two survives one failure
    assert added.layout_after == "raidz2:4+raidz2:4+special=mirror:2+log=disk+cache:1"


def test_special_and_log_options_say_what_they_give_and_risk():
    state = read_both("zfs-2.4", "healthy")[0]   # raidz2:6 and a spare
    check = check_model(state, version("zfs-2.4"))
    options = {o.adds: o for o in growth(state, check, 6, GIB2).options}
    three = options["special=2xmirror:3"]   # as redundant as raidz2: zpool add takes it without -f
    assert three.commands == ("zpool add healthy special mirror NEW1 NEW2 NEW3 mirror NEW4 NEW5 NEW6",)
    assert three.survives == 2 and three.gain_bytes == 0 and three.size_after_bytes > state.size_bytes
    assert any("special_small_blocks" in c for c in three.cautions)
    two = options["special=3xmirror:2"]
    assert two.commands[0].startswith("zpool add -f healthy special mirror NEW1 NEW2 mirror")
    assert two.survives == 1 and any("loses the whole pool" in c for c in two.cautions)
    log = options["log=3xmirror:2"]
    assert log.gain_bytes == 0 and log.size_after_bytes == state.size_bytes and log.survives == 2
    assert list(options).index("log=3xmirror:2") > list(options).index("raidz3:6")   # no room for data: last
    assert not any(o.adds.startswith("log=") for o in growth(state, check, 3, GIB2).options)
    assert {o.adds for o in growth(state, check, 1, GIB2).options} >= {"disk", "log=disk"}


@pytest.mark.parametrize("series", SERIES)
def test_a_second_attach_and_an_add_to_an_expanded_raidz_are_what_zfs_showed(series):
    """capture_grown.sh: raidz1:3 after one attach, then a second attach, then a mirror added."""
    if series == "zfs-2.3" and not (POOLS / series / "xgrow_before").exists():
        pytest.skip("no xgrow in this capture")
    steps = grown_in_guest(series, "xgrow_before", "xgrow_attached", "xgrow_added")
    history = lambda step: raidz_attaches(captured(series, step, "zpool_history.txt"), "xgrow")  # noqa: E731
    for form in (0, 1):
        before, attached, added = (step[form] for step in steps)
        check = check_model(before, version(series), expanded=True, attached=history("xgrow_before"))
        attach = next(o for o in growth(before, check, 1, GIB2, attached=history("xgrow_before")).options
                      if o.how == "zpool attach")
        assert (attach.size_after_bytes, attach.usable_after_bytes) == (attached.size_bytes, attached.usable_bytes)
        check = check_model(attached, version(series), expanded=True, attached=history("xgrow_attached"))
        assert check.agrees is True
        grown = growth(attached, check, 2, GIB2, attached=history("xgrow_attached"))
        mirror = next(o for o in grown.options if o.adds == "mirror:2")
        assert (mirror.size_after_bytes, mirror.usable_after_bytes) == (added.size_bytes, added.usable_bytes)
        # raidz1 beside a mirror of 2 survives as many failures: zpool add took it without -f (2.2+)
        assert mirror.commands == ("zpool add xgrow mirror NEW1 NEW2",)
        # without the history the original width is unknown: no figures, and the reason says so
        blind = growth(attached, check, 2, GIB2)
        assert all(o.usable_after_bytes is None and "history" in o.reason for o in blind.options)


def test_a_pool_the_model_cannot_size_gives_its_options_without_figures():
    state = read_both("zfs-2.4", "degraded")[0]
    # a leaf whose size zpool did not show (disks of several sizes are modelled: test_pool_shapes.py)
    blind = dataclasses.replace(state, vdevs=(dataclasses.replace(state.vdevs[0], children=(
        state.vdevs[0].children[0], dataclasses.replace(state.vdevs[0].children[1], device_bytes=None))),))
    check = check_model(blind, version("zfs-2.4"))
    grown = growth(blind, check, 2, GIB2)
    assert grown.options and all(o.usable_after_bytes is None and "was not shown" in o.reason for o in grown.options)


@pytest.mark.parametrize("series", SERIES)
def test_replacing_every_disk_with_a_larger_one_is_what_zfs_showed_after_autoexpand(series):
    """tests/e2e/guest/capture_replaced.sh: raidz1:3 of 1 GiB files, each replaced by a 2 GiB file
    with autoexpand on. The grown vdev keeps its creation's metaslab size, so it is not a new pool
    of the larger disks: the model must say what ZFS showed, and a fresh pool's figure must not."""
    if not (POOLS / series / "replaced").exists():
        pytest.skip("no replaced pool in this capture")
    for before, after in zip(read_both(series, "replaced", folder="replaced_before"), read_both(series, "replaced")):
        check = check_model(before, version(series))
        assert check.agrees is True and check.vdev_bytes == 2**30
        grown = replacement(before, check, 2 * 2**30, streaming_mb_s=170.5, whole_disk=False)
        (option,) = grown.options
        assert option.usable_after_bytes == after.usable_bytes   # real ZFS, after the real replaces
        assert option.gain_bytes == after.usable_bytes - before.usable_bytes
        fresh = pool_capacity(parse_layout("raidz1:3"), 2 * 2**30, ashift=12, rules=version(series))
        assert fresh.usable_bytes != after.usable_bytes   # the metaslab size is the reason, not luck
        assert (option.how, option.layout_after, option.survives) == ("zpool replace", "raidz1:3", 1)
        assert option.commands == ("zpool set autoexpand=on replaced",
                                   "zpool replace -w replaced /var/tmp/zfslab-replaced/small1 NEW1")
        # 64 MiB written: ALLOC with parity, rebuilt at half of 170.5 MB/s
        alloc = sum(v.alloc_bytes for v in before.of_class("normal"))
        assert option.resilver_hours == pytest.approx(alloc / 85.25e6 / 3600)


def test_replacing_with_smaller_disks_gives_no_figures():
    state = read_both("zfs-2.4", "files")[0]
    check = check_model(state, version("zfs-2.4"))
    (small,) = replacement(state, check, 10**9, streaming_mb_s=170.5).options
    assert small.usable_after_bytes is None and "smaller" in small.reason
    (large,) = replacement(state, check, 4 * 10**12, streaming_mb_s=170.5).options
    assert large.gain_bytes > 0 and large.commands[0] == "zpool set autoexpand=on files"


@pytest.mark.parametrize("series", SERIES)
def test_replacing_the_data_disks_of_a_pool_with_class_vdevs_is_a_fresh_pool_but_the_data_vdevs_metaslabs(series):
    """The special pool (raidz2:4 + special mirror + log + cache): its data disks replaced by 4 TB ones,
    the class vdevs keep theirs. Derived apart: the same pool built fresh with @sizes (`zfslab capacity
    raidz2:4@4TB+special=mirror:2@OLD+log=disk@OLD`), plus what the grown raidz2:4's creation-sized
    metaslabs give over a fresh one's (the data-only pool grown, less it fresh). Before, no figures."""
    state = read_both(series, "special")[0]
    check = check_model(state, version(series))
    assert check.agrees is True
    grown = replacement(state, check, 4 * 10**12, streaming_mb_s=500)
    (option,) = grown.options
    old, new = check.vdev_bytes, linux_whole_disk_osize(4 * 10**12, 512)
    fresh = pool_capacity(parse_layout(f"raidz2:4@{new}+special=mirror:2@{old}+log=disk@{old}"), {new: new, old: old},
                          ashift=12, rules=version(series), class_alloc_bytes=class_alloc_bytes(state))
    data_grown = pool_capacity(parse_layout("raidz2:4"), new, ashift=12, rules=version(series), grown_from_bytes=old)
    data_fresh = pool_capacity(parse_layout("raidz2:4"), new, ashift=12, rules=version(series))
    assert data_grown.size_bytes != data_fresh.size_bytes   # the metaslab size matters here
    assert option.size_after_bytes == fresh.size_bytes + data_grown.size_bytes - data_fresh.size_bytes
    # slop is at its 128 GiB cap in both: the usable difference is the data vdevs' alone
    assert option.usable_after_bytes == fresh.usable_bytes + data_grown.usable_bytes - data_fresh.usable_bytes
    assert option.gain_bytes == option.usable_after_bytes - check.model_usable_bytes
    assert "keep their disks" in grown.note and option.layout_after == check.layout


def test_a_vdev_grown_from_its_own_size_is_a_new_pool_and_larger_disks_add_metaslabs_of_the_old_size():
    layout = parse_layout("2xmirror:2")
    same = pool_capacity(layout, 4 * 10**12, grown_from_bytes=4 * 10**12)
    assert same == pool_capacity(layout, 4 * 10**12)
    grown = pool_capacity(layout, 16 * 10**12, grown_from_bytes=4 * 10**12)
    assert {v.ms_shift for v in grown.vdevs} == {v.ms_shift for v in same.vdevs}
    assert all(v.ms_count > 600 for v in grown.vdevs)   # four times the ~150 of the original


@pytest.mark.parametrize("series", SERIES)
def test_a_draid_pool_grows_by_another_of_its_geometry_and_by_a_mirror_as_zfs_showed(series):
    """capture_grown.sh's dgrow: draid1:2d:4c:1s on four disks, then another draid1:2d:4c:1s added
    (the way a dRAID pool grows: no attach), then a mirror of two. zfslab offered no dRAID beside a
    dRAID before (fails before); each step is ZFS's SIZE and USED+AVAIL to the byte, and each
    command carries -f exactly when zpool wanted it (zpool_add.txt: 'as given' or 'with -f')."""
    steps = grown_in_guest(series, "dgrow_before", "dgrow_added", "dgrow_mirror")
    for form in (0, 1):
        before, added, mirrored = (step[form] for step in steps)
        check = check_model(before, version(series))
        assert check.agrees is True
        like = growth(before, check, 4, DISK_OSIZE, whole_disk=False).options[0]
        assert (like.adds, like.like_the_pool, like.how) == ("draid1:2d:4c:1s", True, "zpool add")
        assert (like.size_after_bytes, like.usable_after_bytes) == (added.size_bytes, added.usable_bytes)
        assert like.layout_after == "draid1:2d:4c:1s+draid1:2d:4c:1s" and like.survives == 1 and not like.cautions
        check = check_model(added, version(series))
        assert check.agrees is True
        mirror = next(o for o in growth(added, check, 2, DISK_OSIZE, whole_disk=False).options
                      if o.adds == "mirror:2")
        assert (mirror.size_after_bytes, mirror.usable_after_bytes) == (mirrored.size_bytes, mirrored.usable_bytes)
        for option, step in ((like, "dgrow_added"), (mirror, "dgrow_mirror")):
            forced = captured(series, step, "zpool_add.txt").startswith("with -f")
            assert ("-f" in option.commands[0].split()) == forced, (step, option.commands)
    assert like.commands == ("zpool add dgrow draid1:2d:4c:1s NEW1 NEW2 NEW3 NEW4",)
