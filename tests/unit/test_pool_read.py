"""system/pool_read.py on the pools captured in the guest (tests/data/pools, made by
tests/e2e/guest/capture_pools.sh): both forms of one pool give the same record; 2.1's text parses."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest

from zfslab.errors import InputError
from zfslab.model.pool_state import PoolState
from zfslab.system.pool_read import read_json, read_text, vdev_ashifts

DATA = pathlib.Path(__file__).parent.parent / "data"
POOLS = DATA / "pools"
SERIES = ("zfs-2.4", "zfs-2.3")


def captured(series: str, pool: str, name: str) -> str:
    path = POOLS / series / pool / name
    return path.read_text() if path.exists() else ""


def pools_of(series: str) -> list[str]:
    return sorted(p.name for p in (POOLS / series).iterdir() if p.is_dir())


def captures_of(series: str) -> list[tuple[str, str]]:
    """(pool name, folder) of every capture: a pool captured at several steps has each in POOL_STEP/
    (capture_replaced.sh: replaced_before/; capture_grown.sh: sgrow_added/...); no pool name has a '_'."""
    return [(folder.split("_")[0], folder) for folder in pools_of(series)]


def read_both(series: str, pool: str, suffix: str = "", *, folder: str | None = None) -> tuple[PoolState, PoolState]:
    """The captured pool `pool` from its folder (default: its name) read from JSON and from text."""
    c = lambda name: captured(series, folder or pool, name)  # noqa: E731
    vdevs = c(f"zpool_get_vdevs_Hp{suffix}.txt")
    j = read_json(pool, c(f"zpool_status_jP{suffix}.json"), c(f"zpool_get_j{suffix}.json"),
                  c(f"zfs_get_j{suffix}.json"), vdevs)
    t = read_text(pool, c(f"zpool_status_Pp{suffix}.txt"), c(f"zpool_list_vHPp{suffix}.txt"),
                  c(f"zpool_get_Hp{suffix}.txt"), c(f"zfs_get_Hp{suffix}.txt"), vdevs)
    return j, t


def _steady(state: PoolState) -> PoolState:
    """The record without what changes between two commands run a moment apart on a live pool (the
    bytes allocated while txgs sync, the values of properties such as guid, which the JSON of
    zpool get prints clamped to 2^63 - 1) and the form it came from."""
    vdevs = tuple(_steady_vdev(v) for v in state.vdevs)
    return dataclasses.replace(state, vdevs=vdevs, alloc_bytes=0, free_bytes=0, used_bytes=0, available_bytes=0,
                               pool_props=(), dataset_props=(), source="", errors_text="")


def _steady_vdev(v):
    return dataclasses.replace(v, alloc_bytes=None, note="", children=tuple(_steady_vdev(c) for c in v.children))


@pytest.mark.parametrize("series", SERIES)
def test_each_captured_pool_reads_the_same_from_json_and_text(series):
    pools = pools_of(series)
    assert {"healthy", "degraded", "oops", "special", "files"} <= set(pools)
    for pool, folder in captures_of(series):
        if pool in ("expanded", "xgrow"):
            continue  # after `zpool attach -w` returns, the vdev still grows and a scrub runs: the forms,
            # taken a moment apart, saw two states (test_an_expanded_raidz_is_not_given_a_false_number)
        j, t = read_both(series, pool, folder=folder)
        assert (j.source, t.source) == ("json", "text")
        assert _steady(j) == _steady(t), pool
        # what holds whatever the moment: SIZE, USED+AVAIL (but with a special vdev, whose ALLOC 2.4 adds
        # to it), and the properties zfslab reads
        assert j.size_bytes == t.size_bytes, pool
        if not j.of_class("special"):
            assert j.usable_bytes == t.usable_bytes, pool
        for prop in ("compression", "creation"):
            assert j.dataset_prop(prop) == t.dataset_prop(prop)
        # autotrim is on only where capture_4k.sh set it (its disks are SSDs)
        assert j.pool_prop("autotrim") == t.pool_prop("autotrim") == ("on" if pool == "ashift9" else "off")


@pytest.mark.parametrize("series", SERIES)
def test_the_tree_classes_and_sizes(series):
    j, _ = read_both(series, "special")
    assert [(v.kind, v.alloc_class) for v in j.vdevs] == [
        ("raidz", "normal"), ("mirror", "special"), ("disk", "log"), ("disk", "cache")]
    raidz = j.vdevs[0]
    assert (raidz.parity, raidz.ashift, len(raidz.children)) == (2, 12, 4)
    assert {leaf.device_bytes for leaf in raidz.leaves} == {2136997888}  # GPT partition 1 of 2 GiB
    assert all(leaf.name.startswith("/dev/disk/by-id/scsi-0QEMU") for leaf in raidz.leaves)
    healthy, _ = read_both(series, "healthy")
    assert [(v.kind, v.alloc_class, v.state) for v in healthy.vdevs] == [
        ("raidz", "normal", "ONLINE"), ("disk", "spare", "AVAIL")]


@pytest.mark.parametrize("series", SERIES)
def test_the_degraded_mirror_and_its_resilver(series):
    j, t = read_both(series, "degraded")
    assert j.state == t.state == "DEGRADED"
    assert [leaf.state for leaf in j.vdevs[0].leaves] == ["ONLINE", "OFFLINE"]
    if not (POOLS / series / "degraded" / "zpool_status_Pp_resilvering.txt").exists():
        pytest.skip("no resilver was caught running in this capture")
    _, running = read_both(series, "degraded", "_resilvering")
    assert running.scan.function == "resilver" and running.scan.state == "scanning"
    assert 0 <= running.scan.percent_done < 100
    assert [c.kind for c in running.vdevs[0].children] == ["disk", "replacing"]


@pytest.mark.parametrize("series", SERIES)
def test_a_finished_scrub_has_its_end_time_in_both_forms(series):
    j, t = read_both(series, "files")
    assert j.scan.function == t.scan.function == "scrub"
    assert j.scan.state == t.scan.state == "finished"
    # the text's date is the guest's local time, which is UTC there
    assert j.scan.end_epoch_s == t.scan.end_epoch_s
    assert j.dataset_prop("compression") == "lz4"


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA / "zfs-2.1").glob("status_*.txt")
                                        if p.name != "status_nopool.txt"))
def test_openzfs_21_status_text_still_reads(name):
    text = (DATA / "zfs-2.1" / name).read_text()
    pool = text.split("pool: ", 1)[1].split()[0]
    props = f"{pool}\tsize\t1000\t-\n{pool}\tallocated\t10\t-\n{pool}\tfree\t990\t-\n"
    ds = f"{pool}\tused\t10\t-\n{pool}\tavailable\t900\t-\n"
    state = read_text(pool, text, "", props, ds)
    assert state.vdevs and all(v.alloc_class in ("normal", "spare", "log", "cache", "special") for v in state.vdevs)
    assert state.state in ("ONLINE", "DEGRADED")


@pytest.mark.parametrize("bad, message", [
    ('{"pools": {"p": {"vdevs": {"p": {"name": "p", "vdev_type": "root", "vdevs": {"x": '
     '{"name": "x", "vdev_type": "disk", "read_errors": -1}}}}}}}', "out of range"),
    ('{"pools": {"p": {"vdevs": {"p": {"name": "p", "vdev_type": "root", "vdevs": {"x": '
     '{"name": "x", "vdev_type": "disk", "read_errors": 1e400}}}}}}}', "not a whole number"),
    ('{"pools": {"p": {"vdevs": {"p": {"name": "p", "vdev_type": "root", "vdevs": {"x": '
     '{"name": "x", "vdev_type": "tape"}}}}}}}', "type"),
    ('[1, 2]', "not what zfslab reads"),
    ('{"pools": {"p": {"vdevs": {"p": {"name": "p", "vdev_type": "root", "vdevs": {"x": 7}}}}}}', "a vdev"),
    ('not json', "no JSON"),
    ('{"pools": {}}', "no pool"),
])
def test_bad_json_is_one_line_error(bad, message):
    props = json.dumps({"pools": {"p": {"properties": {k: {"value": 1} for k in ("size", "allocated", "free")}}}})
    ds = json.dumps({"datasets": {"p": {"properties": {k: {"value": 1} for k in ("used", "available")}}}})
    with pytest.raises(InputError) as e:
        read_json("p", bad, props, ds)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_bad_numbers_in_text_are_one_line_errors():
    status = (DATA / "zfs-2.4" / "status_online.txt").read_text()
    pool = status.split("pool: ", 1)[1].split()[0]
    for props in (f"{pool}\tsize\t-5\t-\n", f"{pool}\tsize\tNaN\t-\n", f"{pool}\tsize\t{'9' * 30}\t-\n"):
        with pytest.raises(InputError) as e:
            read_text(pool, status, "", props + f"{pool}\tallocated\t1\t-\n{pool}\tfree\t1\t-\n",
                      f"{pool}\tused\t1\t-\n{pool}\tavailable\t1\t-\n")
        assert "SIZE" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError):
        vdev_ashifts("raidz2-0\tashift\t99\t-\n")


def test_a_native_sector_zfs_shows_is_read_from_both_forms_and_checked():
    """zpool status notes a leaf whose physical sector exceeds its vdev's ashift (the captured ashift9
    pool: 512e disks); a value that is no sector size is a one-line error."""
    j, t = read_both("zfs-2.4", "ashift9")
    assert [leaf.native_sector_bytes for leaf in j.vdevs[0].leaves] == [4096] * 3
    assert [leaf.native_sector_bytes for leaf in t.vdevs[0].leaves] == [4096] * 3
    healthy, _ = read_both("zfs-2.4", "healthy")
    assert {leaf.native_sector_bytes for leaf in healthy.vdevs[0].leaves} == {None}
    c = lambda name: captured("zfs-2.4", "ashift9", name)  # noqa: E731
    for bad in ('"physical_ashift":30', '"physical_ashift":"x"', '"physical_ashift":3'):
        status = c("zpool_status_jP.json").replace('"physical_ashift":12', bad)
        with pytest.raises(InputError):
            read_json("ashift9", status, c("zpool_get_j.json"), c("zfs_get_j.json"), c("zpool_get_vdevs_Hp.txt"))
    status = c("zpool_status_Pp.txt").replace("4096B native", "3000B native")
    with pytest.raises(InputError, match="native sector 3000 B"):
        read_text("ashift9", status, c("zpool_list_vHPp.txt"), c("zpool_get_Hp.txt"), c("zfs_get_Hp.txt"),
                  c("zpool_get_vdevs_Hp.txt"))
