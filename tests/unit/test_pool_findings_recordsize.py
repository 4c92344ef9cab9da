"""The recordsize finding and the footprint advice (model/pool_findings.py, docs/pool.md#findings): what
can be judged from each filesystem's `zfs get -r` (the root's `zfs get` where that was not read) and the
vdevs' ashift, on the captured pools with one property changed; whether the recordsize suits the files
is footprint's to measure."""

from __future__ import annotations

import dataclasses

import pytest

from test_pool_model import version
from test_pool_read import POOLS, SERIES, captured, read_both
from zfslab.model.pool_findings import findings
from zfslab.model.pool_model import check_model
from zfslab.model.pool_state import Filesystem
from zfslab.report.pool_view import footprint_advice
from zfslab.system.live_pool import read_pool
from zfslab.system.runner import Completed, Runner


def with_props(state, **props):
    return dataclasses.replace(state, dataset_props=tuple((k, props.get(k, v)) for k, v in state.dataset_props))


def codes(state):
    return [f.code for f in findings(state, {}, 0)]


@pytest.mark.parametrize("series", SERIES)
def test_a_record_no_larger_than_the_allocation_unit_cannot_be_compressed(series):
    state = read_both(series, "files")[0]   # raidz1:3, lz4, ashift 12, recordsize 128K
    assert "recordsize-uncompressible" not in codes(state)
    small = with_props(state, recordsize="4096")
    (found,) = [f for f in findings(small, {}, 0) if f.code == "recordsize-uncompressible"]
    assert found.text == ("recordsize is 4K on files, no more than its 4096-byte allocation unit (ashift 12): ZFS "
                          "keeps a record compressed only when it then takes fewer sectors, so lz4 saves nothing on "
                          "full records; `zfs set recordsize=128K files` for files (new writes only)")
    assert "recordsize-uncompressible" in codes(with_props(state, recordsize="1024"))
    # one sector more and it can save a sector; with compression off there is nothing to lose
    assert "recordsize-uncompressible" not in codes(with_props(state, recordsize="8192"))
    assert "recordsize-uncompressible" not in codes(with_props(state, recordsize="4096", compression="off"))


@pytest.mark.parametrize("value", ["abc", "-4096", "9" * 40, ""])
def test_a_recordsize_that_is_not_a_size_is_not_judged(value):
    state = with_props(read_both("zfs-2.4", "files")[0], recordsize=value)
    assert "recordsize-uncompressible" not in codes(state) and footprint_advice(state, "raidz1:3") == ""


def test_the_advice_names_the_command_that_measures_the_files():
    state = read_both("zfs-2.4", "files")[0]
    check = check_model(state, version("zfs-2.4"))
    assert footprint_advice(state, check.layout) == (
        "whether recordsize 128K suits the files under /files (each dataset may set its own: `zfs get -r recordsize "
        "files`) is what `zfslab footprint /files --recordsize 128K --layouts raidz1:3 --compression lz4 --ashift 12` "
        "measures, against another --recordsize; pool reads no file")
    assert "--recordsize 1M " in footprint_advice(with_props(state, recordsize=str(1 << 20)), check.layout)
    assert "`zfslab footprint '/my files' --recordsize" in footprint_advice(with_props(state, mountpoint="/my files"),
                                                                        check.layout)
    for mountpoint in ("none", "legacy", "-"):
        assert footprint_advice(with_props(state, mountpoint=mountpoint), check.layout) == ""


# ---- every filesystem's recordsize (zfs get -r), on the pool capture_shapes.sh built --------------

CAPTURED_AS = {  # what live_pool.read_pool runs, and the captured file that answers it
    "zpool get -Hp ashift,psize datasets all-vdevs": "zpool_get_vdevs_Hp.txt",
    "zpool status -D -j -P --json-int datasets": "zpool_status_jP.json",
    "zpool get -j --json-int all datasets": "zpool_get_j.json",
    "zfs get -j --json-int all datasets": "zfs_get_j.json",
    "zfs get -j --json-int -r -t filesystem recordsize,compression,mountpoint datasets": "zfs_get_rj.json",
    "zpool status -D -P -p datasets": "zpool_status_Pp.txt",
    "zpool list -vHPp datasets": "zpool_list_vHPp.txt",
    "zpool get -Hp all datasets": "zpool_get_Hp.txt",
    "zfs get -Hp all datasets": "zfs_get_Hp.txt",
    "zfs get -Hp -r -t filesystem recordsize,compression,mountpoint datasets": "zfs_get_rHp.txt",
}


class Captured(Runner):
    """Answers each command read_pool runs with the guest's captured output of it; `version` stands
    for `zfs version` (before 2.3: the text forms)."""

    def __init__(self, series: str, version: str | None = None):
        super().__init__()
        self.series, self.version, self.ran = series, version, []

    def which(self, program):
        return None if program in ("lsblk", "smartctl") else f"/sbin/{program}"

    def run(self, argv, **kw):
        line = " ".join(argv)
        self.ran.append(line)
        if line == "zpool list -H -o name":
            out = "datasets\n"
        elif line == "zfs version":
            out = f"zfs-{self.version}\nzfs-kmod-{self.version}\n" if self.version else \
                (POOLS / self.series / "zfs_version.txt").read_text()
        else:
            out = captured(self.series, "datasets", CAPTURED_AS[line])
        return Completed(tuple(argv), 0, out, "", 0.0)


@pytest.mark.parametrize("series", SERIES)
@pytest.mark.parametrize("version", [None, "2.2.7-1"])
def test_every_filesystem_is_read_from_json_and_text(series, version):
    runner = Captured(series, version)
    state = read_pool(runner, "datasets").state
    assert state.source == ("text" if version else "json")
    assert [(fs.name, fs.recordsize, fs.compression, fs.mountpoint) for fs in state.filesystems] == [
        ("datasets", "131072", "lz4", "/datasets"), ("datasets/db", "16384", "lz4", "/datasets/db"),
        ("datasets/media", "1048576", "lz4", "/datasets/media"), ("datasets/nomount", "131072", "lz4", "none"),
        ("datasets/small", "4096", "lz4", "/datasets/small")]  # the volume datasets/vol is no filesystem
    assert any(" -r -t filesystem " in line for line in runner.ran)


@pytest.mark.parametrize("series", SERIES)
def test_the_finding_names_the_child_dataset_whose_records_cannot_be_compressed(series):
    state = read_pool(Captured(series), "datasets").state
    (found,) = [f for f in findings(state, {}, 0) if f.code == "recordsize-uncompressible"]
    assert found.text == ("recordsize is 4K on datasets/small, no more than its 4096-byte allocation unit (ashift "
                          "12): ZFS keeps a record compressed only when it then takes fewer sectors, so lz4 saves "
                          "nothing on full records; `zfs set recordsize=128K datasets/small` for files (new writes "
                          "only)")
    # the root alone (what was read before zfs get -r) has 128K: nothing to say
    assert "recordsize-uncompressible" not in codes(dataclasses.replace(state, filesystems=()))
    # small with compression off, or 8K: nothing either
    for changed in ({"compression": "off"}, {"recordsize": "8192"}):
        fs = tuple(dataclasses.replace(f, **changed) if f.name == "datasets/small" else f for f in state.filesystems)
        assert "recordsize-uncompressible" not in codes(dataclasses.replace(state, filesystems=fs))


def test_many_small_records_are_named_up_to_three_then_counted():
    state = read_pool(Captured("zfs-2.4"), "datasets").state
    many = state.filesystems + tuple(Filesystem(f"datasets/s{i}", "2048", "zstd", f"/s{i}") for i in range(3))
    (found,) = [f for f in findings(dataclasses.replace(state, filesystems=many), {}, 0)
                if f.code == "recordsize-uncompressible"]
    assert found.text.startswith("recordsize is 4K on datasets/small, 2K on datasets/s0, 2K on datasets/s1 and 1 more "
                                 "(`zfs get -r recordsize datasets`), no more than its 4096-byte")
    assert "so compression saves nothing" in found.text and "`zfs set recordsize=128K DATASET` on each" in found.text


def test_the_advice_gives_a_command_for_each_dataset_of_its_own_recordsize():
    state = read_pool(Captured("zfs-2.4"), "datasets").state
    layout = check_model(state, version("zfs-2.4")).layout
    tail = " --layouts raidz1:3 --compression lz4 --ashift 12`"
    assert footprint_advice(state, layout) == (
        f"whether recordsize 128K suits the files under /datasets is what `zfslab footprint /datasets --recordsize "
        f"128K{tail} measures, against another --recordsize; pool reads no file; datasets with a recordsize of "
        f"their own: datasets/db (16K): `zfslab footprint /datasets/db --recordsize 16K{tail}; datasets/media (1M): "
        f"`zfslab footprint /datasets/media --recordsize 1M{tail}; datasets/small (4K): `zfslab footprint "
        f"/datasets/small --recordsize 4K{tail}")  # not nomount (no mountpoint), not a child of 128K like the root
    more = state.filesystems + (Filesystem("datasets/x", "65536", "off", "/x"),
                                Filesystem("datasets/y", "65536", "lz4", "/y"))
    advice = footprint_advice(dataclasses.replace(state, filesystems=more), layout)
    assert advice.endswith("datasets/small (4K): `zfslab footprint /datasets/small --recordsize 4K"
                           f"{tail}; and 2 more (`zfs get -r recordsize datasets`)")
    # a root without a mountpoint: its children are still named
    unmounted = (dataclasses.replace(state.filesystems[0], mountpoint="none"),) + state.filesystems[1:]
    assert footprint_advice(dataclasses.replace(state, filesystems=unmounted), layout).startswith(
        "datasets with a recordsize of their own: datasets/db (16K)")
