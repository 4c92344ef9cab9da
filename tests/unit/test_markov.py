"""Engine A against exact and published reference values (docs/reliability.md#reference-checks)."""

import math

import mpmath as mp
import pytest

from zfslab.model.reliability.markov import birth_death, draid, loss_probability, mean_time_to_loss, pool_loss_probability

LAM, MU = 1e-6, 1 / 24
Y1, Y5 = 8760.0, 43800.0

R7A = [  # (n, p, parallel, MTTDL h, P(1 y), P(5 y)): exact chains in 60-digit mpmath, MTTF 1e6 h, MTTR 24 h
    (1, 0, True, 1.000000e6, 8.72174e-3, 4.28546e-2),
    (4, 0, True, 2.500000e5, 3.44332e-2, 1.60711e-1),
    (2, 1, True, 2.083483e10, 4.19298e-7, 2.10109e-6),
    (3, 2, False, 2.893796e14, 3.01058e-11, 1.51192e-10),
    (3, 2, True, 5.787523e14, 1.50738e-11, 7.56178e-11),
    (4, 3, False, 3.014444e18, 2.88212e-15, 1.45062e-14),
    (4, 3, True, 1.808637e19, 4.8191e-16, 2.41928e-15),
    (4, 1, True, 3.472806e9, 2.51554e-6, 1.26053e-5),
    (8, 1, True, 7.443155e8, 1.17369e-5, 5.88121e-5),
    (6, 2, False, 1.447107e13, 6.02029e-10, 3.02341e-9),
    (6, 2, True, 2.894074e13, 3.01444e-10, 1.51219e-9),
    (8, 2, False, 5.168734e12, 1.68552e-9, 8.46474e-9),
    (8, 2, True, 1.033672e13, 8.43982e-10, 4.23384e-9),
    (12, 2, True, 2.631545e12, 3.31516e-9, 1.66305e-8),
    (11, 3, False, 9.137748e15, 9.50781e-13, 4.78542e-12),
    (11, 3, True, 5.481947e16, 1.58995e-13, 7.98184e-13),
]


def _rel(a, b):
    return abs(a / b - 1)


@pytest.mark.parametrize("n,p,parallel,mttdl,p1,p5", R7A)
def test_r7a_exact_chain(n, p, parallel, mttdl, p1, p5):
    chain = birth_death(n, p, LAM, MU, parallel=parallel)
    # the reference is printed to 6-7 significant digits: that is the precision we can check
    assert _rel(mean_time_to_loss(chain), mttdl) < 5e-7
    assert _rel(loss_probability(chain, Y1), p1) < 5e-6
    assert _rel(loss_probability(chain, Y5), p5) < 5e-6


def test_r7a_pool_of_four_raidz2():
    p = loss_probability(birth_death(8, 2, LAM, MU), Y5)
    assert _rel(pool_loss_probability([(p, 4)]), 1.693536e-8) < 1e-6


@pytest.mark.parametrize("n,p,mtbf,mttr,parallel,mttdl,pv", [
    # high failure rates, T = 43,800 h: exact values given to 10 digits
    (2, 1, 10_000, 100, True, 515_000, 0.08137378999),
    (5, 1, 20_000, 200, True, 109_000, 0.3302314692),
    (6, 2, 10_000, 500, False, 56_166.66667, 0.5399753976),
    (6, 2, 10_000, 500, True, 99_500, 0.3537796712),
    (4, 1, 20_000, 200, True, 178_333.3333, 0.2171503067),
    (7, 3, 5_000, 500, False, 21_654.7619, 0.8750228035),
])
def test_r7b_high_rate_cases(n, p, mtbf, mttr, parallel, mttdl, pv):
    chain = birth_death(n, p, 1 / mtbf, 1 / mttr, parallel=parallel)
    assert _rel(mean_time_to_loss(chain), mttdl) < 1e-9
    assert _rel(loss_probability(chain, Y5), pv) < 1e-9


def test_r7b_c4_pool():
    pv = loss_probability(birth_death(4, 1, 1 / 20_000, 1 / 200), Y5)
    assert _rel(pool_loss_probability([(pv, 3)]), 0.5202277141) < 1e-9


@pytest.mark.parametrize("n", [2, 3, 8, 12, 24])
def test_r8_single_fault_closed_form(n):
    lam, mu = 1e-6, 1 / 24
    closed = ((2 * n - 1) * lam + mu) / (n * (n - 1) * lam**2)
    assert _rel(mean_time_to_loss(birth_death(n, 1, lam, mu)), closed) < 1e-12


def test_r4_patterson_raid5_leading_order():
    # MTTF^2 / ((G+C)(G+C-1) MTTR) per group, 10 groups: 818,181.8 h
    lam, mu = 1 / 30_000, 1 / 1
    group = mean_time_to_loss(birth_death(11, 1, lam, mu))
    assert _rel(group / 10, 818_181.8) < 1e-3  # the exact chain adds the (2n-1) lam term


def test_r3_rdp_double_failure_rate():
    # RDP (FAST'04): 10 disks, lambda 1/500,000 h, rebuild 10 x 240 GB at 100 MB/s gives
    # n(n-1)/2 lambda^2 t_r = 1.2e-9 per hour; the chain counts the ordered sequence
    # (any first failure, then any of the n-1 others), twice that.
    chain = birth_death(10, 1, 1 / 500_000, 1 / (10 * 240e9 / 100e6 / 3600))
    assert 1 / mean_time_to_loss(chain) == pytest.approx(2 * 1.2e-9, rel=0.01)


def test_precision_matches_60_digit_arithmetic_at_1e_19():
    mp.mp.dps = 60
    n, p, T = 5, 4, 87_600

    def exact(parallel):
        up = [(n - k) * mp.mpf(1) / 10**6 for k in range(p + 1)]
        dn = [mp.mpf(0)] + [(k if parallel else 1) * mp.mpf(1) / 24 for k in range(1, p + 1)]
        q = mp.zeros(p + 2, p + 2)
        for k in range(p + 1):
            q[k, k] = -(up[k] + dn[k])
            q[k, k + 1] = up[k]
            if k:
                q[k, k - 1] = dn[k]
        return float(mp.expm(q * T)[0, p + 1])

    for parallel in (True, False):
        got = loss_probability(birth_death(n, p, 1e-6, 1 / 24, parallel=parallel), T)
        assert _rel(got, exact(parallel)) < 1e-9


def test_draid_without_spares_is_the_raidz_chain():
    lam, mu = 2e-6, 1 / 60
    a = draid(24, 2, 0, lam, 1 / 5, mu, mu)
    b = birth_death(24, 2, lam, mu)
    assert _rel(mean_time_to_loss(a), mean_time_to_loss(b)) < 1e-12
    assert _rel(loss_probability(a, Y5), loss_probability(b, Y5)) < 1e-9


def test_distributed_spares_lower_the_risk():
    lam, slow, fast = 2e-6, 1 / 100, 1 / 5
    none = loss_probability(draid(24, 2, 0, lam, fast, slow, slow), Y5)
    one = loss_probability(draid(24, 2, 1, lam, fast, slow, slow), Y5)
    assert one < none / 5


def test_r12_mtbf_and_afr():
    assert 8760 / 1_000_000 == pytest.approx(0.00876)  # AFR ~ 0.88 %
    assert 20_000 * 8760 / 500_000 == pytest.approx(350.4)


def test_r5_ure_formulas():
    assert -math.expm1(-3e12 * 8 * 1e-14) == pytest.approx(0.213372, abs=5e-7)
    assert (1 - 1 / 24_414_062_500) ** (3 * 3_907_029_168) == pytest.approx(0.618724054, abs=5e-9)


def _mp_loss(chain, hours):
    """P(loss within hours) from mpmath's expm at 50 digits: the judge of the float paths."""
    mp.mp.dps = 50
    m = chain.size
    q = mp.zeros(m + 1, m + 1)
    for i in range(m):
        for j in range(m):
            q[i, j] = mp.mpf(chain.rates[i][j])
        q[i, m] = mp.mpf(chain.loss[i])
        q[i, i] = -(sum(mp.mpf(x) for x in chain.rates[i]) + mp.mpf(chain.loss[i]))
    return float(mp.expm(q * hours, method="taylor")[0, m])


@pytest.mark.parametrize("chain", [birth_death(8, 2, 1e-6, 1 / 30), birth_death(4, 3, 3e-6, 1 / 50, parallel=False),
                                   draid(30, 2, 3, 7.4e-7, 7.15, 0.715, 0.715)])
def test_longer_horizons_taken_as_powers_of_a_shorter_one_keep_the_precision(chain):
    """5 and 10 years are exp(Q 1y)^5 and ^10 (loss_probabilities): as exact as a series of their own."""
    from zfslab.model.reliability.markov import loss_probabilities
    together = loss_probabilities(chain, (Y1, Y5, 2 * Y5))
    for hours, got in zip((Y1, Y5, 2 * Y5), together):
        assert _rel(got, _mp_loss(chain, hours)) < 2e-9
        assert _rel(got, loss_probability(chain, hours)) < 2e-9  # the horizon alone: its own series


def test_a_chain_past_the_plain_python_size_takes_numpy_with_the_same_answer(monkeypatch):
    """Chains past PLAIN_STATES load numpy for their products; both paths compute one series."""
    from zfslab.model.reliability import markov
    chain = draid(24, 2, 2, 2e-6, 1 / 5, 1 / 60, 1 / 60)  # 9 states
    plain = (loss_probability(chain, Y5), mean_time_to_loss(chain))
    monkeypatch.setattr(markov, "PLAIN_STATES", 4)
    assert _rel(loss_probability(chain, Y5), plain[0]) < 1e-12
    assert _rel(mean_time_to_loss(chain), plain[1]) < 1e-12
    assert _rel(plain[0], _mp_loss(chain, Y5)) < 1e-9


def test_a_chain_started_degraded_is_judged_from_its_state():
    """loss_probabilities(start=k): a raidz2 of 8 with one disk down is where the healthy one goes
    after its first failure; the figure is exp(QT)'s row k, checked against 50 digits."""
    from zfslab.model.reliability.markov import loss_probabilities
    chain = birth_death(8, 2, 1e-6, 1 / 30)
    healthy, one_down, two_down = (loss_probabilities(chain, (Y1, Y5), start=k) for k in range(3))
    assert healthy[0] < one_down[0] < two_down[0]
    mp.mp.dps = 50
    q = mp.zeros(4, 4)
    for i in range(3):
        for j in range(3):
            q[i, j] = mp.mpf(chain.rates[i][j])
        q[i, 3] = mp.mpf(chain.loss[i])
        q[i, i] = -(sum(mp.mpf(x) for x in chain.rates[i]) + mp.mpf(chain.loss[i]))
    for k, got in ((1, one_down), (2, two_down)):
        for hours, p in zip((Y1, Y5), got):
            assert _rel(p, float(mp.expm(q * hours, method="taylor")[k, 3])) < 2e-9
    with pytest.raises(ValueError):
        loss_probabilities(chain, (Y1,), start=3)


# --- rates that step through time: piecewise_loss_probabilities (docs/reliability.md#disk-age) ---

def test_a_single_disk_whose_rate_steps_is_lost_by_its_cumulative_hazard():
    """A disk without redundancy: P(loss within T) = 1 - exp(-sum of rate x time), the closed form."""
    from zfslab.model.reliability.markov import piecewise_loss_probabilities
    stretches = [(2e-6, 3000.0), (1.6e-6, 5000.0), (3.4e-6, 20000.0)]
    got = piecewise_loss_probabilities([(birth_death(1, 0, lam, 0.1), h) for lam, h in stretches])
    hazard = 0.0
    for (lam, h), p in zip(stretches, got):
        hazard += lam * h
        assert p == pytest.approx(-math.expm1(-hazard), rel=1e-12)


def test_a_degraded_start_is_carried_across_the_stretches_as_one_chain_would_be():
    """The same rates in every stretch: the answer is the one chain's, from the same start state."""
    from zfslab.model.reliability.markov import loss_probabilities, piecewise_loss_probabilities
    chain = birth_death(6, 2, 1e-5, 0.05)
    pieces = piecewise_loss_probabilities([(chain, 8760.0)] * 5, start=1)
    assert pieces[0] == pytest.approx(loss_probabilities(chain, [8760.0], start=1)[0], rel=1e-9)
    assert pieces[4] == pytest.approx(loss_probabilities(chain, [5 * 8760.0], start=1)[0], rel=1e-9)


def _simulated_mirror_loss(rates, mu, horizon, trials, rng):
    """Monte Carlo of a 2-way mirror whose disks fail at rates[i] = (until, rate) stretch by stretch, each
    failed side repaired at mu: the fraction of trials lost (both sides down) within the horizon."""
    import numpy as np
    t = np.zeros(trials)
    down = np.zeros(trials, dtype=int)
    lost = np.zeros(trials, dtype=bool)
    active = np.ones(trials, dtype=bool)
    ends = np.array([until for until, _ in rates])
    lams = np.array([lam for _, lam in rates])
    while active.any():
        i = np.flatnonzero(active)
        seg = np.searchsorted(ends, t[i], side="right")
        lam = lams[seg]
        out = np.where(down[i] == 0, 2 * lam, lam + mu)
        step = rng.exponential(1 / out)
        crosses = t[i] + step >= ends[seg]     # past the stretch's end: start again there (memoryless)
        t[i] = np.where(crosses, ends[seg], t[i] + step)
        happen = i[~crosses]
        fail = rng.random(happen.size) < np.where(down[happen] == 0, 1.0, lam[~crosses] / (lam[~crosses] + mu))
        lost[happen[(down[happen] == 1) & fail]] = True
        down[happen] = np.where(fail, down[happen] + 1, down[happen] - 1)
        active = ~lost & (t < horizon)
    return lost.mean()


def test_a_mirror_whose_disks_age_through_two_bands_agrees_with_a_simulation_of_its_lifetimes():
    """Both disks on the same piecewise hazard (0.5 a year, then 2 a year from 0.3 years), a side
    repaired in 0.05 years on average: the chain stepped stretch by stretch is the exact law, so a
    seeded simulation of 40,000 mirrors lands within 4 standard errors of it."""
    import numpy as np
    from zfslab.model.reliability.markov import piecewise_loss_probabilities
    mu = 20.0
    stretches = [(0.3, 0.5), (1.0, 2.0)]
    exact = piecewise_loss_probabilities([(birth_death(2, 1, 0.5, mu), 0.3), (birth_death(2, 1, 2.0, mu), 0.7)])[-1]
    trials = 40_000
    seen = _simulated_mirror_loss(stretches, mu, 1.0, trials, np.random.default_rng(34))
    error = math.sqrt(exact * (1 - exact) / trials)
    assert abs(seen - exact) < 4 * error
    # the time-mean rate as one constant would be off by far more than that
    one_rate = loss_probability(birth_death(2, 1, 0.3 * 0.5 + 0.7 * 2.0, mu), 1.0)
    assert abs(one_rate - exact) > 8 * error
