"""model/pool_risk.py: the pool's risk of loss as it stands, on pools real ZFS built in the guest
(tests/data/pools/): a degraded mirror starts one failure in, a healthy raidz2 from its healthy
state, and the figures agree with the plan's risk engine where both apply."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os

import pytest

from test_pool_model import version
from test_pool_read import read_both
from tests.conftest import DATA
from zfslab.model.disk_age import BATCH_FRAILTY_VARIANCE, HOURS_PER_YEAR
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.pool_growth import side_attached
from zfslab.model.pool_model import check_model, pool_layout
from zfslab.model.pool_risk import risk_now
from zfslab.model.pool_state import DiskFacts, DiskHealth
from zfslab.model.reliability.params import params_for_class
from zfslab.model.reliability.risk import markov_risk
from zfslab.report.pool_view import risk_lines, risk_record
from zfslab.system.smart import parse_health


def _risk(state, health=None, disks=None):
    check = check_model(state, version("zfs-2.4"))
    return risk_now(state, check.vdev_bytes, disks or {}, health or {}), check


def test_a_degraded_mirror_starts_one_failure_in_and_its_repair_is_the_plans_figure():
    state = read_both("zfs-2.4", "degraded")[0]   # mirror:2, one side offline, 256 MiB written
    risk, check = _risk(state)
    assert risk.disks_out == 1 and risk.disk_class == "hdd"
    # the year ahead weighs most the days until the offline side is back: 34x on these 2 GB disks
    assert risk.p_loss[0] > 10 * risk.p_loss_repaired[0] and risk.p_loss[1] > risk.p_loss_repaired[1]
    # once repaired, the pool is the plan's: markov_risk of its layout with the same inputs
    fill = state.alloc_bytes / state.size_bytes
    params = params_for_class("hdd", check.vdev_bytes, years=risk.years, fill=fill)
    plan = markov_risk(pool_layout(state), params, usable_bytes=state.usable_bytes)
    assert risk.p_loss_repaired == pytest.approx(plan.p_loss, rel=1e-9)
    # with one side out, losing the other within a year is at least its failure rate over the repair
    assert risk.p_loss[0] > params.failure_rate_per_hour * 24


def test_a_disk_smart_flags_raises_the_risk_by_what_its_factor_implies_and_replacing_it_comes_first():
    """Pending sectors: x16 for 60 days, then back (Pinheiro et al.'s probational count). A raidz2 of 6 is
    lost by 3 failures: the loss term is the mean over the 20 sets of 3 disks of their rates' product, and
    the flagged disk is in 10 of them: (3 + 3 x 16) / 6 = 8.5 times the term for 60 days of the 365."""
    state = read_both("zfs-2.4", "healthy")[0]   # raidz2:6 and a spare
    leaf = state.vdevs[0].leaves[0]
    failing = {leaf.name: DiskHealth(leaf.name, passed=False, pending=8)}
    risk, _ = _risk(state, failing)
    plain, _ = _risk(state)
    term = (6 - 3 + 3 * 16) / 6
    assert risk.p_loss[0] / plain.p_loss[0] == pytest.approx((60 * term + 305) / 365, rel=0.01)
    assert risk.p_loss[1] / plain.p_loss[1] == pytest.approx((60 * term + 5 * 365 - 60) / (5 * 365), rel=0.01)
    assert risk.disks_flagged == 1 and not plain.p_loss_flagged_out
    assert all(out > now for out, now in zip(risk.p_loss_flagged_out, risk.p_loss))   # if it fails now
    # a new disk in its place: the class rate again (no age is known here), so the plain figure
    assert risk.flagged_raised == (leaf.short_name,)
    assert risk.p_loss_flagged_replaced == pytest.approx(plain.p_loss, rel=1e-6)
    assert risk_lines(risk)[-1].startswith(f"- what lowers it most: replacing the disk SMART flags, {leaf.short_name}, "
                                           "with a new one: 1 in")
    assert f"{leaf.short_name} has pending sectors: ×16 for 60 days, its age's rate after" in risk_lines(risk)[2]


def _degraded(serving_hours, **flags):
    """The captured degraded mirror, its serving side of that many power-on hours (and SMART flags)."""
    state = read_both("zfs-2.4", "degraded")[0]   # mirror:2, one side offline
    serving = next(c.name for c in state.vdevs[0].children if c.state == "ONLINE")
    gone = next(c.name for c in state.vdevs[0].children if c.state != "ONLINE")
    return _risk(state, {serving: DiskHealth(serving, power_on_hours=serving_hours, model="A", **flags),
                         gone: DiskHealth(gone, power_on_hours=serving_hours, model="B")})[0]


def test_a_degraded_vdev_runs_its_rebuild_at_the_rate_its_disk_has_now_not_the_years_mean():
    """With one side out, the year ahead is mostly the days until it is back: the survivor failing in
    them. A survivor of 0.2 y fails at 3 % now (1.7 % from 0.25 y): the chain stepping through the bands
    gives it its rate now, so its figure is that much above a survivor of 0.3 y (at 1.7 % throughout);
    one rate for the year (its mean, 1.76 %) gave 1.06 times."""
    young, settled = _degraded(int(0.2 * 8760)), _degraded(int(0.3 * 8760))
    assert young.p_loss[0] / settled.p_loss[0] == pytest.approx(_lam(0.030) / _lam(0.017), rel=0.03)


def test_a_flagged_survivor_of_a_degraded_mirror_is_its_factor_times_the_exposure_and_replacing_it_first():
    flagged, plain = _degraded(2 * 8760, pending=3), _degraded(2 * 8760)
    # the rebuild's days fall in the first 60: x16 (one rate for the year would have been x3.5)
    assert flagged.p_loss[0] / plain.p_loss[0] == pytest.approx(16, rel=0.05)
    assert risk_lines(flagged)[-1].startswith("- what lowers it most: replacing the disk SMART flags")
    disk = "scsi-0QEMU_QEMU_HARDDISK_ZFSLAB0000"
    assert risk_lines(flagged)[1:] == [   # as docs/pool.md#risk-now shows them
        "risk of losing the pool (HDD failure rates by the disks' ages and resilver rates, docs/pool.md#risk-now): "
        "1 in 790 within 1 year, 1 in 770 within 5 years",
        f"- mirror-0: by age: 2.0 y → AFR 4.8 % (1 y ahead), 3.0 % (5 y ahead); {disk} has pending sectors: ×16 for "
        "60 days, its age's rate after (docs/reliability.md#flagged-disks)",
        "- with 1 disk out now; once replaced and resilvered: 1 in 69,000 within 1 year, 1 in 28,000 within 5 years",
        "- if the 1 disk SMART flags fails now: 1 in 1.0 within 1 year, 1 in 1.0 within 5 years",
        f"- what lowers it most: replacing the disk SMART flags, {disk}, with a new one: 1 in 5,800 within 1 year, "
        "1 in 5,300 within 5 years"]
    assert risk_lines(plain)[1].endswith("1 in 13,000 within 1 year, 1 in 9,400 within 5 years")


def test_a_healthy_vdev_stepping_through_a_band_edge_keeps_the_loss_term_of_its_one_rate():
    """Disks of 3.9 y cross from 1.4 % to 3 % a year at 4 y: the chain run stretch by stretch, five years
    ahead, lands within 1 % of the one rate vdev_rate_ahead gives (built to carry the same loss term):
    the steps matter where the time of the exposure matters (a degraded vdev, a flagged disk)."""
    state = read_both("zfs-2.4", "healthy")[0]
    risk, check = _risk(state, _aged(state, [int(3.9 * 8760)] * 7, [f"m{i}" for i in range(7)]))
    fill = state.alloc_bytes / state.size_bytes
    one_rate = [markov_risk(pool_layout(state), params_for_class("hdd", check.vdev_bytes, years=(y,), fill=fill,
                                                                 afr=afr), usable_bytes=state.usable_bytes).p_loss[0]
                for y, afr in zip(risk.years, risk.rates[0].afr_per_year)]
    assert risk.p_loss == pytest.approx(one_rate, rel=0.01)
    assert risk.p_loss[1] > 5 * risk.p_loss[0] * 1.2   # the five years climb into the 3 % band


def test_solid_state_and_unsourced_flags_keep_their_rate_and_say_so():
    state = read_both("zfs-2.4", "healthy")[0]
    leaf = state.vdevs[0].leaves[0]
    only_187 = {leaf.name: DiskHealth(leaf.name, reported_uncorrect=4)}
    risk, _ = _risk(state, only_187)
    assert risk.p_loss == _risk(state)[0].p_loss and not risk.flagged_raised
    assert risk.notes[-1] == (f"disk {leaf.short_name}: SMART flags it (overall assessment or reported uncorrectable "
                              "errors); its rate is not raised (no field study gives one for these)")
    ssds = {lf.name: DiskFacts(lf.name, 2 << 30, 4096, False) for v in state.vdevs for lf in v.leaves}
    nvme = {leaf.name: DiskHealth(leaf.name, media_errors=3, critical_warning=4, pending=2)}
    risk, _ = _risk(state, nvme, ssds)
    assert risk.p_loss == _risk(state, None, ssds)[0].p_loss and not risk.flagged_raised
    assert risk.notes[-1].endswith("its rate is not raised (no field study gives a solid-state disk's rate after "
                                   "such counters)")


def test_a_vdev_with_more_out_than_it_survives_is_lost_and_no_figures_without_a_model():
    state = read_both("zfs-2.4", "degraded")[0]
    mirror = state.vdevs[0]
    both_out = dataclasses.replace(mirror, children=tuple(dataclasses.replace(c, state="FAULTED")
                                                          for c in mirror.children))
    risk, _ = _risk(dataclasses.replace(state, vdevs=(both_out,) + state.vdevs[1:]))
    assert risk.p_loss == (1.0, 1.0)
    # no check_model size: each vdev's own disks give it; none shown: no figure, and why
    assert risk_now(state, None, {}, {}).p_loss == risk_now(state, 2136997888, {}, {}).p_loss
    blind = dataclasses.replace(mirror, children=(dataclasses.replace(mirror.children[0], device_bytes=None),
                                                  *mirror.children[1:]))
    assert risk_now(dataclasses.replace(state, vdevs=(blind,) + state.vdevs[1:]), None, {}, {}).reason == \
        "the disks' size as ZFS sees them was not shown"


def test_disks_of_several_sizes_take_each_vdevs_own():
    """The captured mixed pool (vdevs of 1, 1.5 and 1 GiB smallest disks, some of 2 GiB): its risk lies
    between the same pool's with every disk at 1 GiB and at 2 GiB (a larger disk takes longer to
    resilver), strictly."""
    state = read_both("zfs-2.4", "mixed")[0]

    def every_disk(size):
        return dataclasses.replace(state, vdevs=tuple(dataclasses.replace(v, children=tuple(
            dataclasses.replace(c, device_bytes=size) for c in v.children)) for v in state.vdevs))

    mixed = risk_now(state, None, {}, {})
    assert not mixed.reason
    low, high = risk_now(every_disk(1 << 30), 1 << 30, {}, {}), risk_now(every_disk(2 << 30), 2 << 30, {}, {})
    assert all(a < b < c for a, b, c in zip(low.p_loss, mixed.p_loss, high.p_loss)), (low, mixed, high)



# --- the disks' ages and batches (docs/pool.md#risk-now, docs/reliability.md#disk-age) ---

def _smart(name):
    with open(os.path.join(DATA, "smartctl", name)) as f:
        return json.load(f)


def _aged(state, hours, models=None):
    """Each leaf of the pool's data vdevs with these power-on hours (and models: one batch by default)."""
    leaves = [leaf for v in state.vdevs for leaf in v.leaves]
    return {leaf.name: DiskHealth(leaf.name, power_on_hours=hours[i % len(hours)],
                                  model=(models or ["Example HDD 8TB"])[i % len(models or [1])])
            for i, leaf in enumerate(leaves)}


def _lam(afr):
    return -math.log1p(-afr) / HOURS_PER_YEAR


def test_disks_all_past_seven_years_are_the_plans_figure_at_the_tables_425_percent():
    state = read_both("zfs-2.4", "healthy")[0]   # raidz2:6 and a spare
    models = [f"model {i}" for i in range(7)]      # no batch: independent disks
    risk, check = _risk(state, _aged(state, [8 * 8760 + 100 * i for i in range(7)], models))
    assert risk.by_age and [r.afr_per_year for r in risk.rates] == [pytest.approx((0.0425, 0.0425), rel=1e-12)]
    fill = state.alloc_bytes / state.size_bytes
    params = params_for_class("hdd", check.vdev_bytes, years=risk.years, fill=fill, afr=0.0425)
    plan = markov_risk(pool_layout(state), params, usable_bytes=state.usable_bytes)
    assert risk.p_loss == pytest.approx(plan.p_loss, rel=1e-9)


def test_an_older_disk_set_raises_the_risk_by_the_tables_ratio_to_the_third_power():
    state = read_both("zfs-2.4", "healthy")[0]   # raidz2: a loss needs 3 failures, ~ lambda^3
    models = [f"model {i}" for i in range(7)]
    young, _ = _risk(state, _aged(state, [2 * 8760] * 7, models))     # 1-4 y band: 1.4 %, the year ahead
    old, _ = _risk(state, _aged(state, [8 * 8760] * 7, models))       # 7 y+: 4.25 %
    assert old.p_loss[0] / young.p_loss[0] == pytest.approx((_lam(0.0425) / _lam(0.014)) ** 3, rel=0.02)
    # five years ahead the young set climbs into the 4-7 y band (2 y at 1.4 %, 3 y at 3.0 %): a raidz2's
    # loss goes with the cube of the rate, so the chain's rate is the cube mean over time
    young_5 = ((2 * _lam(0.014) ** 3 + 3 * _lam(0.030) ** 3) / 5) ** (1 / 3)
    assert old.p_loss[1] / young.p_loss[1] == pytest.approx((_lam(0.0425) / young_5) ** 3, rel=0.03)
    assert old.p_loss[1] > 4 * young.p_loss[1]


def test_a_batch_of_equal_disks_raises_the_risk_over_mixed_models_by_the_frailty_rule():
    state = read_both("zfs-2.4", "healthy")[0]
    hours = [30_000 + 10 * i for i in range(7)]
    batch, _ = _risk(state, _aged(state, hours))
    mixed, _ = _risk(state, _aged(state, hours, [f"model {i}" for i in range(7)]))
    assert batch.rates[0].batch_disks == 6 and mixed.rates[0].batch_disks == 0
    assert batch.rates[0].afr_per_year == mixed.rates[0].afr_per_year    # the same ages, the same mean rate
    v = BATCH_FRAILTY_VARIANCE   # raidz2: the 2nd and 3rd failures at (1 + v) and (1 + 2 v)
    for b, m in zip(batch.p_loss, mixed.p_loss):
        assert b / m == pytest.approx((1 + v) * (1 + 2 * v), rel=0.01)
    # a batch of only 2 in a raidz2 cannot lose it alone: no raised rate
    two = _aged(state, [30_000, 30_010, 5_000, 12_000, 45_000, 52_000, 60_000])
    assert _risk(state, two)[0].rates[0].batch_disks == 0


def _brute_rate(hours, q, horizon_h, flags=None):
    """The chain's rate by another path: every set of q disks' product of rates, hour by hour over the
    horizon (the table read band by band; a flagged disk's (factor, after) from the first 60 days on),
    then the q-th root."""
    bands = [(0, 0.030), (0.25, 0.017), (1, 0.014), (4, 0.030), (7, 0.0425)]
    flags = flags or [(1, 1)] * len(hours)
    def rate(i, t):
        return _lam([afr for start, afr in bands if hours[i] + t >= start * 8760][-1]) * flags[i][t >= 1440]
    sets = list(itertools.combinations(range(len(hours)), q))
    total = sum(sum(math.prod(rate(i, t + 0.5) for i in s) for s in sets) / len(sets)
                for t in range(int(horizon_h)))
    return (total / horizon_h) ** (1 / q)


def test_captured_smart_reports_give_each_disk_its_age_and_the_chain_the_rate_of_its_loss_term():
    state = read_both("zfs-2.4", "healthy")[0]   # raidz2:6 and a spare
    leaves = [leaf.name for v in state.vdevs for leaf in v.leaves]
    names = ["ata-failing-hdd.json", "ata-hdd-hours-only.json"]     # 33,412 h (8TB) and 28,712 h (4TB)
    health = {leaf: parse_health(leaf, _smart(names[i % 2])) for i, leaf in enumerate(leaves)}
    risk, _ = _risk(state, health)
    (rate,) = risk.rates
    assert (rate.disks_aged, rate.batch_disks) == (6, 3)   # 3 of each model: 3 > 2, one batch can lose it
    assert rate.mean_age_years == pytest.approx((33_412 + 28_712) / 2 / 8760)
    hours = [33_412, 28_712] * 3
    # the 8TB disk's report has offline uncorrectable sectors: x39 for 60 days, x10 after (Pinheiro et al.)
    flags = [(39, 10), (1, 1)] * 3
    assert -math.log1p(-rate.afr_per_year[0]) / 8760 == pytest.approx(_brute_rate(hours, 3, 8760, flags), rel=1e-9)
    assert risk_lines(risk)[2].startswith("- raidz2-0: by age: 3.5 y → AFR 14.2 % (1 y ahead), 15.5 % (5 y ahead); "
                                          "one batch: 3 × ")
    assert risk_lines(risk)[2].endswith("; 3 disks have offline uncorrectable sectors: ×39 for 60 days, ×10 after "
                                        "(docs/reliability.md#flagged-disks)")
    assert not risk.notes


def test_a_mirror_of_an_old_and_a_new_disk_takes_their_geometric_mean_not_the_plain_one():
    state = read_both("zfs-2.4", "healthy")[0]
    mirror = dataclasses.replace(state.vdevs[0], kind="mirror", parity=0, children=state.vdevs[0].children[:2])
    state = dataclasses.replace(state, vdevs=(mirror,))
    a, b = (leaf.name for leaf in mirror.leaves)
    risk, _ = _risk(state, {a: DiskHealth(a, power_on_hours=9 * 8760, model="A"),
                            b: DiskHealth(b, power_on_hours=2 * 8760, model="B")})
    lam_now = -math.log1p(-risk.rates[0].afr_per_year[0]) / 8760
    assert lam_now == pytest.approx(math.sqrt(_lam(0.0425) * _lam(0.014)), rel=1e-12)
    assert lam_now < (_lam(0.0425) + _lam(0.014)) / 2


def test_a_disk_whose_smart_hours_are_wild_keeps_the_class_rate_and_is_named():
    state = read_both("zfs-2.4", "degraded")[0]   # mirror:2, one side offline
    a, b = (leaf.name for leaf in state.vdevs[0].leaves)
    serving = next(c.name for c in state.vdevs[0].children if c.state == "ONLINE")
    hostile = {a: parse_health(a, _smart("hostile.json")), b: parse_health(b, _smart("hostile.json"))}
    hostile[serving] = parse_health(serving, _smart("ata-hdd-hours-only.json"))
    risk, _ = _risk(state, hostile)
    assert risk.by_age and risk.rates[0].disks == 1   # the offline side is out: the serving one's rate
    gone = next(leaf for leaf in state.vdevs[0].leaves if leaf.name != serving)
    assert risk.notes == (f"disk {gone.short_name}: SMART power-on hours -5 is negative: ignored; the class rate "
                          "is used for it",)
    # with a disk out, the one left is what can lose the mirror: its rate alone (q = 1), a plain mean
    assert risk.rates[0].afr_per_year[0] == pytest.approx(-math.expm1(-8760 * _brute_rate([28_712], 1, 8760)))


def test_a_pool_whose_smart_has_no_hours_keeps_the_class_rate_and_says_so():
    state = read_both("zfs-2.4", "healthy")[0]
    virtual = {leaf.name: parse_health(leaf.name, _smart("qemu-virtual.json"))
               for v in state.vdevs for leaf in v.leaves}
    risk, _ = _risk(state, virtual)
    plain, _ = _risk(state)
    assert not risk.by_age and risk.p_loss == plain.p_loss and not risk.rates
    assert risk.notes == ("the HDD class's 1.5 % a year for every disk: no disk's SMART gives usable power-on hours",)
    assert plain.notes == ("the HDD class's 1.5 % a year for every disk: no SMART report was read (smartctl not "
                           "installed, or no disk answered)",)
    assert "risk of losing the pool (HDD failure and resilver rates" in risk_lines(risk)[1]


def test_replacing_the_oldest_disk_is_offered_when_it_lowers_every_horizon():
    state = read_both("zfs-2.4", "special")[0]   # raidz2:4 + special mirror:2
    hours = [20_000, 22_000, 21_000, 23_000, 70_000, 24_000, 25_000, 26_000]   # the special mirror's first: 8 y
    risk, _ = _risk(state, _aged(state, hours, [f"m{i}" for i in range(8)]))
    leaves = [leaf for v in state.vdevs for leaf in v.leaves]
    assert risk.oldest_disk == leaves[4].short_name and risk.oldest_age_years == pytest.approx(70_000 / 8760)
    assert all(after < 0.95 * now for after, now in zip(risk.p_loss_oldest_replaced, risk.p_loss))
    # a third side for the special mirror lowers it more (the next test): the replacement comes next
    assert risk_lines(risk)[-1].startswith(f"- next: replacing the oldest disk, {leaves[4].short_name} "
                                           "(8.0 y), with a new one: 1 in")
    # disks of 2 y: a new one's first months (3 %) would raise the year ahead: nothing offered
    young, _ = _risk(state, _aged(state, [17_520] * 8, [f"m{i}" for i in range(8)]))
    assert not young.p_loss_oldest_replaced and not young.oldest_disk


def test_the_risk_lines_of_the_captured_special_pool_with_captured_smart_reports():
    """The example docs/pool.md#risk-now shows: raidz2:4 of four 3.3-year-old disks of one model (one
    batch), a special mirror of a 4.6-year-old and a new disk (2 GB disks: resilvers of seconds). The
    special mirror survives one failure where the raidz2 survives two: a third side for it comes first."""
    state = read_both("zfs-2.4", "special")[0]
    names = ["ata-hdd-hours-only.json"] * 4 + ["scsi-used.json", "ata-new-hdd.json"]
    leaves = [leaf for v in state.vdevs if v.alloc_class in ("normal", "special") for leaf in v.leaves]
    health = {leaf.name: parse_health(leaf.name, _smart(n)) for leaf, n in zip(leaves, names)}
    risk, _ = _risk(state, health)
    assert risk_lines(risk)[1:] == [
        "risk of losing the pool (HDD failure rates by the disks' ages and resilver rates, docs/pool.md#risk-now): "
        "1 in 150,000 within 1 year, 1 in 26,000 within 5 years",
        "- raidz2-0: by age: 3.3 y → AFR 2.1 % (1 y ahead), 3.3 % (5 y ahead); one batch: 4 × Example HDD 4TB "
        "within 720 power-on hours, so while failures are unrepaired the others fail faster (×1.29, ×1.58)",
        "- mirror-1: by age: 2.3 y → AFR 2.5 % (1 y ahead), 2.6 % (5 y ahead)",
        "- what lowers it most: attaching one more side to mirror-1 (1 new disk, `zpool attach special DISK NEW`): "
        "1 in 1.2×10⁸ within 1 year, 1 in 6.8×10⁶ within 5 years",
        "- next: replacing the oldest disk, scsi-0QEMU_QEMU_HARDDISK_ZFSLAB0004 (4.6 y), with a "
        "new one: 1 in 200,000 within 1 year, 1 in 46,000 within 5 years"]
    assert _risk(state)[0].p_loss[1] == pytest.approx(1 / 80_000, rel=0.05)   # the class rate: 1 in 80,000


def test_solid_state_disks_keep_their_class_rate_whatever_their_age_and_say_why():
    state = read_both("zfs-2.4", "healthy")[0]
    leaves = [leaf.name for v in state.vdevs for leaf in v.leaves]
    ssds = {leaf: DiskFacts(leaf, 2 << 30, 4096, False) for leaf in leaves}
    risk, _ = _risk(state, _aged(state, [9 * 8760] * 7), ssds)
    plain, _ = _risk(state, None, ssds)
    assert risk.disk_class == "ssd" and not risk.by_age and risk.p_loss == plain.p_loss
    assert risk.notes == ("the SSD class's 1.0 % a year for every disk: the age table is for spinning disks (flash "
                          "wears by writes, not modelled yet)",)


def _whole(state):
    """The pool with every vdev and side ONLINE: the captured degraded mirror with its side back."""
    def online(v):
        return dataclasses.replace(v, state="ONLINE", children=tuple(online(c) for c in v.children))
    return dataclasses.replace(state, vdevs=tuple(online(v) for v in state.vdevs))


def test_a_side_attached_to_a_mirror_is_the_plans_three_way_mirror_and_not_offered_with_a_side_out():
    """zpool attach gives a mirror one more side: the pool after is plan's mirror:3 (markov_risk, an
    independent path through the engine). With a side out the new one would resilver from the survivor
    alone, which the chains after do not carry: replacing what is out comes first."""
    degraded = read_both("zfs-2.4", "degraded")[0]
    risk, _ = _risk(degraded)
    assert risk.p_loss_parity_added == () and risk.parity_vdevs == () and risk.parity_fixed == ()
    assert not any("attaching" in line for line in risk_lines(risk))
    state = _whole(degraded)
    risk, check = _risk(state)
    params = params_for_class("hdd", check.vdev_bytes, years=risk.years, fill=state.alloc_bytes / state.size_bytes)
    plan = markov_risk(parse_layout("mirror:3"), params, usable_bytes=state.usable_bytes)
    assert risk.p_loss_parity_added == pytest.approx(plan.p_loss, rel=1e-9)
    assert all(after < 0.95 * now for after, now in zip(risk.p_loss_parity_added, risk.p_loss))
    side = state.vdevs[0].children[0].short_name
    assert risk.parity_vdevs == ("mirror-0",) and risk.parity_commands == (f"zpool attach degraded {side} NEW1",)
    assert risk_lines(risk)[-1].startswith("- what lowers it most: attaching one more side to mirror-0 (1 new disk, "
                                           "`zpool attach degraded DISK NEW`): 1 in")
    assert risk_record(risk)["parity_added"] == {"vdevs": ["mirror-0"], "new_disks": 1,
                                                 "commands": [f"zpool attach degraded {side} NEW1"],
                                                 "p_loss": {"1": risk.p_loss_parity_added[0],
                                                            "5": risk.p_loss_parity_added[1]}}


def test_a_plain_disk_beside_a_raidz2_made_a_mirror_is_the_plans_raidz2_and_mirror():
    """The captured oops pool: raidz2:4 and a disk added beside it, which loses the pool on its own."""
    state = read_both("zfs-2.4", "oops")[0]
    risk, check = _risk(state)
    disk = next(v for v in state.vdevs if v.kind == "disk")
    params = params_for_class("hdd", check.vdev_bytes, years=risk.years, fill=state.alloc_bytes / state.size_bytes)
    plan = markov_risk(pool_layout(side_attached(state, disk.name, 1)), params, usable_bytes=state.usable_bytes)
    assert risk.p_loss_parity_added == pytest.approx(plan.p_loss, rel=1e-9)
    assert risk.p_loss_parity_added[0] < risk.p_loss[0] / 1000   # the disk alone was the risk
    assert risk.parity_fixed == ("raidz2-0",) and risk.parity_commands == (f"zpool attach oops {disk.short_name} NEW1",)
    assert risk_lines(risk)[-1].startswith(f"- what lowers it most: attaching one more side to {disk.short_name} (")


@pytest.mark.parametrize("name, vdev", [("healthy", "raidz2-0"), ("files", "raidz1-0")])
def test_a_raidz_only_pool_gets_no_added_side_and_is_told_its_parity_is_fixed(name, vdev):
    risk, _ = _risk(read_both("zfs-2.4", name)[0])
    assert risk.p_loss_parity_added == () and risk.parity_vdevs == () and risk.parity_fixed == (vdev,)
    if risk.p_loss[-1] <= 1e-6:   # below every data level's budget: the line would be noise
        assert name == "healthy" and not any(line.startswith("- more parity") for line in risk_lines(risk))
        return
    assert risk_lines(risk)[-1] == (f"- more parity: {vdev} keeps the parity it was created with (zpool cannot "
                                    "raise a raidz's or dRAID's in place; a new pool with more, then zfs send | "
                                    "zfs receive, does)")
    assert risk_record(risk)["parity_added"] is None and risk_record(risk)["parity_fixed"] == [vdev]
