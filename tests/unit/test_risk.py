"""Risk models by their definitions: zfs, classic, wintelguy, Backblaze (docs/reliability.md#reference-checks)."""

import math

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.model.reliability.markov import birth_death, loss_probability
from zfslab.errors import ParamError
from zfslab.model.reliability.params import RiskParams, params_for_class
from zfslab.model.reliability.risk import backblaze_risk, compute_risk, markov_risk, wintelguy_risk

TB = 10**12


def r10(layout, ber, mbps):
    # docs/reliability.md#reference-checks: 16 TB, AFR 1.5 %, fill 0.7, 128 KiB blocks, 5 y, 48 h, parallel
    return RiskParams(disk_bytes=16 * TB, afr=0.015, fill=0.7, replace_hours=48, resilver_mb_s=mbps,
                      ber_per_bit=ber, years=(5.0,))


@pytest.mark.parametrize("layout,n,p,ber,mbps", [
    ("raidz1:8", 8, 1, 1e-14, 100), ("raidz1:8", 8, 1, 1e-15, 100), ("raidz2:8", 8, 2, 1e-14, 100),
    ("raidz2:8", 8, 2, 1e-15, 100),
])
def test_r10_zfs_mode_follows_its_definition(layout, n, p, ber, mbps):
    params = r10(layout, ber, mbps)
    lam = -math.log(1 - 0.015) / 8760
    T = 5 * 8760
    mttr = 48 + 0.7 * 16e12 / (mbps * 1e6) / 3600
    got = markov_risk(parse_layout(layout), params, usable_bytes=1)
    assert got.p_loss[0] == pytest.approx(loss_probability(birth_death(n, p, lam, 1 / mttr), T), rel=1e-12)
    flux = math.prod((n - k) * lam for k in range(p)) * mttr ** (p - 1)
    m = (n - p) * 0.7 * 16e12 * 8 * ber
    assert got.expected_bytes_lost[0] == pytest.approx(flux * T * m * 131072, rel=1e-12)
    assert got.p_damage[0] == pytest.approx(1 - math.exp(-flux * T * (1 - math.exp(-m))), rel=1e-12)


def test_r10_classic_mode_follows_its_definition():
    params = r10("raidz2:8", 1e-14, 100)
    lam = -math.log(1 - 0.015) / 8760
    T = 5 * 8760
    mttr = 48 + 16e12 / 100e6 / 3600  # full disk
    df = loss_probability(birth_death(8, 2, lam, 1 / mttr), T)
    ure = 1 - math.exp(-6 * 16e12 * 8 * 1e-14)
    flux = 8 * 7 * lam**2 * mttr
    expected = 1 - (1 - df) * math.exp(-flux * ure * T)
    assert markov_risk(parse_layout("raidz2:8"), params, usable_bytes=1, model="classic").p_loss[0] == \
        pytest.approx(expected, rel=1e-12)


def test_r10_mirrors_pool_of_four():
    params = r10("4xmirror:2", 1e-14, 150)
    one = markov_risk(parse_layout("mirror:2"), params, usable_bytes=1)
    four = markov_risk(parse_layout("4xmirror:2"), params, usable_bytes=1)
    assert four.p_loss[0] == pytest.approx(1 - (1 - one.p_loss[0]) ** 4, rel=1e-12)
    assert four.expected_bytes_lost[0] == pytest.approx(4 * one.expected_bytes_lost[0], rel=1e-12)


def test_zfs_read_errors_cost_blocks_classic_costs_the_pool():
    params = r10("raidz1:8", 1e-14, 100)
    zfs = markov_risk(parse_layout("raidz1:8"), params, usable_bytes=1)
    classic = markov_risk(parse_layout("raidz1:8"), params, usable_bytes=1, model="classic")
    assert classic.p_loss[0] > 100 * zfs.p_loss[0]
    assert zfs.p_damage[0] > zfs.p_loss[0]
    assert "damaged blocks" in zfs.dominant_cause


def test_wintelguy_r1_method():
    # docs/reliability.md#wintelguy: RAID 6, 5 x 12 drives of 18,000 GB, 70 MB/s x 50 %, MTBF 1.4e6 h, BER 1e-15, 48 h
    params = RiskParams(disk_bytes=18_000 * 10**9, mtbf_hours=1.4e6, ber_per_bit=1e-15, replace_hours=48,
                        resilver_mb_s=35)
    r = wintelguy_risk(parse_layout("5xraidz2:12"), params)
    w = r.extra["wintelguy"]
    mttr = 48 + 18e12 / 35e6 / 3600
    assert w["mttr_hours"] == pytest.approx(mttr, rel=1e-15)
    assert w["afr"] == pytest.approx(8760 / 1.4e6)
    df = 2 * 1.4e6**3 / (12 * 11 * 10 * mttr**2) / 5
    pr = 1 - (1 - 1e-15) ** (10 * 18e12 * 8)
    lse = 1.4e6**2 / (12 * 11 * mttr * pr) / 5
    total = 1 / (1 / df + 1 / lse)
    assert w["p_read_error_in_rebuild"] == pr
    assert r.mttdl_hours == pytest.approx(total, rel=1e-13)
    assert r.p_loss == pytest.approx(tuple(1 - math.exp(-y * 8760 / total) for y in (1, 5, 10)), rel=1e-12)


def test_backblaze_r2_method():
    # durability.py 4 2 0.10 1: 6 shards, 2 parity, AFR 10 %, 1-day periods
    params = RiskParams(disk_bytes=TB, afr=0.10, replace_hours=24, years=(1.0,))
    r = backblaze_risk(parse_layout("raidz2:6"), params)
    f = 0.10 / 365
    period = sum(math.comb(6, i) * (1 - f) ** i * f ** (6 - i) for i in range(0, 4))  # <= 3 survivors of 4 needed
    b = r.extra["backblaze"]
    assert b["periods_per_year"] == 365
    assert b["vdevs"][0]["period_loss"] == pytest.approx(period, rel=1e-12)
    assert r.p_loss[0] == pytest.approx(1 - (1 - period) ** 365, rel=1e-9)


def test_backblaze_period_from_replace_hours():
    r = backblaze_risk(parse_layout("raidz2:6"), RiskParams(disk_bytes=TB, afr=0.10, replace_hours=48))
    assert r.extra["backblaze"]["periods_per_year"] == 182


def test_mttdl_and_monotone_years():
    params = params_for_class("hdd", 8 * TB)
    r = compute_risk(parse_layout("raidz2:6"), params, usable_bytes=30 * TB)
    assert r.p_loss[0] < r.p_loss[1] < r.p_loss[2]
    assert r.mttdl_hours > 1e6


def test_params_errors_name_the_value():
    with pytest.raises(ParamError, match=r"^fill 1.5: the allocated fraction"):
        RiskParams(disk_bytes=TB, fill=1.5)
    with pytest.raises(ParamError, match=r"disk_class 'tape'"):
        params_for_class("tape", TB)
    with pytest.raises(ParamError, match=r"^model xyz"):
        compute_risk(parse_layout("mirror:2"), RiskParams(disk_bytes=TB), usable_bytes=1, model="xyz")


def test_hot_spare_shortens_repair():
    params = params_for_class("hdd", 16 * TB)
    plain = markov_risk(parse_layout("raidz2:11"), params, usable_bytes=1)
    spare = markov_risk(parse_layout("raidz2:11+spare:1"), params, usable_bytes=1)
    assert spare.vdevs[0].mttr_hours < plain.vdevs[0].mttr_hours
    assert spare.p_loss[1] < plain.p_loss[1]


# --- extreme but valid inputs (issue 19): finite answers, in bounded time -----------------

@pytest.mark.parametrize("layout,overrides", [
    ("mirror:100", {}),  # each vdev's MTTDL overflows: was ZeroDivisionError
    ("mirror:255", {}),  # MTTR ** 254: was OverflowError
    ("raidz2:6", {"mtbf_hours": 1.0}),
    ("mirror:255", {"replace_hours": 0.0, "resilver_mb_s": 1e7}),  # stiff and wide: was hours of mpmath
    ("draid3:8d:255c:100s", {"mtbf_hours": 1.0}),  # 404 states: was 8 s of float products per horizon
])
@pytest.mark.parametrize("model", ["zfs", "classic"])
def test_extreme_inputs_give_finite_probabilities(layout, overrides, model):
    import time
    params = RiskParams(disk_bytes=4 * TB, years=(1.0, 5.0, 10.0)).with_(**overrides)
    start = time.monotonic()
    r = compute_risk(parse_layout(layout), params, usable_bytes=TB, model=model)
    assert time.monotonic() - start < 10
    for values in (r.p_loss, r.p_damage, r.expected_bytes_lost, r.expected_bytes_lost_pool):
        assert all(math.isfinite(v) and v >= 0 for v in values)
    assert all(v <= 1 for v in r.p_loss + r.p_damage)
    assert not math.isnan(r.mttdl_hours) and r.mttdl_hours > 0  # may be inf: beyond a float's range


def test_classic_semantics_with_certain_loss():
    # --mtbf-hours 1 --model classic: P = 1 reached log1p(-1), a math domain error
    params = RiskParams(disk_bytes=4 * TB, mtbf_hours=1.0)
    r = compute_risk(parse_layout("raidz2:6"), params, usable_bytes=TB, model="classic")
    assert r.p_loss[-1] == 1.0


def test_the_quasi_stationary_law_agrees_with_the_exact_series_where_both_run():
    from zfslab.model.reliability.markov import _quasi_stationary
    chain = birth_death(9, 8, 1e-5, 1e3)
    exact = loss_probability(chain, 87600)
    assert _quasi_stationary(chain, 87600) == pytest.approx(exact, rel=1e-6)


def test_backblaze_with_short_periods_and_a_wide_vdev():
    # 6-hour periods: comb(1460, i) * p**i overflowed a float (found by the fuzz test)
    params = RiskParams(disk_bytes=4 * TB, ber_per_bit=0.0, replace_hours=6.0)
    r = backblaze_risk(parse_layout("raidz1:12+2xmirror:12+4xraidz2:3"), params)
    assert all(0 <= p <= 1 and math.isfinite(p) for p in r.p_loss)
    # where the series and the closed form both work they agree
    from zfslab.model.reliability.risk import _periods_to_annual
    assert _periods_to_annual(1e-6, 56) == pytest.approx(-math.expm1(56 * math.log1p(-1e-6)), rel=1e-9)


@pytest.mark.parametrize("layout,overrides", [
    ("mirror:255", {}), ("mirror:100", {"mtbf_hours": 1.0}), ("mirror:100", {"mtbf_hours": 1e12}),
    ("4xraidz1:2", {"ber_per_bit": 1e-17}),  # 1 - (1 - 1e-17) ** bits is 0: was a ZeroDivisionError
])
def test_wintelguy_on_wide_mirrors_and_tiny_error_rates(layout, overrides):
    # MTBF ** 255 overflowed a float (found by the fuzz test)
    r = wintelguy_risk(parse_layout(layout), RiskParams(disk_bytes=4 * TB).with_(**overrides))
    assert all(0 <= p <= 1 and math.isfinite(p) for p in r.p_loss) and r.mttdl_hours > 0


def test_a_stripe_damages_files_at_the_rate_its_scrubs_meet_read_errors():
    # issue 23 item 9: without redundancy every unreadable sector is a damaged file
    # (docs/reliability.md#no-redundancy): one scrub every S hours reads fill x disk of each disk
    p = RiskParams(disk_bytes=8 * 10**12, ber_per_bit=1e-15, scrub_days=30, fill=0.5, years=(1.0, 5.0))
    r = markov_risk(parse_layout("4xdisk"), p, usable_bytes=32 * 10**12)
    per_scrub = 0.5 * 8e12 * 8 * 1e-15  # bad blocks one scrub of one disk meets
    rate = 4 / (30 * 24) * -math.expm1(-per_scrub)
    assert r.p_damage == pytest.approx(tuple(-math.expm1(-rate * y * 8760) for y in (1.0, 5.0)), rel=1e-9)
    assert 0 < r.p_damage[0] < r.p_damage[1] < 1
    # latent defects found by the scrub add to the read errors; bigger disks damage more
    lse = markov_risk(parse_layout("4xdisk"), p.with_(lse_per_hour=1e-5), usable_bytes=32 * 10**12)
    assert lse.p_damage[0] > r.p_damage[0]
    big = markov_risk(parse_layout("4xdisk"), p.with_(disk_bytes=16 * 10**12), usable_bytes=64 * 10**12)
    assert big.p_damage[0] > r.p_damage[0]
    # a redundant vdev repairs what its scrubs find: the term is the stripe's alone
    mirror = markov_risk(parse_layout("2xmirror:2"), p, usable_bytes=16 * 10**12)
    assert mirror.p_damage[0] < r.p_damage[0] / 100
