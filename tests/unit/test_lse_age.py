"""The field error model by disk age (docs/reliability.md#by-age): nearline disks' latent-error rate
rises after their first year as the study's two counts say, enterprise and flash stay flat, a mission
of new disks averages over its ages, and the datasheet mode does not see any of it."""

from __future__ import annotations

import math

import pytest

from zfslab.errors import ParamError
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.reliability.field_errors import (
    ENTERPRISE, FLASH, NEARLINE, NEARLINE_BY_AGE, RECURRENCE, lse_by_age,
)
from zfslab.model.reliability.params import RiskParams, params_for_class
from zfslab.model.reliability.risk import markov_risk
from zfslab.model.units import TB

FIRST = -math.log(1 - 0.0315)  # hazard of a first LSE in the first 12 months (Bairavasundaram 2007)
LATER = (-math.log(1 - 0.085) - FIRST) / (20 / 12)  # the rest of 8.5 % in 32 months, over months 13-32


def test_nearline_disks_of_four_years_have_the_rate_the_two_counts_leave_for_the_later_months():
    young, old = NEARLINE_BY_AGE.episodes_at(0.5), NEARLINE_BY_AGE.episodes_at(4.0)
    assert young == pytest.approx(0.0315 / (1 - RECURRENCE), rel=1e-12)
    assert old == pytest.approx(-math.expm1(-LATER) / (1 - RECURRENCE), rel=1e-12)
    # the later months' incidence over the first year's, 1.064: a rising hazard, as the study found
    assert old / young == pytest.approx(-math.expm1(-LATER) / 0.0315, rel=1e-12)
    assert 1.06 < old / young < 1.07
    # over the study's 32 months the bands give back its count
    assert 1 - math.exp(-FIRST - LATER * 20 / 12) == pytest.approx(0.085, rel=1e-12)


def test_enterprise_and_flash_keep_one_rate_at_every_age():
    for disk, study in (("hdd-enterprise", ENTERPRISE), ("ssd", FLASH), ("nvme", FLASH)):
        by_age = lse_by_age(disk)
        assert by_age.episodes_at(0.5) == by_age.episodes_at(7.0) == study.episodes_per_year
    assert lse_by_age("hdd") is lse_by_age("hdd5400") is lse_by_age("my.toml") is NEARLINE_BY_AGE


def test_a_mission_of_new_disks_averages_the_bands_it_passes_through():
    assert NEARLINE_BY_AGE.years_in_bands(0.0, 5.0) == (1.0, 4.0)
    assert NEARLINE_BY_AGE.years_in_bands(3.0, 2.0) == (0.0, 2.0)
    assert NEARLINE_BY_AGE.years_in_bands(0.5, 1.0) == (0.5, 0.5)
    mean = NEARLINE_BY_AGE.mean_episodes(0.0, 5.0)
    assert mean == pytest.approx((NEARLINE_BY_AGE.episodes_at(0) + 4 * NEARLINE_BY_AGE.episodes_at(2)) / 5)
    # the first year lies below the study's average, five years above it
    assert NEARLINE_BY_AGE.mean_episodes(0.0, 1.0) < NEARLINE.episodes_per_year < mean


def test_plan_damage_over_five_years_rises_and_over_one_falls_for_new_nearline_disks():
    layout = parse_layout("4xmirror:2")
    aged = params_for_class("hdd", 8 * TB, years=(1.0, 5.0))
    flat = aged.with_(lse_age_bands=())  # the study's average at every age: the model before ages
    a, f = markov_risk(layout, aged, usable_bytes=32 * TB), markov_risk(layout, flat, usable_bytes=32 * TB)
    assert a.p_damage[1] / f.p_damage[1] == pytest.approx(1.011, abs=0.001)
    assert a.p_damage[0] / f.p_damage[0] == pytest.approx(0.961, abs=0.001)
    assert a.p_loss == f.p_loss  # the chain of disk failures does not see read errors
    # disks three years old at the start spend the whole mission in the later band
    old = markov_risk(layout, aged.with_(disk_age_years=3.0), usable_bytes=32 * TB)
    assert old.p_damage[1] > a.p_damage[1]


@pytest.mark.parametrize("layout", ["4xmirror:2", "raidz2:8", "draid2:8d:24c:1s", "3xdisk"])
def test_the_datasheet_mode_ignores_age(layout):
    lay = parse_layout(layout)
    sheet = params_for_class("hdd", 8 * TB, error_model="datasheet")
    assert sheet.lse_age_bands  # carried, not used
    base = markov_risk(lay, sheet.with_(lse_age_bands=()), usable_bytes=40 * TB)
    for p in (sheet, sheet.with_(disk_age_years=6.0)):
        r = markov_risk(lay, p, usable_bytes=40 * TB)
        assert (r.p_loss, r.p_damage, r.expected_bytes_lost) == (base.p_loss, base.p_damage, base.expected_bytes_lost)


def test_a_rate_the_user_gives_holds_at_every_age(run_cli):
    import json
    p = params_for_class("hdd", 8 * TB, lse_episodes_per_year=0.2)
    assert p.lse_age_bands == () and p.lse_by_age().episodes_at(5.0) == 0.2
    out = json.loads(run_cli("risk", "raidz2:8", "--disk-size", "16TB", "--lse-rate", "0.2", "--years", "1,5",
                             "--json").stdout)
    # a constant rate: damage grows with the horizon alone, five times over five years (nearly)
    assert out["p_damage"]["5"] == pytest.approx(5 * out["p_damage"]["1"], rel=0.01)
    assert out["inputs"]["lse_by_age"] == [[0.0, 0.2]]
    default = json.loads(run_cli("risk", "raidz2:8", "--disk-size", "16TB", "--json").stdout)
    got = [x for band in default["inputs"]["lse_by_age"] for x in band]
    assert got == pytest.approx([x for band in NEARLINE_BY_AGE.bands for x in band], rel=1e-9)


@pytest.mark.parametrize("changes,flag", [
    (dict(lse_age_bands=((1.0, 0.05),)), "lse_age_bands"),
    (dict(lse_age_bands=((0.0, 0.05), (0.0, 0.06))), "lse_age_bands"),
    (dict(lse_age_bands=((0.0, -0.05),)), "lse_age_bands"),
    (dict(lse_age_bands=((0.0, math.nan),)), "lse_age_bands"),
    (dict(disk_age_years=-1.0), "disk_age_years"),
    (dict(disk_age_years=math.inf), "disk_age_years"),
])
def test_bad_age_inputs_are_refused_naming_the_value(changes, flag):
    with pytest.raises(ParamError) as e:
        RiskParams(disk_bytes=4 * TB, **changes)
    assert e.value.param == flag


def test_the_scrub_check_by_age_lands_on_the_study_count_of_each_age():
    from zfslab.model.reliability.field_errors import scrub_check
    for age, incidence in ((0.5, 0.0315), (2.5, -math.expm1(-LATER))):
        c = scrub_check(10, 8 * TB, fill=0.5, scrub_days=30, age_years=age)
        study = 10 * 0.5 * incidence  # first LSEs a year on the allocated half
        assert c.field_episodes_per_year == pytest.approx(study / (1 - RECURRENCE), rel=1e-12)
    assert scrub_check(10, 8 * TB).field_episodes_per_year == pytest.approx(10 * 0.5 * NEARLINE.episodes_per_year)


def test_the_monte_carlo_engine_draws_the_rate_of_the_disks_age():
    import numpy as np

    from zfslab.model.reliability.montecarlo import simulate
    lay = parse_layout("2xmirror:2")
    # rates high enough to see damage in a few thousand trials; a tenfold rise after the first year
    p = params_for_class("hdd", 8 * TB, years=(5.0,), afr=0.2).with_(lse_age_bands=((0.0, 0.3), (1.0, 3.0)))
    exact = markov_risk(lay, p, usable_bytes=16 * TB).p_damage[0]
    flat = markov_risk(lay, p.with_(lse_age_bands=((0.0, 0.3),)), usable_bytes=16 * TB).p_damage[0]
    sim = simulate(lay, p, usable_bytes=16 * TB, rng=np.random.default_rng(11), trials=20_000, exponential_repair=True)
    low, high = sim.extra["ci95"]["p_damage"]["5"]
    width = high - low
    assert low - width / 2 <= exact <= high + width / 2 and low > 3 * flat  # the bands, not the first rate
