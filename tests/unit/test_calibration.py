"""model/calibration.py: the design rule picks at most a third of the layouts, from the layouts alone."""

from __future__ import annotations

import csv
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import DATA
from zfslab.model.calibration import calibration_budget, calibration_design
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.iops_fit import NAMES as IOPS_NAMES
from zfslab.model.speed_fit import NAMES
from zfslab.model.validation import row_layout


def calomel_layouts() -> list[Layout]:
    with open(os.path.join(DATA, "calomel-hdd-24x4tb.csv"), newline="") as f:
        return [row_layout(int(r["disks"]), r["kind"], int(r["vdevs"]), int(r["width"]), i)
                for i, r in enumerate(csv.DictReader(f))]


def test_the_budget_is_a_third_rounded_up():
    assert [calibration_budget(n) for n in (0, 1, 2, 3, 4, 26, 27, 28)] == [0, 1, 1, 1, 2, 9, 9, 10]
    with pytest.raises(ValueError, match=r"layouts\(=-1\)"):
        calibration_budget(-1)


def test_calomel_design_is_nine_rows_and_says_what_each_pins():
    picks = calibration_design(calomel_layouts())
    assert [(str(p.layout), p.rule) for p in picks] == [
        ("disk", "one disk"),
        ("24xdisk", "the widest stripe"),
        ("raidz3:24", "the widest raidz3"),
        ("raidz2:24", "the widest raidz2"),
        ("raidz1:24", "the widest raidz1"),
        ("raidz1:3", "the narrowest parity vdev"),
        ("raidz1:5", "the middle size"),
        ("mirror:3", "the widest mirror"),
        ("2xraidz3:11", "the most parity vdevs"),
    ]
    assert [p.index for p in picks] == [0, 25, 24, 23, 22, 5, 8, 3, 19]
    pinned = {name for p in picks for name in p.pins}
    assert pinned == set(NAMES) | set(IOPS_NAMES)  # every parameter of both fits is pinned by some row


def test_a_small_table_gets_its_most_informative_rows_first():
    layouts = [parse_layout(t) for t in ("disk", "2xdisk", "4xdisk", "mirror:2", "2xmirror:2", "raidz1:4")]
    assert [str(p.layout) for p in calibration_design(layouts)] == ["disk", "4xdisk"]
    assert calibration_design([]) == []
    assert [str(p.layout) for p in calibration_design(layouts, budget=1)] == ["disk"]
    assert len(calibration_design(layouts, budget=99)) == 2  # never above a third


def test_without_a_stripe_the_smallest_pool_and_the_most_vdevs_stand_in():
    layouts = [parse_layout(t) for t in ("raidz2:6", "2xraidz2:6", "mirror:2", "4xmirror:2", "raidz1:3", "raidz3:8")]
    picks = calibration_design(layouts)
    assert [(str(p.layout), p.rule) for p in picks] == [("mirror:2", "the smallest pool"),
                                                        ("4xmirror:2", "the most top-level vdevs")]


def test_draid_levels_are_covered_like_raidz():
    layouts = [parse_layout(t) for t in ("disk", "12xdisk", "draid2:8d:24c:1s", "draid1:4d:12c:0s", "raidz2:12",
                                         "mirror:2", "2xraidz2:6", "raidz1:4", "draid2:4d:12c:1s")]
    rules = [p.rule for p in calibration_design(layouts)]
    assert rules == ["one disk", "the widest stripe", "the widest raidz2"]
    more = layouts + [parse_layout(f"{n}xdisk") for n in (2, 3, 4, 5, 6, 8)]  # 15 rows: a budget of 5
    assert [(p.rule, str(p.layout)) for p in calibration_design(more)][3:] == [
        ("the widest raidz1", "raidz1:4"), ("the widest draid2", "draid2:8d:24c:1s")]


def _groups():
    kinds = st.sampled_from(["disk", "mirror", "raidz"])

    def build(kind, width, parity, count):
        if kind == "disk":
            return VdevGroup(VdevKind.DISK, 1, 0, count)
        if kind == "mirror":
            return VdevGroup(VdevKind.MIRROR, max(width, 2) % 5 + 2, max(width, 2) % 5 + 1, count)
        return VdevGroup(VdevKind.RAIDZ, max(width, parity + 2), parity, count)
    return st.builds(build, kinds, st.integers(2, 16), st.integers(1, 3), st.integers(1, 6))


tables = st.lists(_groups().map(lambda g: Layout((g,))), min_size=0, max_size=40)


@given(layouts=tables)
def test_never_more_than_a_third_and_never_twice_the_same_row(layouts):
    picks = calibration_design(layouts)
    assert len(picks) <= -(-len(layouts) // 3)
    assert len({p.index for p in picks}) == len(picks)
    assert all(layouts[p.index] is p.layout and set(p.pins) <= set(NAMES) | set(IOPS_NAMES) for p in picks)


@given(layouts=tables)
def test_the_design_is_deterministic_and_ignores_the_order_of_the_rows(layouts):
    first = [str(p.layout) for p in calibration_design(layouts)]
    assert first == [str(p.layout) for p in calibration_design(list(layouts))]
    reordered = sorted(layouts, key=str)
    assert sorted(first) == sorted(str(p.layout) for p in calibration_design(reordered))


@given(layouts=tables)
def test_every_parity_level_present_is_covered_when_the_budget_allows(layouts):
    levels = {g.parity for layout in layouts for g in layout.groups if g.kind is VdevKind.RAIDZ}
    has_stripe = any(all(g.kind is VdevKind.DISK for g in layout.groups) for layout in layouts)
    picks = calibration_design(layouts)
    if calibration_budget(len(layouts)) >= len(levels) + 2 and len(layouts) > 0:
        covered = {g.parity for p in picks for g in p.layout.groups if g.kind is VdevKind.RAIDZ}
        assert covered == levels, (has_stripe, [str(p.layout) for p in picks])
