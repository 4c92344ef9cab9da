"""model/growth_outlook.py: each way to grow a captured pool with its risk (risk_now's chains over the
pool after it), its predicted speed (plan's model) and its rank (plan's recommendation)."""

from __future__ import annotations

import dataclasses

import pytest

from test_pool_model import version
from test_pool_read import SERIES, read_both
from zfslab.model.growth_outlook import outlook
from zfslab.model.pool_growth import growth, replacement
from zfslab.model.pool_model import check_model
from zfslab.model.pool_risk import risk_now
from zfslab.model.pool_state import DiskHealth
from zfslab.model.recommend import DATA_LEVELS, Goal

GIB2 = 2 * 2**30  # the guest's disks
HOME = Goal(max_damage=1.0)


def _grown(pool: str, count: int, disk_bytes: int, series: str = "zfs-2.4", goal: Goal = HOME, health=None):
    state = read_both(series, pool)[0]
    check = check_model(state, version(series))
    grown = growth(state, check, count, disk_bytes)
    look = outlook(state, check.vdev_bytes, grown, {}, health or {}, goal=goal, ashift=check.ashift)
    return state, check, grown, look, {o.adds: look.options[i] for i, o in enumerate(grown.options)}


@pytest.mark.parametrize("series", SERIES)
def test_adding_a_raidz1_to_a_raidz2_pool_risks_more_than_adding_a_raidz2(series):
    state, check, grown, look, by = _grown("healthy", 6, 12 * 10**12, series)   # raidz2:6 and a spare
    now = risk_now(state, check.vdev_bytes, {}, {}).p_loss
    assert by["raidz1:6"].p_loss[1] > 100 * by["raidz2:6"].p_loss[1]
    assert by["raidz1:6"].p_loss[1] > by["raidz1:6"].p_loss[0] > now[0]   # more years, more risk
    assert by["raidz3:6"].p_loss[1] <= by["raidz2:6"].p_loss[1]


def test_a_log_vdev_leaves_the_risk_as_it_is_and_a_special_pair_risks_as_a_mirror_added():
    state, check, grown, look, by = _grown("healthy", 6, GIB2)
    now = risk_now(state, check.vdev_bytes, {}, {}).p_loss
    assert by["log=3xmirror:2"].p_loss == pytest.approx(now, rel=1e-12)   # a log's loss loses no pool
    assert by["special=3xmirror:2"].p_loss[1] > 1000 * by["special=2xmirror:3"].p_loss[1]
    assert by["log=3xmirror:2"].speed is None and by["special=3xmirror:2"].speed is None
    # special and log vdevs are ranked after every data option
    order = [grown.options[i].adds for i in look.order]
    assert all(a.startswith(("special=", "log=")) for a in order[-3:])


def test_a_hot_spare_smaller_than_the_new_disks_does_not_stand_in_for_them():
    state, check, grown, look, by = _grown("healthy", 4, 12 * 10**12)   # its spare is a 2 GiB disk
    spareless = dataclasses.replace(state, vdevs=tuple(v for v in state.vdevs if v.alloc_class != "spare"))
    check2 = check_model(spareless, version("zfs-2.4"))
    grown2 = growth(spareless, check2, 4, 12 * 10**12)
    look2 = outlook(spareless, check2.vdev_bytes, grown2, {}, {}, goal=HOME, ashift=check2.ashift)
    by2 = {o.adds: look2.options[i] for i, o in enumerate(grown2.options)}
    # the same but for the raidz2:6's own term, which its 2 GiB spare does lower (it is 1000 times smaller)
    assert by["raidz1:4"].p_loss == pytest.approx(by2["raidz1:4"].p_loss, rel=1e-2)
    # disks of the spare's size: it stands in, and lowers the new vdev's risk
    small = {o.adds: x for o, x in zip(_grown("healthy", 4, GIB2)[2].options, _grown("healthy", 4, GIB2)[3].options)}
    grown3 = growth(spareless, check2, 4, GIB2)
    look3 = outlook(spareless, check2.vdev_bytes, grown3, {}, {}, goal=HOME, ashift=check2.ashift)
    alone = {o.adds: x for o, x in zip(grown3.options, look3.options)}
    assert small["raidz1:4"].p_loss[1] < alone["raidz1:4"].p_loss[1] / 10


def test_mirrors_predict_more_random_reads_and_the_figures_are_relative_to_the_pool_now():
    state, check, grown, look, by = _grown("healthy", 6, GIB2)
    mirrors, raidz = by["3xmirror:2"], by["raidz2:6"]
    assert mirrors.speed["rand_read_iops_qd8"] > 2 * raidz.speed["rand_read_iops_qd8"]
    assert raidz.speed["write_mb_s"] > mirrors.speed["write_mb_s"]   # no copy to write twice
    # a second raidz2:6 doubles what the pool streams now (plan's model sums its vdevs)
    assert raidz.speed_vs_now["write_mb_s"] == pytest.approx(2.0)
    assert raidz.speed["read_mb_s"] == pytest.approx(2 * look.speed_now["read_mb_s"])


@pytest.mark.parametrize("data", list(DATA_LEVELS))
def test_the_recommendation_never_gives_up_redundancy_the_data_level_asks_for(data):
    goal = Goal(data=data, max_damage=1.0)
    state, check, grown, look, by = _grown("healthy", 6, 12 * 10**12, goal=goal)
    pick = grown.options[look.recommended]
    assert look.order[0] == look.recommended
    like = [o for o in grown.options if o.like_the_pool and o.survives >= DATA_LEVELS[data].min_failures]
    assert like   # raidz2:6 is there
    assert pick.survives >= DATA_LEVELS[data].min_failures, (data, pick.adds)
    assert not pick.adds.startswith(("special=", "log="))
    if DATA_LEVELS[data].min_failures == 2:
        assert all("survives 1 failure, 2 asked" in x.left_out and "vdev-less-redundant" in x.left_out[-1]
                   for o, x in zip(grown.options, look.options)
                   if o.adds in ("raidz1:6", "3xmirror:2"))


def test_every_disk_replaced_by_a_new_one_lowers_the_risk_of_old_disks():
    state = read_both("zfs-2.4", "healthy")[0]
    check = check_model(state, version("zfs-2.4"))
    old = {leaf.name: DiskHealth(leaf.name, power_on_hours=8 * 8760 + 100 * i, model=f"model {i}")
           for i, leaf in enumerate(leaf for v in state.vdevs for leaf in v.leaves)}
    now = risk_now(state, check.vdev_bytes, {}, old)
    # disks of the same size as ZFS sees them: only the ages differ
    grown = replacement(state, check, check.vdev_bytes, streaming_mb_s=170.5, whole_disk=False)
    look = outlook(state, check.vdev_bytes, grown, {}, old, goal=HOME, ashift=check.ashift)
    (after,) = look.options
    assert now.by_age and 0 < after.p_loss[1] < now.p_loss[1] / 10
    assert after.speed_vs_now == pytest.approx({k: 1.0 for k in after.speed})


def test_replacing_the_data_disks_of_a_special_pool_gives_its_risk():
    state = read_both("zfs-2.4", "special")[0]
    check = check_model(state, version("zfs-2.4"))
    grown = replacement(state, check, 4 * 10**12, streaming_mb_s=500)
    state = dataclasses.replace(state, alloc_bytes=state.size_bytes // 2)   # half full: resilvers take time
    (after,) = outlook(state, check.vdev_bytes, grown, {}, {}, goal=HOME, ashift=check.ashift).options
    now = risk_now(state, check.vdev_bytes, {}, {}).p_loss
    # the special mirror of two keeps its disks, its size and what it holds, and its one-failure margin
    # dominates the pool's risk before and after (new 4 TB disks in it, half full, would raise it by 8 %)
    assert after.p_loss == pytest.approx(now, rel=1e-3) and not after.risk_reason


def test_a_plain_disk_added_by_mistake_is_mirrored_by_attach_and_that_is_recommended():
    """The oops pool (raidz2:4 and a plain disk added by mistake) survives no failure whatever is
    added beside it; `zpool attach` to the plain disk makes it a mirror: with two new disks a
    three-way one, as redundant as the raidz2, and that is the pick (same space, undone by detach)."""
    from zfslab.report.pool_view import growth_lines
    state, check, grown, look, by = _grown("oops", 4, 12 * 10**12)
    side = next(o for o in grown.options if o.attach_to)
    assert side.survives == 2 and side.gain_bytes == 0 and len(side.commands) == 2
    assert side.layout_after == "raidz2:4+mirror:3" and grown.options[look.recommended] is side
    assert look.recommendation.within_budget
    assert any("2 of the 4 new disks" in c for c in side.cautions)
    assert all("no redundancy" in x.left_out for o, x in zip(grown.options, look.options)
               if o.how == "zpool add" and not o.adds.startswith(("special=", "log=")))
    # the new side's risk: the raidz2 and a three-way mirror, far below the pool with its plain disk
    adds = [x.p_loss[1] for o, x in zip(grown.options, look.options) if o.how == "zpool add" and o.added[0][0] == "normal"]
    assert adds and by[side.adds].p_loss[1] < min(adds) / 1000
    # the finding names the fix: two attaches to the plain disk
    from zfslab.model.pool_findings import redundancy_findings
    (finding,) = [f for f in redundancy_findings(state) if f.code == "vdev-less-redundant"]
    assert "`zpool attach oops scsi-0QEMU_QEMU_HARDDISK_ZFSLAB0004 NEW` 2 times makes it a mirror" in finding.text


def test_a_pool_no_option_can_bring_into_budget_is_told_so_not_recommended():
    """One new disk for the oops pool, for data that asks to survive two failures: the mirror the
    attach makes survives one, an add none; no option meets the budget, and the line says so
    instead of 'recommended'."""
    from zfslab.report.pool_view import growth_lines
    state, check, grown, look, by = _grown("oops", 1, 12 * 10**12, goal=Goal(data="business", max_damage=1.0))
    assert not look.recommendation.within_budget
    text = " ".join(line for line, _ in growth_lines(grown, 80, look))
    assert "no option meets the budget by plan's rule" in text and "recommended, by" not in text
    assert grown.options[look.recommended].attach_to   # the closest: the pool then survives one failure
    healthy = _grown("healthy", 6, GIB2)
    assert "recommended, by plan's rule" in " ".join(line for line, _ in growth_lines(healthy[2], 80, healthy[3]))


@pytest.mark.parametrize("series", SERIES)
def test_an_add_less_redundant_than_the_pool_is_not_recommended_while_another_keeps_its_redundancy(series):
    """raidz2:6 with four new disks: every data add needs -f (none is 6 wide), and plan's balance for
    home data alone chose the raidz1:4, which would make the pool's own vdev-less-redundant warning;
    the raidz2:4 keeps the pool surviving two failures, so it is the pick, and the raidz1:4 and the
    mirrors are ranked after it with the reason."""
    state, check, grown, look, by = _grown("healthy", 4, 12 * 10**12, series)
    pick = grown.options[look.recommended]
    assert pick.adds == "raidz2:4" and pick.survives == 2
    for adds in ("raidz1:4", "2xmirror:2"):
        assert any("vdev-less-redundant" in why for why in by[adds].left_out), by[adds].left_out
    order = [grown.options[i].adds for i in look.order]
    assert order.index("raidz1:4") > order.index("raidz2:4") and order.index("2xmirror:2") > order.index("raidz2:4")
    # a pool that survives one failure: the raidz1 keeps it, nothing is held back for it
    state1, check1, grown1, look1, by1 = _grown("files", 3, 12 * 10**12, series)   # raidz1:3
    assert not any("vdev-less-redundant" in why for x in look1.options for why in x.left_out)


def test_a_pool_of_mirrors_gains_a_side_on_each_when_the_data_asks_for_two_failures():
    """The captured mirror (its side back) and two new disks, for business data (two failures): an
    add of another two-way mirror survives one and is left out; one more side for the mirror makes
    it three-way, survives two, keeps the space, and is the pick. A pool with a raidz gets no such
    option (its parity is fixed)."""
    from test_pool_risk import _whole
    state = _whole(read_both("zfs-2.4", "degraded")[0])
    check = check_model(state, version("zfs-2.4"))
    grown = growth(state, check, 2, 4 * 10**12)
    look = outlook(state, check.vdev_bytes, grown, {}, {}, goal=Goal(data="business", max_damage=1.0),
                   ashift=check.ashift)
    pick = grown.options[look.recommended]
    assert pick.attach_to == (("mirror-0", 1),) and pick.survives == 2 and pick.gain_bytes == 0
    assert pick.layout_after == "mirror:3" and look.recommendation.within_budget
    assert any("1 of the 2 new disks" in c for c in pick.cautions)
    add = next(x for o, x in zip(grown.options, look.options) if o.adds == "mirror:2")
    assert "survives 1 failure, 2 asked" in add.left_out
    healthy = _grown("healthy", 2, 4 * 10**12)[2]
    assert not any(o.attach_to for o in healthy.options)


@pytest.mark.parametrize("series", SERIES)
def test_a_draid_added_beside_a_draid_brings_its_distributed_spare_into_the_risk(series):
    """The dRAID added to a dRAID pool (capture_grown.sh's dgrow) is a dRAID in the chains, its
    distributed spare rebuilding at once: it was taken for a raidz of its parity and width, and
    risked exactly as raidz1:4 beside it (fails before)."""
    state = read_both(series, "dgrow", folder="dgrow_before")[0]   # draid1:2d:4c:1s
    check = check_model(state, version(series))
    grown = growth(state, check, 4, 12 * 10**12)
    look = outlook(state, check.vdev_bytes, grown, {}, {}, goal=HOME, ashift=check.ashift)
    by = {o.adds: look.options[i] for i, o in enumerate(grown.options)}
    assert by["draid1:2d:4c:1s"].p_loss[1] < by["raidz1:4"].p_loss[1] / 100
    # one parity and a spare already rebuilt into: between raidz1:4 and three-way safety, near raidz2:4
    assert by["raidz2:4"].p_loss[1] / 10 < by["draid1:2d:4c:1s"].p_loss[1] < by["raidz2:4"].p_loss[1] * 10
