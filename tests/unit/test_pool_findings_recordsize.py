"""The recordsize finding and the footprint advice (model/pool_findings.py, docs/pool.md#findings): what
can be judged from the root dataset's `zfs get` and the vdevs' ashift, on the captured pools with one
property changed; whether the recordsize suits the files is footprint's to measure."""

from __future__ import annotations

import dataclasses

import pytest

from test_pool_model import version
from test_pool_read import SERIES, read_both
from zfslab.model.pool_findings import findings
from zfslab.report.pool_view import footprint_advice
from zfslab.model.pool_model import check_model


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
