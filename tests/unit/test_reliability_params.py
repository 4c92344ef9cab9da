"""model/reliability/params.py: the AFR convention, resilver times worked by hand, disk classes,
and the checks made where RiskParams is built."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zfslab.commands._common import PARAM_FLAGS
from zfslab.errors import ParamError
from zfslab.model.reliability.params import (
    BLOCK_BYTES, DEFAULT_YEARS, DISK_CLASSES, HOURS_PER_YEAR, RiskParams, params_for_class,
)

FOUR_TB = 4 * 10**12


def test_defaults_are_the_documented_conventions():
    p = RiskParams(disk_bytes=FOUR_TB)
    assert HOURS_PER_YEAR == 365 * 24
    assert BLOCK_BYTES == 131_072  # the default recordsize, 128 KiB
    assert (p.afr, p.ber_per_bit, p.replace_hours, p.resilver_mb_s, p.streaming_mb_s) == (0.015, 1e-14, 48.0, None, 150.0)
    assert (p.fill, p.detect_hours, p.scrub_days, p.lse_per_hour, p.block_bytes) == (0.7, 0.0, 30.0, 0.0, 131_072)
    assert p.parallel_repair is True
    assert p.years == DEFAULT_YEARS == (1.0, 5.0, 10.0)
    assert p.mtbf_hours is None


@pytest.mark.parametrize("afr,expected", [
    # -ln(1 - a) / 8760 by its series a + a^2/2 + a^3/3 + a^4/4 + ... (enough terms for 1e-12)
    (0.015, (0.015 + 0.015**2 / 2 + 0.015**3 / 3 + 0.015**4 / 4 + 0.015**5 / 5 + 0.015**6 / 6) / 8760),
    (0.01, (0.01 + 0.01**2 / 2 + 0.01**3 / 3 + 0.01**4 / 4 + 0.01**5 / 5) / 8760),
    (0.5, math.log(2) / 8760),  # half the disks fail within a year: lambda = ln 2 / year
])
def test_failure_rate_from_the_afr(afr, expected):
    assert RiskParams(disk_bytes=FOUR_TB, afr=afr).failure_rate_per_hour == pytest.approx(expected, rel=1e-12)


@given(afr=st.floats(1e-6, 0.99))
def test_the_rate_gives_back_the_afr_as_the_chance_of_failing_within_a_year(afr):
    # exponential lifetimes: P(failure within 8760 h) = 1 - exp(-lambda * 8760) = afr
    rate = RiskParams(disk_bytes=FOUR_TB, afr=afr).failure_rate_per_hour
    assert -math.expm1(-rate * 8760) == pytest.approx(afr, rel=1e-9)


@given(low=st.floats(1e-4, 0.98), step=st.floats(1e-4, 0.01))
def test_a_higher_afr_is_a_higher_rate(low, step):
    a = RiskParams(disk_bytes=FOUR_TB, afr=low).failure_rate_per_hour
    b = RiskParams(disk_bytes=FOUR_TB, afr=min(low + step, 0.99)).failure_rate_per_hour
    assert b > a


def test_mtbf_replaces_the_afr_conversion():
    p = RiskParams(disk_bytes=FOUR_TB, afr=0.5, mtbf_hours=1_000_000)
    assert p.failure_rate_per_hour == 1e-6


def test_healing_rate_is_a_share_of_streaming_unless_given():
    p = RiskParams(disk_bytes=FOUR_TB, streaming_mb_s=200.0)
    assert (p.healing_mb_s(mirror=True), p.healing_mb_s(mirror=False)) == (160.0, 100.0)
    given_rate = p.with_(resilver_mb_s=42.0)
    assert (given_rate.healing_mb_s(True), given_rate.healing_mb_s(False)) == (42.0, 42.0)


def test_resilver_hours_worked_by_hand():
    p = RiskParams(disk_bytes=FOUR_TB)  # 70 % of 4 TB = 2.8e12 bytes to rewrite, 150 MB/s streaming
    # mirror: 2.8e12 B / 120e6 B/s = 23 333.3 s = 6.48148 h
    assert p.resilver_hours(mirror=True) == pytest.approx(2.8e12 / 120e6 / 3600, rel=1e-12)
    assert p.resilver_hours(mirror=True) == pytest.approx(6.481481481, rel=1e-9)
    # raidz: 2.8e12 / 75e6 = 37 333.3 s = 10.37037 h; a dRAID with 4 x speed-up: a quarter of it
    assert p.resilver_hours(mirror=False) == pytest.approx(10.37037037, rel=1e-9)
    assert p.resilver_hours(mirror=False, speedup=4.0) == pytest.approx(10.37037037 / 4, rel=1e-9)
    # full disk at 100 MB/s given: 4e12 / 1e8 = 40 000 s, the same for mirror and raidz
    full = p.with_(fill=1.0, resilver_mb_s=100.0)
    assert full.resilver_hours(True) == full.resilver_hours(False) == pytest.approx(40_000 / 3600, rel=1e-12)


@given(fill=st.floats(0.01, 1.0), tb=st.integers(1, 30), speedup=st.floats(1.0, 20.0))
def test_resilver_time_scales_with_the_bytes_and_inversely_with_the_speed_up(fill, tb, speedup):
    p = RiskParams(disk_bytes=tb * 10**12, fill=fill)
    one = p.resilver_hours(False)
    assert p.with_(disk_bytes=2 * tb * 10**12).resilver_hours(False) == pytest.approx(2 * one, rel=1e-12)
    assert p.resilver_hours(False, speedup) == pytest.approx(one / speedup, rel=1e-12)
    assert p.resilver_hours(True) < one  # a mirror heals at 0.8 of streaming, raidz at 0.5


def test_with_returns_a_changed_copy_and_checks_it():
    p = RiskParams(disk_bytes=FOUR_TB)
    q = p.with_(fill=0.5, years=(2.0,))
    assert (q.fill, q.years, q.disk_bytes) == (0.5, (2.0,), FOUR_TB)
    assert (p.fill, p.years) == (0.7, DEFAULT_YEARS)
    with pytest.raises(ParamError, match="^fill 0: the allocated fraction is above 0 and at most 1"):
        p.with_(fill=0.0)


@pytest.mark.parametrize("name,afr,ber,mb_s", [
    # streaming = the speed preset's write rate averaged from the outer zone to the inner (0.55 of it)
    ("hdd", 0.015, 1e-14, 220 * 1.55 / 2), ("hdd5400", 0.015, 1e-14, 180 * 1.55 / 2),
    ("hdd-enterprise", 0.015, 1e-15, 270 * 1.55 / 2), ("ssd", 0.01, 1e-17, 500.0), ("nvme", 0.01, 1e-17, 2500.0),
])
def test_params_for_class_takes_the_class_defaults(name, afr, ber, mb_s):
    p = params_for_class(name, FOUR_TB)
    assert (p.disk_bytes, p.afr, p.ber_per_bit, p.streaming_mb_s) == (FOUR_TB, afr, ber, mb_s)
    assert DISK_CLASSES[name].source  # each default says where it comes from
    assert p.replace_hours == 48.0  # what the class does not set keeps RiskParams' default


def test_params_for_class_overrides_and_none_means_default():
    p = params_for_class("hdd-enterprise", FOUR_TB, afr=0.03, fill=None, resilver_mb_s=None, replace_hours=4.0)
    assert (p.afr, p.ber_per_bit, p.fill, p.resilver_mb_s, p.replace_hours) == (0.03, 1e-15, 0.7, None, 4.0)
    # the override is checked like any other value
    with pytest.raises(ParamError) as e:
        params_for_class("ssd", FOUR_TB, ber_per_bit=0.01)
    assert e.value.param == "ber_per_bit" and e.value.worded(PARAM_FLAGS).startswith("--ber 0.01: errors per bit read")


def test_params_for_an_unknown_class_names_the_known_ones():
    with pytest.raises(ParamError) as e:
        params_for_class("tape", FOUR_TB)
    assert str(e.value) == "disk_class 'tape': use one of hdd, hdd5400, hdd-enterprise, ssd, nvme"
    assert e.value.exit_code == 2


@pytest.mark.parametrize("changes,fragment", [
    ({"disk_bytes": 0}, "disk size 0: must be more than 0 bytes"),
    ({"disk_bytes": -5}, "disk size -5: must be more than 0 bytes"),
    ({"afr": 0.0}, "0: an annual failure rate is between 0 and 100 %"),
    ({"afr": 2.0}, "200: an annual failure rate is between 0 and 100 %"),
    ({"afr": 1.0}, "100: an annual failure rate is between 0 and 100 %"),
    ({"mtbf_hours": 0.0}, "--mtbf-hours 0: must be more than 0"),
    ({"mtbf_hours": -1.0}, "--mtbf-hours -1: must be more than 0"),
    ({"ber_per_bit": -1e-15}, "--ber -1e-15: errors per bit read, e.g. 1e-14 or 1e-15"),
    ({"ber_per_bit": 1e-3}, "--ber 0.001: errors per bit read"),
    ({"replace_hours": -1.0}, "--replace-hours -1: must be 0 or more"),
    ({"resilver_mb_s": 0.0}, "--resilver-mbps 0: must be more than 0 MB/s"),
    ({"fill": 0.0}, "--fill 0: the allocated fraction is above 0 and at most 1"),
    ({"fill": 1.5}, "--fill 1.5: the allocated fraction is above 0 and at most 1"),
    ({"scrub_days": 0.0}, "--scrub-days 0: must be more than 0"),
    ({"years": ()}, "give positive years, e.g. 1,5,10"),
    ({"years": (1.0, -5.0)}, "--years 1,-5: give positive years, e.g. 1,5,10"),
    ({"years": (0.0,)}, "--years 0: give positive years"),
])
def test_bad_values_are_refused_where_the_object_is_built(changes, fragment):
    # the model names its own input; the command layer words it with the flag (issue 17, item 5)
    with pytest.raises(ParamError) as e:
        RiskParams(**({"disk_bytes": FOUR_TB} | changes))
    assert fragment in e.value.worded(PARAM_FLAGS)
    assert "--" not in str(e.value)
    assert e.value.exit_code == 2


@pytest.mark.parametrize("changes", [
    {"afr": 1e-9}, {"afr": 0.999}, {"ber_per_bit": 0.0}, {"replace_hours": 0.0}, {"fill": 1.0},
    {"scrub_days": 0.01}, {"years": (0.5,)}, {"resilver_mb_s": 0.001}, {"mtbf_hours": 1.0},
])
def test_values_at_the_edges_are_accepted(changes):
    p = RiskParams(**({"disk_bytes": FOUR_TB} | changes))
    for name, value in changes.items():
        assert getattr(p, name) == value


def test_a_negative_detect_time_names_itself_and_its_value():
    with pytest.raises(ParamError) as e:
        RiskParams(disk_bytes=FOUR_TB, detect_hours=-2.0)
    assert "detect" in str(e.value) and "-2" in str(e.value)


def test_a_streaming_rate_of_zero_is_refused_where_the_object_is_built():
    with pytest.raises(ParamError, match="0"):
        RiskParams(disk_bytes=FOUR_TB, streaming_mb_s=0.0)
