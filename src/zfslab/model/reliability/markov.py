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
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul

MAX_DOUBLE_SQUARINGS = 24  # each squaring may double the rounding error: 2^24 x 1e-16 ~ 2e-9
# Multi-precision work (states^3 x squarings) beyond which a stiff chain takes the quasi-stationary
# law instead: a 17-state chain takes ~1 s in mpmath, a 255-way mirror's would take hours.
MP_WORK_LIMIT = 18**3 * 40
# The same for the double-precision series of a large chain (a wide dRAID with spares has 400
# states: 8 s per horizon), taken only when the horizon is this many times the fastest transition.
FLOAT_WORK_LIMIT = 2e9
STIFF_THETA = 1e4
# Chains up to this many transient states are computed in plain Python: every raidz and mirror
# up to 16-way, and dRAID with few spares. numpy's import alone costs more CPU than all of a
# plan's chains (issue 33); larger chains load it (a 400-state dRAID needs its matrix products).
PLAIN_STATES = 16

Matrix = list[list[float]]


@dataclass(frozen=True)
class Chain:
    """Transient states 0..m-1 (state 0 = all healthy) and one absorbing loss state.

    rates[i][j] is the rate from transient i to transient j (zero diagonal); loss[i] is the
    rate from i into loss. Rates are per hour.
    """

    rates: tuple[tuple[float, ...], ...]
    loss: tuple[float, ...]
    labels: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.loss)


def _frozen(rates: Matrix, loss: list[float], labels: tuple[str, ...]) -> Chain:
    return Chain(tuple(map(tuple, rates)), tuple(loss), labels)


def birth_death(n: int, p: int, lam: float, mu: float, *, parallel: bool = True,
                frailty_variance: float = 0.0) -> Chain:
    """A vdev of n disks surviving p failures: failure (n-k)lam, repair k*mu (parallel) or mu.

    `frailty_variance` v > 0: the disks share one batch's frailty (docs/reliability.md#disks-of-one-batch),
    so with k failed the survivors' rate is lam(1 + k v), the gamma frailty's mean given k failures."""
    if p < 0 or n <= p:
        raise ValueError(f"n(={n}) must exceed p(={p}) >= 0")
    if not 0 <= frailty_variance < math.inf:
        raise ValueError(f"frailty_variance(={frailty_variance}) must be 0 or more")
    rates = [[0.0] * (p + 1) for _ in range(p + 1)]
    loss = [0.0] * (p + 1)
    for k in range(p + 1):
        up = (n - k) * lam * (1 + k * frailty_variance)
        if k < p:
            rates[k][k + 1] = up
        else:
            loss[k] = up
        if k > 0:
            rates[k][k - 1] = k * mu if parallel else mu
    return _frozen(rates, loss, tuple(f"{k} failed" for k in range(p + 1)))


def draid(children: int, p: int, spares: int, lam: float, mu_fast: float, mu_slow: float,
          mu_release: float, *, parallel: bool = True) -> Chain:
    """dRAID with distributed spares (docs/reliability.md#draid-chain): state (k failed unrebuilt, j spares in use).

    A failed child is rebuilt onto a free distributed spare at mu_fast (sequential, spread over
    all children), else healed onto a new disk at mu_slow; a used spare is freed when the dead
    disk is replaced and rebalanced, at mu_release each."""
    index = {(k, j): i for i, (k, j) in enumerate((k, j) for j in range(spares + 1) for k in range(p + 1))}
    m = len(index)
    rates = [[0.0] * m for _ in range(m)]
    loss = [0.0] * m
    for (k, j), i in index.items():
        alive = children - j - k
        if k < p:
            rates[i][index[(k + 1, j)]] += alive * lam
        else:
            loss[i] += alive * lam
        to_spare = min(k, spares - j)
        slow = k - to_spare
        if to_spare:
            rates[i][index[(k - 1, j + 1)]] += (to_spare if parallel else 1) * mu_fast
        if slow and (parallel or not to_spare):
            rates[i][index[(k - 1, j)]] += (slow if parallel else 1) * mu_slow
        if j:
            rates[i][index[(k, j - 1)]] += j * mu_release
    labels = tuple(f"{k} failed, {j} spares used" for (k, j) in index)
    return _frozen(rates, loss, labels)


def mean_time_to_loss(chain: Chain) -> float:
    """Expected hours from state 0 to loss (GTH reduction: no subtraction anywhere)."""
    if chain.size > PLAIN_STATES:
        return _numpy_mean_time_to_loss(chain)
    r = [list(row) for row in chain.rates]
    a = list(chain.loss)
    c = [1.0] * chain.size
    alive = list(range(chain.size))
    for m in range(chain.size - 1, 0, -1):  # eliminate every state but 0
        alive.remove(m)
        row_m = r[m]
        out_m = sum(row_m[j] for j in alive) + a[m]
        if out_m == 0.0:
            return math.inf
        for i in alive:
            row_i = r[i]
            w = row_i[m] / out_m
            if w == 0.0:
                continue
            for j in alive:
                row_i[j] += w * row_m[j]
            row_i[i] = 0.0
            a[i] += w * a[m]
            c[i] += w * c[m]
            row_i[m] = 0.0
    return math.inf if a[0] == 0.0 else c[0] / a[0]


def _numpy_mean_time_to_loss(chain: Chain) -> float:
    """mean_time_to_loss for a large chain, the same reduction on numpy rows."""
    import numpy as np  # deliberate lazy loading: only chains past PLAIN_STATES need it (issue 33)
    r = np.array(chain.rates, dtype=float)
    a = np.array(chain.loss, dtype=float)
    c = np.ones(chain.size)
    alive = list(range(chain.size))
    for m in range(chain.size - 1, 0, -1):
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
    return loss_probabilities(chain, (hours,))[0]


def loss_probabilities(chain: Chain, hours: Sequence[float], *, start: int = 0) -> list[float]:
    """loss_probability at each horizon, from transient state `start` (0: healthy; a degraded vdev
    starts where it is). A horizon a whole multiple of a shorter one (5 and 10 years of 1) takes the
    shorter one's exponential to that power, exp(QrT) = exp(QT)^r: a few more products of
    non-negative matrices instead of a series of its own. Past the work limits (the
    quasi-stationary law) the start state is not told apart: state 0's figure is given."""
    m = chain.size
    if not 0 <= start < m:
        raise ValueError(f"start state {start} is not one of the chain's {m} transient states")
    out = [sum(row) + a for row, a in zip(chain.rates, chain.loss)]
    big = max(out, default=0.0)
    answers: dict[float, float] = {}
    done: dict[float, Exponential] = {}  # horizon -> exp(Q horizon), plain-Python chains only
    for h in sorted(set(hours)):  # shortest first: a longer horizon may be a power of a shorter one
        if h <= 0 or big == 0.0:
            answers[h] = 0.0
            continue
        theta = big * h
        squarings = max(0, math.ceil(math.log2(theta / 0.5))) if theta > 0.5 else 0
        if (theta > STIFF_THETA and (m + 1) ** 3 * (40 + m + squarings) > FLOAT_WORK_LIMIT) or \
                (squarings > MAX_DOUBLE_SQUARINGS and (m + 1) ** 3 * squarings > MP_WORK_LIMIT):
            answers[h] = _quasi_stationary(chain, h)  # hundreds of states, or stiff past what mpmath can do
        elif squarings > MAX_DOUBLE_SQUARINGS:  # a stiff chain (a very fast repair): carry more digits
            answers[h] = _exp_entry_mp(_full_step(chain, big, out), theta, squarings, m, start)
        elif m > PLAIN_STATES:
            answers[h] = _numpy_loss_probability(_full_step(chain, big, out), theta, squarings, m, start)
        else:
            done[h] = _from_shorter(h, done) or _plain_exponential(chain, big, out, theta, squarings)
            answers[h] = min(done[h].f[start], 1.0)
    return [answers[h] for h in hours]


@dataclass(frozen=True)
class Exponential:
    """exp(Q t) of a chain whose last state absorbs: [[e, f], [0, g]] (e over the transient states,
    f the loss column, g the loss state's own entry)."""

    e: Matrix
    f: list[float]
    g: float

    def times(self, other: Exponential) -> Exponential:
        """[[E1, f1], [0, g1]] x [[E2, f2], [0, g2]] = [[E1 E2, E1 f2 + f1 g2], [0, g1 g2]]."""
        cols = list(zip(*other.e))
        return Exponential([[sum(map(mul, row, col)) for col in cols] for row in self.e],
                           [sum(map(mul, row, other.f)) + x * other.g for row, x in zip(self.e, self.f)],
                           self.g * other.g)

    def power(self, r: int) -> Exponential:
        """self^r by squaring (r >= 1)."""
        result, base = None, self
        while True:
            if r & 1:
                result = base if result is None else result.times(base)
            r >>= 1
            if not r:
                return result
            base = base.times(base)


# A power costs about 2 log2(r) products, a series of its own about 30 plus its squarings.
MAX_POWER = 64


def _from_shorter(hours: float, done: dict[float, Exponential]) -> Exponential | None:
    """exp(Q hours) as a power of a shorter horizon's, when hours is a whole multiple of it."""
    for shorter in sorted(done, reverse=True):
        r = round(hours / shorter)
        if 2 <= r <= MAX_POWER and r * shorter == hours:
            return done[shorter].power(r)
    return None


def _full_step(chain: Chain, big: float, out: list[float]) -> Matrix:
    """The uniformized jump chain with the loss state last: off-diagonals exact, and each stay
    (1 - out/big) computed from the rates, never by subtracting from 1."""
    m = chain.size
    step = [[r / big for r in row] + [a / big] for row, a in zip(chain.rates, chain.loss)]
    for i in range(m):
        step[i][i] = (big - out[i]) / big
    step.append([0.0] * m + [1.0])
    return step


def _plain_exponential(chain: Chain, big: float, out: list[float], theta: float, squarings: int) -> Exponential:
    """exp(theta (P - I)) = e^-theta sum theta^k P^k / k! (every term >= 0), for a small step,
    then repeated squaring. P = [[B, b], [0, 1]] (the loss state absorbs), so every power is
    [[B^k, f_k], [0, 1]] and only B's products and the loss column f are carried. B is sparse
    (a birth-death chain's is tridiagonal): each term's product visits its non-zeros only. The
    series stops when what is left of it is below 2^-60 of every entry."""
    m = chain.size
    small = theta / 2.0**squarings
    step = _full_step(chain, big, out)
    b_col = [row[m] for row in step[:m]]
    b_cols = [[(i, step[i][j]) for i in range(m) if step[i][j]] for j in range(m)]  # column j's non-zeros
    term = [[1.0 if i == j else 0.0 for j in range(m)] for i in range(m)]
    t_col = [0.0] * m
    t_loss = 1.0
    e = [row[:] for row in term]
    f = [0.0] * m
    g = 1.0
    floor = 0.0  # 2^-60 of the smallest entry once every entry that will be positive is (k = m)
    for k in range(1, 40 + m):
        scale = small / k
        t_col = [(sum(map(mul, row, b_col)) + tc) * scale for row, tc in zip(term, t_col)]
        term = [[sum([row[i] * x for i, x in col]) * scale for col in b_cols] for row in term]
        t_loss *= scale
        for e_row, t_row in zip(e, term):
            for j in range(m):
                e_row[j] += t_row[j]
        f = [a + b for a, b in zip(f, t_col)]
        g += t_loss
        if k == m:
            floor = _smallest_positive(e, f) * 2.0**-60
        # the terms after the k-th add at most the Poisson tail to any entry (entries of P^j are at
        # most 1, P being stochastic), and entries only grow: below the floor, no entry changes
        if k >= m and t_loss * small / (k + 1) / (1 - small / (k + 2)) <= floor:
            break
    shrink = math.exp(-small)
    result = Exponential([[x * shrink for x in row] for row in e], [x * shrink for x in f], g * shrink)
    for _ in range(squarings):
        result = result.times(result)
    return result


def _smallest_positive(e: Matrix, f: list[float]) -> float:
    return min((x for x in (*(x for row in e for x in row), *f) if x > 0.0), default=1.0)


def _numpy_loss_probability(step: Matrix, theta: float, squarings: int, m: int, start: int = 0) -> float:
    """The same series and squarings on numpy matrices, for chains past PLAIN_STATES."""
    import numpy as np  # deliberate lazy loading: only chains past PLAIN_STATES need it (issue 33)
    p = np.array(step)
    theta /= 2.0**squarings
    term = np.eye(m + 1)
    total = term.copy()
    for k in range(1, 40 + m):
        term = term @ p * (theta / k)
        total += term
        if term.max() < 1e-300:
            break
    total *= math.exp(-theta)
    for _ in range(squarings):
        total = total @ total
    return float(min(total[start, m], 1.0))


def _quasi_stationary(chain: Chain, hours: float) -> float:
    """P(loss within hours) = 1 - exp(-hours / MTTDL): exact in the limit the stiff chains are in,
    where the horizon is millions of times the fastest transition (agrees to ~1e-8 with the
    multi-precision series on a 17-state chain)."""
    mttdl = mean_time_to_loss(chain)
    return 0.0 if mttdl == math.inf else float(min(-math.expm1(-hours / mttdl), 1.0))


def _exp_entry_mp(step: Matrix, theta: float, squarings: int, target: int, start: int = 0) -> float:
    """The same computation with enough decimal digits to absorb the doubling of each squaring."""
    return min(_exp_mp(step, theta, squarings)[start][target], 1.0)


def _exp_mp(step: Matrix, theta: float, squarings: int) -> Matrix:
    """exp(theta (P - I)) computed in mpmath, each entry rounded to a float at the end (each keeps
    its relative precision: the caller only multiplies and adds non-negative numbers after)."""
    import mpmath  # deliberate lazy loading: a rare path, and 40 ms of every plan's start (issue 33)
    with mpmath.workdps(20 + int(squarings * 0.302) + 5):
        p = mpmath.matrix(step)
        t = mpmath.mpf(theta) / mpmath.mpf(2) ** squarings
        term = mpmath.eye(len(step))
        total = term.copy()
        for k in range(1, 40 + len(step)):
            term = term * p * (t / k)
            total += term
        total *= mpmath.exp(-t)
        for _ in range(squarings):
            total = total * total
        return [[float(total[i, j]) for j in range(len(step))] for i in range(len(step))]


def exponential(chain: Chain, hours: float) -> Exponential | None:
    """exp(Q hours) of a chain of up to PLAIN_STATES transient states, whole (every start state's
    row and the loss column), for a caller that carries a state distribution from one stretch of
    time to the next; None for a chain loss_probabilities takes another path for (numpy, or the
    quasi-stationary law), where no such matrix is formed."""
    m = chain.size
    out = [sum(row) + a for row, a in zip(chain.rates, chain.loss)]
    big = max(out, default=0.0)
    if hours <= 0 or big == 0.0:
        return Exponential([[float(i == j) for j in range(m)] for i in range(m)], [0.0] * m, 1.0)
    theta = big * hours
    squarings = max(0, math.ceil(math.log2(theta / 0.5))) if theta > 0.5 else 0
    if m > PLAIN_STATES or (squarings > MAX_DOUBLE_SQUARINGS and (m + 1) ** 3 * squarings > MP_WORK_LIMIT):
        return None
    if squarings > MAX_DOUBLE_SQUARINGS:
        full = _exp_mp(_full_step(chain, big, out), theta, squarings)
        return Exponential([row[:m] for row in full[:m]], [row[m] for row in full[:m]], full[m][m])
    return _plain_exponential(chain, big, out, theta, squarings)


def piecewise_loss_probabilities(segments: Sequence[tuple[Chain, float]], *, start: int = 0) -> list[float] | None:
    """P(loss) by the end of each of `segments` run one after the other, each a chain (the same
    states, its own rates) for so many hours: the rates that step through time (a disk's age band,
    a flagged disk's first 60 days) as constant stretches. The state distribution at the end of one
    stretch is the start of the next: d <- d E, loss <- loss + d f (all terms non-negative, so tiny
    figures keep their precision). None when a chain is past exponential()'s reach."""
    if not segments:
        return []
    m = segments[0][0].size
    if not 0 <= start < m:
        raise ValueError(f"start state {start} is not one of the chain's {m} transient states")
    dist = [float(i == start) for i in range(m)]
    lost = 0.0
    answers = []
    for chain, hours in segments:
        if chain.size != m:
            raise ValueError(f"a segment's chain has {chain.size} states, the first's {m}")
        e = exponential(chain, hours)
        if e is None:
            return None
        lost = lost * e.g + sum(map(mul, dist, e.f))
        dist = [sum(d * row[j] for d, row in zip(dist, e.e)) for j in range(m)]
        answers.append(min(lost, 1.0))
    return answers


def pool_loss_probability(per_vdev: list[tuple[float, int]]) -> float:
    """1 - prod (1 - P_v)^count, without losing tiny probabilities to 1 - x."""
    log_survive = sum(count * math.log1p(-min(p, 1.0)) if p < 1.0 else -math.inf for p, count in per_vdev)
    return -math.expm1(log_survive) if log_survive != -math.inf else 1.0
