"""Engine A: exact continuous-time Markov chains of one top-level vdev.

States count failed disks not yet resilvered (dRAID adds the distributed spares in use); one
absorbing state is the loss of the vdev. Both answers are computed without subtracting
nearly equal numbers, so they keep their relative precision down to 1e-15 and below:
- MTTDL by GTH state reduction (every rate and time stays a sum of positive terms);
- P(loss within T) by uniformization: exp(QT) = exp(LT(P - I)) with P = I + Q/L >= 0, a
  Taylor series of non-negative terms for a small step, then repeated squaring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_DOUBLE_SQUARINGS = 24  # each squaring may double the rounding error: 2^24 x 1e-16 ~ 2e-9
# Multi-precision work (states^3 x squarings) beyond which a stiff chain takes the quasi-stationary
# law instead: a 17-state chain takes ~1 s in mpmath, a 255-way mirror's would take hours.
MP_WORK_LIMIT = 18**3 * 40
# The same for the double-precision series of a large chain (a wide dRAID with spares has 400
# states: 8 s per horizon), taken only when the horizon is this many times the fastest transition.
FLOAT_WORK_LIMIT = 2e9
STIFF_THETA = 1e4


@dataclass(frozen=True)
class Chain:
    """Transient states 0..m-1 (state 0 = all healthy) and one absorbing loss state.

    rates[i, j] is the rate from transient i to transient j (zero diagonal); loss[i] is the
    rate from i into loss. Rates are per hour.
    """

    rates: np.ndarray
    loss: np.ndarray
    labels: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.loss)


def birth_death(n: int, p: int, lam: float, mu: float, *, parallel: bool = True) -> Chain:
    """A vdev of n disks surviving p failures: failure (n-k)lam, repair k*mu (parallel) or mu."""
    if p < 0 or n <= p:
        raise ValueError(f"n(={n}) must exceed p(={p}) >= 0")
    rates = np.zeros((p + 1, p + 1))
    loss = np.zeros(p + 1)
    for k in range(p + 1):
        up = (n - k) * lam
        if k < p:
            rates[k, k + 1] = up
        else:
            loss[k] = up
        if k > 0:
            rates[k, k - 1] = k * mu if parallel else mu
    return Chain(rates, loss, tuple(f"{k} failed" for k in range(p + 1)))


def draid(children: int, p: int, spares: int, lam: float, mu_fast: float, mu_slow: float,
          mu_release: float, *, parallel: bool = True) -> Chain:
    """dRAID with distributed spares (docs/reliability.md#draid-chain): state (k failed unrebuilt, j spares in use).

    A failed child is rebuilt onto a free distributed spare at mu_fast (sequential, spread over
    all children), else healed onto a new disk at mu_slow; a used spare is freed when the dead
    disk is replaced and rebalanced, at mu_release each."""
    index = {(k, j): i for i, (k, j) in enumerate((k, j) for j in range(spares + 1) for k in range(p + 1))}
    m = len(index)
    rates = np.zeros((m, m))
    loss = np.zeros(m)
    for (k, j), i in index.items():
        alive = children - j - k
        if k < p:
            rates[i, index[(k + 1, j)]] += alive * lam
        else:
            loss[i] += alive * lam
        to_spare = min(k, spares - j)
        slow = k - to_spare
        if to_spare:
            rates[i, index[(k - 1, j + 1)]] += (to_spare if parallel else 1) * mu_fast
        if slow and (parallel or not to_spare):
            rates[i, index[(k - 1, j)]] += (slow if parallel else 1) * mu_slow
        if j:
            rates[i, index[(k, j - 1)]] += j * mu_release
    labels = tuple(f"{k} failed, {j} spares used" for (k, j) in index)
    return Chain(rates, loss, labels)


def mean_time_to_loss(chain: Chain) -> float:
    """Expected hours from state 0 to loss (GTH reduction: no subtraction anywhere)."""
    r = chain.rates.astype(float).copy()
    a = chain.loss.astype(float).copy()
    c = np.ones(chain.size)
    alive = list(range(chain.size))
    for m in range(chain.size - 1, 0, -1):  # eliminate every state but 0
        alive.remove(m)
        out_m = r[m, alive].sum() + a[m]
        if out_m == 0.0:
            return math.inf
        for i in alive:
            w = r[i, m] / out_m
            if w == 0.0:
                continue
            r[i, alive] += w * r[m, alive]
            r[i, i] = 0.0
            a[i] += w * a[m]
            c[i] += w * c[m]
            r[i, m] = 0.0
    return math.inf if a[0] == 0.0 else c[0] / a[0]


def loss_probability(chain: Chain, hours: float) -> float:
    """P(the chain, started healthy, reaches loss within `hours`)."""
    if hours <= 0:
        return 0.0
    m = chain.size
    q = np.zeros((m + 1, m + 1))
    q[:m, :m] = chain.rates
    q[:m, m] = chain.loss
    out = q.sum(axis=1)
    big = float(out.max())
    if big == 0.0:
        return 0.0
    step = np.eye(m + 1) + q / big  # the uniformized jump chain, off-diagonals exact
    np.fill_diagonal(step, 0.0)
    step[np.arange(m + 1), np.arange(m + 1)] = (big - out) / big  # stays = 1 - out/big, computed from rates
    theta = big * hours
    squarings = max(0, math.ceil(math.log2(theta / 0.5))) if theta > 0.5 else 0
    if theta > STIFF_THETA and (m + 1) ** 3 * (40 + m + squarings) > FLOAT_WORK_LIMIT:
        return _quasi_stationary(chain, hours)  # hundreds of states: seconds of matrix products
    if squarings > MAX_DOUBLE_SQUARINGS:  # a stiff chain (a very fast repair): carry more digits
        if (m + 1) ** 3 * squarings > MP_WORK_LIMIT:
            return _quasi_stationary(chain, hours)
        return _exp_entry_mp(step, theta, squarings, m)
    theta /= 2.0**squarings
    # exp(theta (P - I)) = e^-theta sum theta^k P^k / k!: every term >= 0
    term = np.eye(m + 1)
    total = term.copy()
    for k in range(1, 40 + m):
        term = term @ step * (theta / k)
        total += term
        if term.max() < 1e-300:
            break
    total *= math.exp(-theta)
    for _ in range(squarings):
        total = total @ total
    return float(min(total[0, m], 1.0))


def _quasi_stationary(chain: Chain, hours: float) -> float:
    """P(loss within hours) = 1 - exp(-hours / MTTDL): exact in the limit the stiff chains are in,
    where the horizon is millions of times the fastest transition (agrees to ~1e-8 with the
    multi-precision series on a 17-state chain)."""
    mttdl = mean_time_to_loss(chain)
    return 0.0 if mttdl == math.inf else float(min(-math.expm1(-hours / mttdl), 1.0))


def _exp_entry_mp(step: np.ndarray, theta: float, squarings: int, target: int) -> float:
    """The same computation with enough decimal digits to absorb the doubling of each squaring."""
    import mpmath  # deliberate lazy loading: a rare path, and 40 ms of every plan's start (issue 33)
    with mpmath.workdps(20 + int(squarings * 0.302) + 5):
        p = mpmath.matrix(step.tolist())
        t = mpmath.mpf(theta) / mpmath.mpf(2) ** squarings
        term = mpmath.eye(step.shape[0])
        total = term.copy()
        for k in range(1, 40 + step.shape[0]):
            term = term * p * (t / k)
            total += term
        total *= mpmath.exp(-t)
        for _ in range(squarings):
            total = total * total
        return float(min(total[0, target], 1))


def pool_loss_probability(per_vdev: list[tuple[float, int]]) -> float:
    """1 - prod (1 - P_v)^count, without losing tiny probabilities to 1 - x."""
    log_survive = sum(count * math.log1p(-min(p, 1.0)) if p < 1.0 else -math.inf for p, count in per_vdev)
    return -math.expm1(log_survive) if log_survive != -math.inf else 1.0
