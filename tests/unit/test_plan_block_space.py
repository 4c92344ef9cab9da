"""`zfslab plan` for VMs and databases weighs space in their 16K blocks, not zfs list's 128K figure
(docs/recommend.md#space-at-the-workloads-block-size), and shows that figure; the other workloads
are unchanged."""

import json

from tests.unit.test_plan_terminal import in_terminal
from zfslab.model.allocation import usable_at_block
from zfslab.model.capacity import whole_disk_capacity
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.units import TB


def _plan_json(*args: str) -> dict:
    return json.loads(in_terminal(["plan", *args, "--json"], 200))


def test_vm_rows_carry_the_space_in_16k_blocks_and_general_rows_do_not():
    rows = {r["layout"]: r for r in _plan_json("8x12TB", "--workload", "vm")["layouts"]}
    cap = whole_disk_capacity(parse_layout("2xraidz2:4"), 12 * TB)
    assert rows["2xraidz2:4"]["space_block_bytes"] == 16384
    assert rows["2xraidz2:4"]["block_usable_bytes"] == usable_at_block(cap, 16384) < cap.usable_bytes
    assert rows["4xmirror:2"]["block_usable_bytes"] == rows["4xmirror:2"]["usable_bytes"]
    general = _plan_json("8x12TB")["layouts"]
    assert not any("space_block_bytes" in r or "block_usable_bytes" in r for r in general)


def test_recordsize_given_sets_the_block_for_a_database():
    rows = {r["layout"]: r for r in _plan_json("8x12TB", "--workload", "database", "--recordsize", "8K")["layouts"]}
    cap = whole_disk_capacity(parse_layout("raidz2:8"), 12 * TB)
    assert rows["raidz2:8"]["space_block_bytes"] == 8192
    assert rows["raidz2:8"]["block_usable_bytes"] == usable_at_block(cap, 8192)


def test_the_table_shows_the_figure_and_the_reason_and_footer_say_what_it_is():
    screen = in_terminal(["plan", "8x12TB", "--workload", "database"], 80)
    assert "at 16K" in screen.splitlines()[4]  # the header's first line
    assert "more space in 16K blocks" in screen and "Space is weighed in 16K blocks" in screen
    explained = in_terminal(["plan", "8x12TB", "--workload", "vm", "--explain", "--recordsize", "8K"], 80)
    assert "at 8K TB: what the empty pool holds in 8K blocks (vm data's, --recordsize)" in explained
    wide = in_terminal(["plan", "24x4TB", "--workload", "vm", "--wide"], 80)
    assert "at 16K" in wide
    assert "at 16K" not in in_terminal(["plan", "24x4TB", "--wide"], 80)


def test_business_vms_on_ten_disks_get_mirrors_because_of_the_16k_space():
    """2xraidz2:5 shows 23.53 TB but holds 17.67 TB of 16K blocks (9 sectors each): 3-way mirrors win
    (before, zfs list's 23.53 TB made it the pick)."""
    screen = in_terminal(["plan", "10x4TB", "--workload", "vm", "--data", "business"], 80)
    star = next(line for line in screen.splitlines() if line.startswith("★ Recommended:"))
    assert "xmirror:3" in star, screen
