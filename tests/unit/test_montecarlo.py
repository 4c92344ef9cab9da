"""Engine B against engine A where both apply (exponential lifetimes and repairs)."""

import numpy as np
import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.model.reliability.montecarlo import Lifetime, simulate
from zfslab.model.reliability.params import RiskParams
from zfslab.model.reliability.risk import markov_risk

TB = 10**12


def fast_params(mtbf, mttr, **kw):
    # repair = the replacement delay alone: the resilver is made instantaneous
    return RiskParams(disk_bytes=TB, mtbf_hours=mtbf, replace_hours=mttr, resilver_mb_s=1e12, ber_per_bit=0,
                      years=(1.0, 5.0), **kw)


CASES = [
    ("mirror:2", 10_000, 100), ("mirror:3", 5_000, 300), ("raidz1:5", 20_000, 200), ("raidz1:3", 20_000, 400),
    ("raidz2:6", 10_000, 500), ("raidz3:7", 5_000, 500), ("3xraidz1:4", 20_000, 200), ("2xmirror:2", 10_000, 150),
    ("raidz2:10", 20_000, 400), ("24xdisk", 200_000, 10), ("draid1:4d:10c:1s", 20_000, 300),
]


@pytest.mark.parametrize("layout,mtbf,mttr", CASES, ids=[c[0] for c in CASES])
def test_monte_carlo_lands_within_its_interval_of_the_exact_chain(layout, mtbf, mttr):
    lay = parse_layout(layout)
    params = fast_params(mtbf, mttr)
    exact = markov_risk(lay, params, usable_bytes=TB)
    mc = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(20261122), trials=4000,
                  exponential_repair=True, bias=False)
    for i, years in enumerate(params.years):
        lo, hi = mc.extra["ci95"]["p_loss"][f"{years:g}"]
        half = (hi - lo) / 2
        # 3 standard errors: a seeded run either always passes or always fails
        assert abs(mc.p_loss[i] - exact.p_loss[i]) <= 3 * half / 1.96, (years, mc.p_loss[i], exact.p_loss[i])


@pytest.mark.parametrize("layout", ["raidz2:8", "mirror:3", "raidz3:11"])
def test_importance_sampling_reaches_rare_events(layout):
    lay = parse_layout(layout)
    params = RiskParams(disk_bytes=16 * TB, afr=0.015, replace_hours=48, ber_per_bit=0, years=(5.0,))
    exact = markov_risk(lay, params, usable_bytes=TB).p_loss[0]
    mc = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(5), trials=4000,
                  target_relative_error=0.15, exponential_repair=True)
    assert exact < 1e-6  # rare: naive sampling would see nothing
    assert mc.extra["relative_error"]["5"] <= 0.15
    assert abs(mc.p_loss[0] / exact - 1) < 3 * 0.15 / 1.96


def test_seeded_runs_repeat_exactly():
    lay = parse_layout("raidz1:5")
    params = fast_params(20_000, 200)
    a = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(42), trials=500)
    b = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(42), trials=500)
    assert a.p_loss == b.p_loss and a.extra["trials"] == 500


def test_read_errors_in_critical_resilvers_damage_blocks_not_the_pool():
    lay = parse_layout("raidz1:6")
    params = RiskParams(disk_bytes=16 * TB, mtbf_hours=20_000, replace_hours=48, ber_per_bit=1e-14, years=(5.0,))
    zfs = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(1), trials=2000)
    classic = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(1), trials=2000, classic=True)
    assert zfs.p_damage[0] > 0.5 and zfs.expected_bytes_lost[0] > 0
    assert classic.p_loss[0] > 2 * zfs.p_loss[0]


def test_ageing_disks_fail_more_later():
    lay = parse_layout("raidz1:4")
    params = fast_params(20_000, 200).with_(years=(1.0, 10.0))
    young = Lifetime.table((0.01, 0.01, 0.01))
    old = Lifetime.table((0.01, 0.05, 0.20))
    a = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(3), trials=3000, lifetime=young)
    b = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(3), trials=3000, lifetime=old)
    assert b.p_loss[1] > a.p_loss[1]


def test_weibull_hazard_round_trips():
    life = Lifetime.weibull_from_afr(0.02, 1.3)
    assert life.cumulative(8760) == pytest.approx(-np.log1p(-0.02))
    for age in (10.0, 5000.0, 80000.0):
        assert life.inverse(life.cumulative(age)) == pytest.approx(age)
    table = Lifetime.table((0.01, 0.02, 0.04))
    for age in (100.0, 9000.0, 30000.0):
        assert table.inverse(table.cumulative(age)) == pytest.approx(age)


def test_batch_correlation_raises_the_risk():
    lay = parse_layout("raidz1:6")
    params = fast_params(50_000, 300)
    plain = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(9), trials=4000, bias=False)
    batch = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(9), trials=4000, bias=False,
                     batch_variance=1.0)
    assert batch.p_loss[1] > plain.p_loss[1]


# --- bounded work (issue 19) ------------------------------------------------------------------

class FakeClock:
    """Each reading advances 1 ms: the budget is hit after a known number of trials."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def test_a_time_budget_stops_the_simulation_and_says_so():
    from zfslab.model.reliability.params import RiskParams
    lay = parse_layout("mirror:2")
    params = RiskParams(disk_bytes=TB, afr=0.000001)  # a tiny AFR: the target error is out of reach
    seen = []
    mc = simulate(lay, params, usable_bytes=TB, rng=np.random.default_rng(1), trials=100, max_trials=10**9,
                  target_relative_error=0.1, clock=FakeClock(), max_seconds=3.0, batch=500,
                  progress=lambda n, err, s: seen.append((n, err, s)))
    assert mc.extra["stopped_by"] == "time budget"
    assert 1 <= mc.extra["trials"] <= 3000
    assert seen and seen[0][0] == 500


def test_a_trial_budget_stops_the_simulation_and_says_so():
    from zfslab.model.reliability.params import RiskParams
    lay = parse_layout("mirror:2")
    mc = simulate(lay, RiskParams(disk_bytes=TB, afr=0.000001), usable_bytes=TB, rng=np.random.default_rng(1),
                  trials=100, max_trials=1000, target_relative_error=0.1)
    assert (mc.extra["stopped_by"], mc.extra["trials"]) == ("trial budget", 1000)


def test_the_target_error_stops_the_simulation_and_says_so():
    lay = parse_layout("2xmirror:2")
    mc = simulate(lay, fast_params(10_000, 150), usable_bytes=TB, rng=np.random.default_rng(1), trials=2000,
                  max_trials=10**6, target_relative_error=0.2)
    assert mc.extra["stopped_by"] == "target error"
    assert mc.extra["relative_error"]["1"] <= 0.2 or mc.extra["relative_error"]["5"] <= 0.2


def test_every_vdev_gets_a_trial_even_when_the_budget_is_spent_at_once():
    from zfslab.model.reliability.params import RiskParams
    lay = parse_layout("mirror:2+raidz2:6")
    mc = simulate(lay, RiskParams(disk_bytes=TB), usable_bytes=TB, rng=np.random.default_rng(1), trials=10,
                  clock=FakeClock(), max_seconds=0.0)
    assert mc.extra["stopped_by"] == "time budget" and mc.extra["trials"] >= 1


def test_a_pool_lost_in_every_trial_has_a_finite_mttdl():
    # 1024 plain disks over 10 years: P(loss) = 1 made the MTTDL a math domain error
    from zfslab.model.reliability.params import RiskParams
    mc = simulate(parse_layout("64xdisk"), RiskParams(disk_bytes=TB, afr=0.5), usable_bytes=TB,
                  rng=np.random.default_rng(1), trials=200)
    assert mc.p_loss[-1] == 1.0 and 0 < mc.mttdl_hours < float("inf")
