"""The field error model (docs/reliability.md#field-error-model): the studies' counts become the
rates, a resilver meets what the last scrub left, the datasheet model stays the calculators', and
every input is checked where it is given."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zfslab.errors import ParamError
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.reliability.field_errors import (
    ENTERPRISE, FLASH, NEARLINE, RECORDS_PER_EPISODE, RECURRENCE, field_lse, scrub_check,
)
from zfslab.model.reliability.params import HOURS_PER_YEAR, RiskParams, params_for_class
from zfslab.model.reliability.risk import _critical_flux, markov_risk, vdev_chain
from zfslab.model.units import TB


@pytest.mark.parametrize("study,affected,months", [(NEARLINE, 0.085, 32), (ENTERPRISE, 0.019, 32), (FLASH, 0.40, 48)])
def test_the_yearly_incidence_gives_back_the_study_count(study, affected, months):
    # a constant hazard: surviving `months` without an LSE at the yearly incidence is the study's 1 - f
    assert 1 - (1 - study.incidence_per_year) ** (months / 12) == pytest.approx(affected, rel=1e-12)
    assert study.episodes_per_year == pytest.approx(study.incidence_per_year / (1 - RECURRENCE), rel=1e-12)


def test_the_classes_are_ordered_as_the_studies_found_them():
    # enterprise disks fewer LSEs than nearline (Bairavasundaram 2007); flash more drives with
    # uncorrectable errors than disks with LSEs (Schroeder, Lagisetty, Merchant 2016)
    assert ENTERPRISE.episodes_per_year < NEARLINE.episodes_per_year < FLASH.episodes_per_year
    assert NEARLINE.incidence_per_year == pytest.approx(0.0328, abs=5e-5)  # close to the first year's 3.15 %
    assert field_lse("hdd") is field_lse("hdd5400") is NEARLINE and field_lse("hdd-enterprise") is ENTERPRISE
    assert field_lse("nvme") is FLASH and field_lse("my.toml", seeks=False) is FLASH
    assert field_lse("my.toml") is NEARLINE


def test_a_mirror_resilver_meets_what_half_a_scrub_interval_left_by_hand():
    p = params_for_class("hdd", 8 * TB, years=(5.0,))
    assert p.error_model == "field" and p.lse_records_per_episode == RECORDS_PER_EPISODE
    layout = parse_layout("4xmirror:2")
    r = markov_risk(layout, p, usable_bytes=32 * TB)
    e = 1 * NEARLINE.episodes_per_year / 8760 * (30 * 24 / 2) * 0.7  # one survivor, 15 days, 70 % allocated
    g = layout.groups[0]
    _, mttr = vdev_chain(g, layout, p)
    flux = _critical_flux(g, p.failure_rate_per_hour, mttr, True)
    hours = 5 * HOURS_PER_YEAR
    assert r.vdevs[0].read_errors_per_critical == pytest.approx(e * RECORDS_PER_EPISODE, rel=1e-12)
    # new disks: the first year at the first-year count (3.15 %), four years at the rest of 8.5 % in 32 months
    first = -math.log(1 - 0.0315)
    later = (-math.log(1 - 0.085) - first) / (20 / 12)
    e1, e2 = (e * -math.expm1(-h) / 0.7 / NEARLINE.episodes_per_year for h in (first, later))
    damaging = 4 * flux * HOURS_PER_YEAR * (-math.expm1(-e1) + 4 * -math.expm1(-e2))
    assert r.p_damage[0] == pytest.approx(-math.expm1(-damaging), rel=1e-12)
    assert r.expected_bytes_lost[0] == pytest.approx(
        4 * flux * HOURS_PER_YEAR * (e1 + 4 * e2) * RECORDS_PER_EPISODE * 131072, rel=1e-12)
    # at the study's average rate for all five years it was 1.1 % less: the later years' rate is higher
    flat = -math.expm1(-4 * flux * hours * -math.expm1(-e))
    assert r.p_damage[0] / flat == pytest.approx(1.011, abs=0.001)
    # the figure docs/recommend.md quotes: 1 in 1,200 over 5 years
    assert 1 / r.p_damage[0] == pytest.approx(1200, rel=0.05)


def test_the_scrub_interval_moves_the_field_risk_and_not_the_datasheets():
    layout = parse_layout("6xmirror:2")
    field = params_for_class("hdd", 4 * TB, years=(5.0,))
    monthly = markov_risk(layout, field, usable_bytes=24 * TB).p_damage[0]
    weekly = markov_risk(layout, field.with_(scrub_days=7.5), usable_bytes=24 * TB).p_damage[0]
    assert weekly == pytest.approx(monthly / 4, rel=0.01)  # live errors a quarter as long
    sheet = field.with_(error_model="datasheet")
    assert (markov_risk(layout, sheet, usable_bytes=24 * TB).p_damage
            == markov_risk(layout, sheet.with_(scrub_days=7.5), usable_bytes=24 * TB).p_damage)


@pytest.mark.parametrize("layout", ["4xmirror:2", "raidz2:8", "2xraidz1:4", "draid2:8d:24c:1s", "3xdisk"])
def test_the_datasheet_mode_is_a_bare_riskparams(layout):
    """The error model changes read errors only; --error-model datasheet computes what a RiskParams
    without one did (the calculators' reproductions rest on it)."""
    lay = parse_layout(layout)
    bare = RiskParams(disk_bytes=8 * TB)
    explicit = params_for_class("hdd", 8 * TB, error_model="datasheet").with_(streaming_mb_s=150.0)
    a, b = markov_risk(lay, bare, usable_bytes=40 * TB), markov_risk(lay, explicit, usable_bytes=40 * TB)
    assert (a.p_loss, a.p_damage, a.expected_bytes_lost, a.mttdl_hours) == (b.p_loss, b.p_damage,
                                                                            b.expected_bytes_lost, b.mttdl_hours)
    field = markov_risk(lay, explicit.with_(error_model="field"), usable_bytes=40 * TB)
    assert field.p_loss == a.p_loss  # pool loss is the chain's alone
    assert all(f < d for f, d in zip(field.p_damage, a.p_damage))


def test_classic_semantics_lose_the_array_less_often_on_field_errors():
    lay = parse_layout("raidz1:8")
    p = params_for_class("hdd", 8 * TB, years=(5.0,))
    field = markov_risk(lay, p, usable_bytes=56 * TB, model="classic").p_loss[0]
    sheet = markov_risk(lay, p.with_(error_model="datasheet"), usable_bytes=56 * TB, model="classic").p_loss[0]
    chain = markov_risk(lay, p, usable_bytes=56 * TB, model="zfs").p_loss[0]
    assert chain < field < sheet


def test_the_monte_carlo_engine_draws_the_same_field_errors():
    from zfslab.model.reliability.montecarlo import simulate
    lay = parse_layout("2xmirror:2")
    # high rates so that damage is seen in a few thousand trials, yet few errors per resilver (the
    # chain's 1 - exp(-e) at the mean age S/2 and the draw at t mod S then agree)
    p = params_for_class("hdd", 8 * TB, years=(5.0,), lse_episodes_per_year=2.0, afr=0.2)
    exact = markov_risk(lay, p, usable_bytes=16 * TB)
    sim = simulate(lay, p, usable_bytes=16 * TB, rng=np.random.default_rng(7), trials=20_000, exponential_repair=True)
    low, high = sim.extra["ci95"]["p_damage"]["5"]
    width = high - low
    # within its 95 % interval of the exact chain, widened a little for the S/2 mean against t mod S
    assert low - width / 2 <= exact.p_damage[0] <= high + width / 2


@pytest.mark.parametrize("changes,flag,text", [
    (dict(error_model="bathtub"), "error_model", "use one of field, datasheet"),
    (dict(lse_episodes_per_year=-1.0), "lse_episodes_per_year", "0 to 365"),
    (dict(lse_episodes_per_year=math.nan), "lse_episodes_per_year", "0 to 365"),
    (dict(lse_episodes_per_year=math.inf), "lse_episodes_per_year", "0 to 365"),
    (dict(lse_records_per_episode=0.5), "lse_records_per_episode", "1 or more"),
    (dict(lse_records_per_episode=math.nan), "lse_records_per_episode", "1 or more"),
    (dict(lse_per_hour=-1e-6), "lse_per_hour", "0 or more"),
    (dict(scrub_days=math.inf), "scrub_days", "finite"),
    (dict(scrub_days=math.nan), "scrub_days", "more than 0"),
])
def test_bad_field_inputs_are_refused_naming_the_value(changes, flag, text):
    with pytest.raises(ParamError) as e:
        RiskParams(disk_bytes=4 * TB, **changes)
    assert e.value.param == flag and text in str(e.value)


def test_the_scrub_check_of_a_typical_pool():
    c = scrub_check(10, 8 * TB, fill=0.5, scrub_days=30)
    assert c.datasheet_errors_per_scrub == pytest.approx(3.2, rel=1e-12)  # 3.2e14 bits x 1e-14
    assert c.datasheet_p_scrub_repairs > 0.95  # nearly every scrub would repair something
    assert c.field_episodes_per_year == pytest.approx(10 * 0.5 * NEARLINE.episodes_per_year)
    assert c.field_p_scrub_repairs < 0.02  # and with field errors 98 % report 0 errors
    # the same magnitude as the study's own count of drives developing LSEs on the allocated half
    study = 10 * NEARLINE.incidence_per_year * 0.5
    assert study < c.field_episodes_per_year < 2 * study


@pytest.mark.parametrize("argv,fragment", [
    (["--ber", "1e-15", "--error-model", "field"], "--ber 1e-15: a datasheet rate; add --error-model datasheet"),
    (["--lse-rate", "0.5", "--error-model", "datasheet"], "--lse-rate 0.5: the field model's input"),
    (["--lse-rate", "nan"], "--lse-rate"),
    (["--lse-rate", "400"], "--lse-rate"),
    (["--error-model", "bathtub"], "--error-model"),
    (["--scrub-days", "0"], "--scrub-days"),
])
def test_the_command_line_refuses_on_one_line(run_cli, argv, fragment):
    r = run_cli("risk", "raidz2:8", "--disk-size", "16TB", *argv)
    assert r.exit_code == 2 and fragment in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_command_line_default_is_field_and_ber_alone_is_datasheet(run_cli):
    import json
    field = json.loads(run_cli("risk", "raidz2:8", "--disk-size", "16TB", "--json").stdout)
    sheet = json.loads(run_cli("risk", "raidz2:8", "--disk-size", "16TB", "--ber", "1e-14", "--json").stdout)
    assert field["inputs"]["error_model"] == "field" and sheet["inputs"]["error_model"] == "datasheet"
    assert field["inputs"]["lse_episodes_per_year"] == pytest.approx(NEARLINE.episodes_per_year)
    assert field["p_loss"] == sheet["p_loss"] and field["p_damage"]["5"] < sheet["p_damage"]["5"] / 10
    rate = json.loads(run_cli("risk", "raidz2:8", "--disk-size", "16TB", "--lse-rate", "0.47", "--json").stdout)
    assert rate["p_damage"]["5"] == pytest.approx(10 * field["p_damage"]["5"], rel=0.05)  # ten times, nearly
