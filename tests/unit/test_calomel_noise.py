"""benchmarks/calomel_noise.py: the source's noise estimated from rows physics says measure alike
(docs/speed.md#calomels-misses-noise-or-structure). The figures docs/speed.md quotes are pinned
here, so the text cannot drift from the script."""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def noise():
    spec = importlib.util.spec_from_file_location("calomel_noise", os.path.join(REPO, "benchmarks", "calomel_noise.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plain_write_classes_are_the_stripes_and_mirrors_of_equal_vdevs(noise):
    sd, dof, shown = noise.within_class_sd(noise.rows(), "write", strict=True)
    assert [line.split(" (")[0] for line in shown] == [
        "1: disk 108 mirror:2 106 mirror:3 106", "2: 2xdisk 237 2xmirror:2 226", "3: 3xdisk 392 3xmirror:2 389"]
    assert dof == 4 and 0.018 < sd < 0.020  # docs: 1.9 %


def test_reads_scatter_ten_times_more_than_writes(noise):
    table = noise.rows()
    read, _, _ = noise.within_class_sd(table, "read", strict=True)
    write, _, _ = noise.within_class_sd(table, "write", strict=True)
    assert 0.20 < read < 0.21 and read > 10 * write  # docs: 20.2 %, against 1.9 %


def test_the_mirror_rewrite_gap_repeats_and_the_read_gap_changes_sign(noise):
    table = noise.rows()
    assert noise.gaps(table, "rewrite") == "1: -1 %, 2: -27 %, 3: -30 %"
    assert noise.gaps(table, "read") == "2: +12 %, 3: +24 %, 24: -35 %"
