"""model/plan.py: one row per layout, checked against real OpenZFS sizes and hand-worked values.

Sizes: tests/data/golden_capacity.csv (real OpenZFS 2.1.11/2.3.2 on file vdevs) and the
whole-disk worked examples of 24 x WD4001FYYG that tests/unit/test_capacity.py pins.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zfslab.errors import LayoutError, ParamError, SizeError, UsageError
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.performance import PRESETS, SpeedPrediction
from zfslab.commands._common import PARAM_FLAGS, parse_disk_set
from zfslab.model.plan import MAX_DISKS, DiskSet, PlanRow, disk_set, plan
from zfslab.model.reliability.params import RiskParams
from zfslab.model.units import MiB

WD4001FYYG = 4_000_787_030_016  # 7 814 037 168 sectors of 512 bytes
WD4001FYYG_PARTITION = 4_000_776_716_288  # ZFS's share of the whole disk (docs/capacity.md#partitioning)


def only(disks: DiskSet, layout: str, **kw) -> PlanRow:
    rows = plan(disks, layouts=[parse_layout(layout)], **kw)
    assert len(rows) == 1
    return rows[0]


# ---- the disks -------------------------------------------------------------------------------

def test_whole_disks_get_the_partition_zpool_create_makes():
    ds = disk_set(6, WD4001FYYG)
    assert ds == DiskSet(count=6, disk_bytes=WD4001FYYG, vdev_bytes=WD4001FYYG_PARTITION, whole_disk=True)


def test_a_4kn_disk_partition_worked_by_hand():
    # zpool_label_disk with 4096-byte sectors: 976 754 646 sectors; the GPT takes 1 + 4 at the
    # end (16 KiB of entries, at least 16 KiB + 1 sector), so last usable LBA 976 754 640; minus
    # the 8 MiB reserve (2048 sectors) and the 1 MiB start (256 sectors): 976 752 337 sectors,
    # rounded down to 2048: 976 750 592 x 4096 bytes
    ds = disk_set(6, WD4001FYYG, sector_bytes=4096)
    assert ds.vdev_bytes == 976_750_592 * 4096 == 4_000_770_424_832


def test_exact_vdev_sizes_are_taken_as_they_are():
    assert disk_set(8, 5 * 10**12, exact_vdev=True) == DiskSet(8, 5 * 10**12, 5 * 10**12, False)


@given(disk_bytes=st.integers(128 * MiB, 40 * 10**12), sector=st.sampled_from([512, 4096]))
def test_a_whole_disk_partition_is_aligned_and_leaves_the_reserve(disk_bytes, sector):
    ds = disk_set(1, disk_bytes, sector_bytes=sector)
    assert ds.vdev_bytes % (2048 * sector) == 0  # PARTITION_END_ALIGNMENT of 2048 sectors
    # at least the 1 MiB offset, the 8 MiB reserve partition and the backup GPT are not ZFS's
    assert disk_bytes - ds.vdev_bytes >= MiB + 8 * MiB + 16 * 1024


@pytest.mark.parametrize("count", [0, -1, MAX_DISKS + 1])
def test_disk_counts_outside_what_is_planned_are_refused(count):
    with pytest.raises(ParamError) as e:
        disk_set(count, WD4001FYYG)
    assert e.value.worded(PARAM_FLAGS) == f"disk count {count}: zfslab plans for 1 to 1024 disks"
    assert e.value.exit_code == 2


def test_the_disk_count_limits_are_inclusive():
    assert MAX_DISKS == 1024
    assert disk_set(1, WD4001FYYG).count == 1
    assert disk_set(1024, WD4001FYYG).count == 1024


def test_label_shows_count_and_vendor_size():
    assert disk_set(24, 4 * 10**12).label == "24 × 4.00 TB"
    assert disk_set(8, 12 * 10**12, exact_vdev=True).label == "8 × 12.00 TB"


@pytest.mark.parametrize("text,expected", [
    ("24x4TB", (24, 4 * 10**12)),
    (" 8 x 12TB ", (8, 12 * 10**12)),
    ("24X4TB", (24, 4 * 10**12)),
    ("4×3.64TiB", (4, 4_002_222_325_104)),  # 3.64 x 2^40 = 4 002 222 325 104.64, truncated
    ("6x4000787030016", (6, WD4001FYYG)),
])
def test_parse_disk_set(text, expected):
    assert parse_disk_set(text) == expected


@pytest.mark.parametrize("text", ["24 disks", "x4TB", "24x", "", "٣x4TB"])
def test_parse_disk_set_shows_the_form_it_wants(text):
    with pytest.raises(UsageError) as e:
        parse_disk_set(text)
    assert str(e.value) == f"cannot read disks {text!r}: write COUNTxSIZE, e.g. 24x4TB or 8x12TB"


def test_parse_disk_set_passes_on_the_size_error():
    with pytest.raises(SizeError, match="'T' is ambiguous: write 4TB"):
        parse_disk_set("24x4T")


# ---- the rows --------------------------------------------------------------------------------

def test_default_rows_are_every_candidate_for_four_disks_in_order():
    # by hand from candidate_layouts' rule: stripe; 2/3/4-way mirrors and raidz1-3 of at least
    # 2 data disks that tile 4, 3 or 2 disks (leaving 0-2 hot spares); no dRAID fits 4 disks
    rows = plan(disk_set(4, 4 * 10**12))
    assert [r.layout for r in rows] == [
        "4xdisk", "2xmirror:2", "mirror:2+spare:2", "mirror:3+spare:1", "mirror:4",
        "raidz1:3+spare:1", "raidz1:4", "raidz2:4"]
    assert [r.layout for r in plan(disk_set(4, 4 * 10**12), hot_spares=False)] == [
        "4xdisk", "2xmirror:2", "mirror:4", "raidz1:4", "raidz2:4"]
    assert all(r.disks == 4 for r in rows)


def test_draid_rows_come_only_when_asked():
    with_draid = {r.layout for r in plan(disk_set(12, 4 * 10**12))}
    without = {r.layout for r in plan(disk_set(12, 4 * 10**12), draid=False)}
    assert without < with_draid
    assert with_draid - without == {f"draid{p}:{d}d:12c:{s}s" for p in (1, 2, 3) for d in (4, 8) for s in (0, 1, 2)
                                   if d + p <= 12 - s}


def test_raidz2_of_six_whole_disks_row_by_hand():
    r = only(disk_set(6, WD4001FYYG), "raidz2:6")
    assert (r.layout, r.shape) == ("raidz2:6", "raidz2, 6 wide (4 data + 2 parity)")
    assert (r.disks, r.hot_spares, r.top_level_vdevs, r.failures_guaranteed, r.failures_best_case) == (6, 0, 1, 2, 2)
    assert r.size_bytes == 24_000_277_250_048
    assert r.usable_bytes == 15_847_120_699_392
    assert r.raw_bytes == 6 * WD4001FYYG == 24_004_722_180_096
    assert r.efficiency == 15_847_120_699_392 / 24_004_722_180_096
    assert r.usable_tb == 15.847120699392
    assert r.usable_tib == 15_847_120_699_392 / 2**40
    assert r.zfs_list_size == "14.4T"  # 14.41287 TiB in at most five characters, as `zfs list` prints it
    assert (r.years, r.p_loss, r.p_damage, r.mttdl_hours, r.speed, r.speed_x) == ((), None, None, None, None, None)


@pytest.mark.parametrize("layout,size,usable,top,guaranteed,best", [
    ("2xraidz2:12", 96_001_109_000_192, 72_988_405_792_768, 2, 2, 4),
    ("raidz2:23+spare:1", 92_015_379_349_504, 81_634_040_741_888, 1, 2, 2),
    ("draid2:8d:24c:1s", 92_015_203_860_480, 73_366_893_817_888, 1, 2, 2),
])
def test_24_whole_disks(layout, size, usable, top, guaranteed, best):
    r = only(disk_set(24, WD4001FYYG), layout)
    assert (r.size_bytes, r.usable_bytes) == (size, usable)
    assert (r.top_level_vdevs, r.failures_guaranteed, r.failures_best_case) == (top, guaranteed, best)
    assert r.raw_bytes == 24 * WD4001FYYG  # a hot spare is bought like any other disk


@pytest.mark.parametrize("layout,ashift,size,usable", [
    # tests/data/golden_capacity.csv: real OpenZFS on 5 TB file vdevs
    ("8xdisk", 12, 39_994_735_460_352, 39_788_577_030_144),
    ("raidz1:8", 12, 39_994_735_460_352, 33_530_004_373_504),
    ("raidz2:8", 12, 39_994_735_460_352, 28_296_318_287_872),
    ("raidz3:8", 12, 39_994_735_460_352, 22_672_058_613_760),
    ("2xraidz1:4", 12, 39_994_735_460_352, 28_921_236_029_440),
    ("raidz1:8", 9, 39_994_735_460_352, 34_623_610_421_248),
    ("raidz3:8", 9, 39_994_735_460_352, 24_703_041_273_856),
])
def test_file_vdevs_match_real_openzfs(layout, ashift, size, usable):
    r = only(disk_set(8, 5 * 10**12, exact_vdev=True), layout, ashift=ashift)
    assert (r.size_bytes, r.usable_bytes, r.raw_bytes) == (size, usable, 8 * 5 * 10**12)


def test_the_rules_of_older_openzfs_are_passed_on():
    # docs/capacity.md#worked-example: the same raidz2:6 before the 2.1 slop rules
    assert only(disk_set(6, WD4001FYYG), "raidz2:6", rules="0.8").usable_bytes == 15_485_042_163_712


def test_a_layout_of_another_disk_count_is_refused():
    with pytest.raises(LayoutError) as e:
        plan(disk_set(6, WD4001FYYG), layouts=[parse_layout("raidz2:6"), parse_layout("mirror:2")])
    assert str(e.value) == "layout mirror:2 uses 2 disks but the plan has 6"


@given(count=st.integers(3, 16), tb=st.integers(1, 20))
def test_rows_never_show_more_than_the_raw_bytes(count, tb):
    for r in plan(disk_set(count, tb * 10**12), draid=False):
        assert 0 < r.usable_bytes < r.size_bytes <= r.raw_bytes == count * tb * 10**12
        assert r.efficiency == r.usable_bytes / r.raw_bytes
        assert r.failures_guaranteed <= r.failures_best_case


# ---- risk and speed --------------------------------------------------------------------------

def test_a_stripe_is_lost_at_its_first_failure():
    # no redundancy: P(loss within t) = 1 - (1 - AFR)^(disks x years), MTTDL = 1 / (disks x lambda)
    risk = RiskParams(disk_bytes=4 * 10**12, afr=0.015, years=(1.0, 5.0, 10.0))
    r = only(disk_set(4, 4 * 10**12), "4xdisk", risk=risk)
    assert r.years == (1.0, 5.0, 10.0)
    assert r.p_loss == pytest.approx(tuple(1 - 0.985 ** (4 * y) for y in (1, 5, 10)), rel=1e-9)
    assert r.mttdl_hours == pytest.approx(8760 / (4 * -math.log(0.985)), rel=1e-9)
    assert len(r.p_damage) == 3


def test_more_parity_is_less_risk_and_risk_grows_with_time():
    risk = RiskParams(disk_bytes=4 * 10**12)
    rows = plan(disk_set(6, 4 * 10**12), layouts=[parse_layout(x) for x in ("6xdisk", "raidz1:6", "raidz2:6", "raidz3:6")],
                risk=risk)
    for r in rows:
        assert list(r.p_loss) == sorted(r.p_loss) and 0 < r.p_loss[0] < 1
    for weaker, stronger in zip(rows, rows[1:]):
        assert stronger.mttdl_hours > weaker.mttdl_hours
        assert all(s < w for s, w in zip(stronger.p_loss, weaker.p_loss))


def test_speed_of_a_two_disk_stripe_by_hand():
    # hdd7200: 220 MB/s each way, 80 / 140 random read IOPS, 12 ms sync write, no host limits
    r = only(disk_set(2, 4 * 10**12), "2xdisk", speed=PRESETS["hdd7200"])
    assert set(r.speed) == set(r.speed_x) == set(SpeedPrediction.metrics())
    assert (r.speed["write_mb_s"], r.speed["read_mb_s"]) == (440.0, 440.0)
    # rewrite: one disk's 1/(1/220 + 1/220) = 110 MB/s, times 1 + (2 - 1) x rho with rho 0.2
    assert r.speed["rewrite_mb_s"] == pytest.approx(132.0, rel=1e-12)
    assert r.speed_x == pytest.approx({"write_mb_s": 2.0, "rewrite_mb_s": 1.2, "read_mb_s": 2.0,
                                       "rand_read_iops_qd1": 1.0, "rand_read_iops_qd8": 2.0,
                                       "rand_write_iops_qd1": 2.0, "rand_write_iops_qd8": 2.0,
                                       "sync_write_iops_qd1": 1.0, "sync_write_iops_qd8": 2.0}, rel=1e-12)


def test_one_disk_is_one_disk_fast():
    r = only(disk_set(1, 4 * 10**12), "disk", speed=PRESETS["ssd"])
    assert r.speed_x == {k: 1.0 for k in SpeedPrediction.metrics()}


# ---- PlanRow ---------------------------------------------------------------------------------

def _row(**kw) -> PlanRow:
    base = dict(layout="raidz2:6", shape="s", disks=6, hot_spares=0, top_level_vdevs=1, size_bytes=10,
                usable_bytes=3 * 2**40, raw_bytes=8 * 10**12, efficiency=0.4, failures_guaranteed=2,
                failures_best_case=2)
    return PlanRow(**(base | kw))


def test_p_loss_at_takes_the_nearest_year_and_the_earlier_on_a_tie():
    r = _row(years=(1.0, 5.0, 10.0), p_loss=(0.1, 0.2, 0.3), p_damage=(0.4, 0.5, 0.6))
    assert [r.p_loss_at(y) for y in (1, 5, 10, 4, 2, 8, 100, 0)] == [0.1, 0.2, 0.3, 0.2, 0.1, 0.3, 0.3, 0.1]
    assert r.p_loss_at(3) == 0.1  # as near 1 as 5
    assert _row().p_loss_at(5) is None


def test_as_dict_without_risk_or_speed():
    d = _row().as_dict()
    assert d == {"layout": "raidz2:6", "shape": "s", "disks": 6, "hot_spares": 0, "top_level_vdevs": 1,
                 "size_bytes": 10, "usable_bytes": 3 * 2**40, "usable_tb": 3.2985, "usable_tib": 3.0,
                 "zfs_list_size": "3T", "raw_bytes": 8 * 10**12, "efficiency": 0.4, "failures_guaranteed": 2,
                 "failures_best_case": 2}


def test_as_dict_with_risk_and_speed_keys_years_as_text():
    r = _row(years=(1.0, 2.5), p_loss=(0.01, 0.02), p_damage=(0.03, 0.04), mttdl_hours=1e6,
             speed={"write_mb_s": 100.0}, speed_x={"write_mb_s": 2.0}, efficiency=0.123456789)
    d = r.as_dict()
    assert d["p_loss"] == {"1": 0.01, "2.5": 0.02}
    assert d["p_damage"] == {"1": 0.03, "2.5": 0.04}
    assert d["mttdl_hours"] == 1e6
    assert (d["speed"], d["speed_x_single_disk"]) == ({"write_mb_s": 100.0}, {"write_mb_s": 2.0})
    assert d["efficiency"] == 0.123457  # six decimals


def test_as_dict_of_a_planned_row_keeps_its_bytes_exact():
    r = only(disk_set(6, WD4001FYYG), "raidz2:6")
    d = r.as_dict()
    assert (d["size_bytes"], d["usable_bytes"], d["raw_bytes"]) == (24_000_277_250_048, 15_847_120_699_392,
                                                                    24_004_722_180_096)
    assert (d["usable_tb"], d["usable_tib"], d["zfs_list_size"]) == (15.8471, 14.4129, "14.4T")  # 15 847 120 699 392 / 2^40 = 14.41287


def test_the_disk_size_reaches_plan_once_through_the_disk_set():
    """RiskParams.disk_bytes and the DiskSet once both carried the size and could disagree (issue 24):
    plan() sizes the risk from `disks`, and refuses risk inputs that name another size."""
    from zfslab.model.units import TB

    disks, layouts = disk_set(8, 12 * TB), [parse_layout("raidz2:8")]
    from_disks = plan(disks, layouts=layouts, risk=RiskParams())[0]
    said_twice = plan(disks, layouts=layouts, risk=RiskParams(disk_bytes=12 * TB))[0]
    assert from_disks.p_loss == said_twice.p_loss and from_disks.p_loss[0] > 0
    with pytest.raises(ParamError, match="not the plan's disks' size"):
        plan(disks, layouts=layouts, risk=RiskParams(disk_bytes=4 * TB))


def test_the_header_names_2_1_to_2_4_where_their_accounting_is_one(run_cli):
    """2.3.7 and 2.4 differ from 2.1 only on special and dedup vdevs: a user of Debian's 2.3.9 or
    2.4.4 planning plain layouts was told 'OpenZFS 2.1 to 2.3.6 accounting', as if another release."""
    from zfslab.model.capacity import RULES, accounting_name, rules_for
    assert accounting_name(rules_for("2.4.4"), False) == accounting_name(RULES["2.1"], False) == "OpenZFS 2.1 to 2.4"
    assert accounting_name(rules_for("2.4.4"), True) == "OpenZFS 2.4.1 and later"
    assert accounting_name(rules_for("0.8"), False) == RULES["0.8"].software
    # the claim itself: the same figures under each rule set without class vdevs
    assert len({run_cli("plan", "12x8TB", "--zfs-version", v, "--json").stdout.split('"recommendation"')[1]
                for v in ("2.1", "2.3.9", "2.4.0", "2.4.4")}) == 1
    assert "OpenZFS 2.1 to 2.4 accounting" in run_cli("plan", "12x8TB").stdout.splitlines()[0]
    head = run_cli("plan", "6x4TB", "--layouts", "raidz2:6+special=mirror:2@1TB", "--zfs-version", "2.4.4").stdout
    assert "OpenZFS 2.4.1 and later accounting" in head.splitlines()[0]
