"""Engine B: Monte Carlo discrete-event simulation of each top-level vdev over the mission.

What it adds to the chains: lifetimes that age (Weibull, an age -> AFR table), fixed repair
times made of the replacement delay (skipped when a hot or distributed spare is free) and a
resilver of the allocated bytes, latent sector errors cleared by scrubs, read errors during
critical resilvers, and batch-correlated failures (a gamma frailty shared by a vdev's disks).

Rare events: in a degraded vdev the survivors' hazard is scaled by theta (balanced failure
biasing, docs/reliability.md#failure-biasing) and each path carries its likelihood ratio, so raidz3 and
3-way mirrors reach a target relative error in seconds. Randomness comes only from the
generator passed in.

Vdevs are simulated independently (a pool's vdevs share no disks); shared hot spares enter
through the probability that one is free (the spare-stock chain of engine A).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from zfslab.errors import ParamError
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.reliability.params import HOURS_PER_YEAR, RiskParams
from zfslab.model.reliability.risk import (MTTDL_CAVEAT, RiskResult, _spare_availability, _surviving_read_bytes,
                                          _survivors_read, field_hits)


@dataclass(frozen=True, slots=True)
class Lifetime:
    """A disk's hazard: 'exponential' (rate), 'weibull' (shape, scale) or 'table' (AFR per year of age)."""

    kind: str
    rate_per_hour: float = 0.0
    shape: float = 1.0
    scale_hours: float = 1.0
    afr_by_year: tuple[float, ...] = ()

    @staticmethod
    def exponential(rate_per_hour: float) -> "Lifetime":
        return Lifetime("exponential", rate_per_hour=rate_per_hour)

    @staticmethod
    def weibull_from_afr(first_year_afr: float, shape: float) -> "Lifetime":
        """Weibull whose first year has this AFR: eta = 8760 / (-ln(1-a))^(1/beta) (docs/reliability.md#lifetimes)."""
        if shape <= 0:
            raise ParamError("weibull_shape", f"{shape:g}", "must be more than 0 (1 = constant rate)")
        return Lifetime("weibull", shape=shape, scale_hours=HOURS_PER_YEAR / (-math.log1p(-first_year_afr)) ** (1 / shape))

    @staticmethod
    def table(afr_by_year: tuple[float, ...]) -> "Lifetime":
        if not afr_by_year or any(not 0 < a < 1 for a in afr_by_year):
            raise ParamError("afr_by_age", ",".join(f"{100 * a:g}" for a in afr_by_year),
                             "give percentages above 0 and below 100, one per year of age, e.g. 1.3,1.5,2.1")
        return Lifetime("table", afr_by_year=tuple(afr_by_year))

    def _table_rates(self) -> list[float]:
        return [-math.log1p(-a) / HOURS_PER_YEAR for a in self.afr_by_year]

    def cumulative(self, age: float) -> float:
        """H(age) = integral of the hazard from 0 to age (hours)."""
        if self.kind == "exponential":
            return self.rate_per_hour * age
        if self.kind == "weibull":
            return (age / self.scale_hours) ** self.shape
        rates = self._table_rates()
        full = min(int(age // HOURS_PER_YEAR), len(rates) - 1)
        done = sum(rates[:full]) * HOURS_PER_YEAR
        return done + rates[full] * (age - full * HOURS_PER_YEAR)

    def inverse(self, target: float) -> float:
        """The age at which H reaches target."""
        if self.kind == "exponential":
            return target / self.rate_per_hour
        if self.kind == "weibull":
            return self.scale_hours * target ** (1 / self.shape)
        rates = self._table_rates()
        acc = 0.0
        for year, r in enumerate(rates):
            span = r * HOURS_PER_YEAR
            if year == len(rates) - 1 or acc + span >= target:
                return year * HOURS_PER_YEAR + (target - acc) / r
            acc += span
        raise AssertionError("unreachable")

    def mean_rate(self, hours: float) -> float:
        """Average hazard of a new disk over its first `hours`."""
        return self.cumulative(hours) / hours


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    stderr: float

    @property
    def ci95(self) -> tuple[float, float]:
        return max(self.value - 1.96 * self.stderr, 0.0), self.value + 1.96 * self.stderr

    @property
    def relative_error(self) -> float:
        """Half-width of the 95 % interval over the value."""
        return 1.96 * self.stderr / self.value if self.value > 0 else math.inf


@dataclass
class _Tally:
    """Weighted sums over trials for one vdev shape: sums and sums of squares per horizon."""

    horizons: tuple[float, ...]
    trials: int = 0

    def __post_init__(self) -> None:
        k = len(self.horizons)
        self.loss = np.zeros(k)
        self.loss2 = np.zeros(k)
        self.damage = np.zeros(k)
        self.damage2 = np.zeros(k)
        self.blocks = np.zeros(k)
        self.blocks2 = np.zeros(k)
        self.loss_events = 0

    def add(self, loss_time: float, loss_w: float, damage_time: float, damage_w: float,
            blocks: list[tuple[float, float]]) -> None:
        self.trials += 1
        for i, h in enumerate(self.horizons):
            x = loss_w if loss_time <= h else 0.0
            self.loss[i] += x
            self.loss2[i] += x * x
            d = damage_w if damage_time <= h else 0.0
            self.damage[i] += d
            self.damage2[i] += d * d
            b = sum(w * count for t, w, count in blocks if t <= h)
            self.blocks[i] += b
            self.blocks2[i] += b * b
        if loss_time <= self.horizons[-1]:
            self.loss_events += 1

    def estimate(self, total: np.ndarray, squares: np.ndarray, i: int) -> Estimate:
        n = self.trials
        mean = total[i] / n
        var = max(squares[i] / n - mean * mean, 0.0)
        return Estimate(mean, math.sqrt(var / max(n - 1, 1)))


class _VdevSimulator:
    """Simulates one vdev of a group over [0, T]."""

    def __init__(self, group: VdevGroup, layout: Layout, params: RiskParams, life: Lifetime,
                 rng: np.random.Generator, *, classic: bool, exponential_repair: bool,
                 batch_variance: float, bias: bool) -> None:
        self.g, self.params, self.life, self.rng = group, params, life, rng
        self.classic = classic
        self.exponential_repair = exponential_repair
        self.batch_variance = batch_variance
        self.n, self.p = group.width, group.parity
        fill = 1.0 if classic else params.fill
        mirror = group.kind is VdevKind.MIRROR
        heal = params.with_(fill=fill).resilver_hours(mirror)
        self.slow_hours = params.replace_hours + heal
        if group.kind is VdevKind.DRAID:
            speedup = group.width / (group.draid_data + group.parity)
            self.fast_hours = params.detect_hours + params.with_(fill=fill).resilver_hours(False, speedup)
            self.spares = group.draid_spares
            self.spare_free_p = 0.0
        else:
            self.fast_hours = params.detect_hours + heal
            self.spares = 0
            self.spare_free_p = _spare_availability(layout, params.failure_rate_per_hour, params.replace_hours)
        self.release_hours = params.replace_hours + heal  # a used distributed spare comes back
        bits = _surviving_read_bytes(group, params, fill) * 8
        self.read_errors = 0.0 if params.field else bits * params.ber_per_bit
        # field model: latent-error episodes per hour since the last scrub on what a critical resilver reads
        self.field_rate = (field_hits(_survivors_read(group), params, fill, 1.0)[0] if params.field else 0.0)
        # ... by the disks' age, as the chain takes it: the pool's age (docs/reliability.md#by-age)
        self.field_by_age = tuple((start * HOURS_PER_YEAR, field_hits(_survivors_read(group), params, fill, 1.0, rate)[0])
                                  for start, rate in params.lse_by_age().bands) if params.field else ()
        self.scrub_hours = params.scrub_days * 24
        lam = life.mean_rate(max(params.years) * HOURS_PER_YEAR)
        repair = self.fast_hours if (self.spares or self.spare_free_p > 0.5) else self.slow_hours
        # balanced failure biasing: in a degraded state a failure before the repair is as likely as not
        self.theta = max(1.0, math.log(2) / ((self.n - 1) * lam * repair)) if bias and self.p > 0 else 1.0

    def _repair_time(self, hours: float) -> float:
        return self.rng.exponential(hours) if self.exponential_repair else hours

    def _residual(self, age: float, frailty: float, theta: float) -> float:
        """Time to the next failure of a disk of this age, under hazard theta * frailty * h."""
        e = self.rng.exponential()
        return self.life.inverse(self.life.cumulative(age) + e / (theta * frailty)) - age

    def trial(self, horizon: float):
        """One mission: (loss time, its weight, first damage time, its weight, [(time, weight, bad blocks)])."""
        n, p, rng = self.n, self.p, self.rng
        frailty = rng.gamma(1 / self.batch_variance, self.batch_variance) if self.batch_variance > 0 else 1.0
        installed = [0.0] * n  # time each slot's current disk went in
        failed: dict[int, float] = {}  # slot -> time its repair completes
        absent: set[int] = set()  # dead disks whose data a distributed spare holds: neither failed nor alive
        spares_free = self.spares
        releases: dict[int, float] = {}  # slot -> when its new disk is in and the distributed spare is free
        waiting: list[int] = []  # failed slots waiting for a new disk (no spare was free)
        log_w = 0.0
        theta = 1.0
        t = 0.0
        next_fail = [self._residual(0.0, frailty, 1.0) for _ in range(n)]
        damage_time, damage_w = math.inf, 0.0
        blocks: list[tuple[float, float, float]] = []
        while True:
            alive = [i for i in range(n) if i not in failed and i not in absent]
            t_fail, who = min((next_fail[i], i) for i in alive) if alive else (math.inf, -1)
            t_rep = min(failed.values()) if failed else math.inf
            t_rel = min(releases.values()) if releases else math.inf
            t_next = min(t_fail, t_rep, t_rel)
            if theta != 1.0:  # likelihood ratio of the biased stretch [t, t_next] (docs/reliability.md#failure-biasing)
                end = min(t_next, horizon)
                for i in alive:
                    log_w += (theta - 1.0) * (self.life.cumulative(end - installed[i]) - self.life.cumulative(t - installed[i])) * frailty
            if t_next > horizon:
                return math.inf, 0.0, damage_time, damage_w, blocks
            t = t_next
            if t_next == t_fail:
                if theta != 1.0:
                    log_w -= math.log(theta)
                if len(failed) == p:
                    return t, math.exp(log_w), damage_time, damage_w, blocks
                if spares_free > 0:
                    spares_free -= 1
                    failed[who] = t + self._repair_time(self.fast_hours)
                    releases[who] = t + self._repair_time(self.release_hours)
                elif self.spare_free_p and rng.random() < self.spare_free_p:
                    failed[who] = t + self._repair_time(self.fast_hours)
                else:
                    failed[who] = t + self._repair_time(self.slow_hours)
                    waiting.append(who)
                if len(failed) == p and p > 0:
                    live_lse = self.params.lse_per_hour * (t % self.scrub_hours) * (n - p) * self.params.fill
                    bad = rng.poisson(self.read_errors + live_lse)
                    if self.field_rate:
                        age = self.params.disk_age_years * HOURS_PER_YEAR + t
                        rate = [r for start, r in self.field_by_age if start <= age][-1]
                        bad += self.params.lse_records_per_episode * rng.poisson(rate * (t % self.scrub_hours))
                    if bad:
                        if self.classic:
                            return t, math.exp(log_w), damage_time, damage_w, blocks
                        blocks.append((t, math.exp(log_w), float(bad)))
                        if damage_time == math.inf:
                            damage_time, damage_w = t, math.exp(log_w)
            elif t_next == t_rep:
                slot = min(failed, key=failed.get)
                del failed[slot]
                if slot in waiting:
                    waiting.remove(slot)
                if slot in releases:
                    absent.add(slot)  # rebuilt onto the distributed spare; the dead disk is still out
                else:
                    installed[slot] = t
            else:
                slot = min(releases, key=releases.get)
                del releases[slot]
                spares_free += 1
                failed.pop(slot, None)
                absent.discard(slot)
                installed[slot] = t
                if waiting:  # the freed distributed spare takes the oldest failure still waiting (as the chain does)
                    slot = waiting.pop(0)
                    spares_free -= 1
                    failed[slot] = t + self._repair_time(self.fast_hours)
                    releases[slot] = t + self._repair_time(self.release_hours)
            theta = self.theta if failed else 1.0
            for i in range(n):  # resample from each disk's age: valid at any event (we know only that it lives)
                if i not in failed and i not in absent:
                    next_fail[i] = t + self._residual(t - installed[i], frailty, theta)


STOPPED_BY = ("trials", "target error", "trial budget", "time budget")


def simulate(layout: Layout, params: RiskParams, *, usable_bytes: int, rng: np.random.Generator,
             lifetime: Lifetime | None = None, trials: int = 20000, max_trials: int = 2_000_000,
             target_relative_error: float | None = None, classic: bool = False, exponential_repair: bool = False,
             batch_variance: float = 0.0, bias: bool = True, batch: int = 2000,
             clock: Callable[[], float] | None = None, max_seconds: float | None = None,
             progress: Callable[[int, float, float], None] | None = None) -> RiskResult:
    """Engine B. Runs `trials`, or with target_relative_error more (up to max_trials) until the
    95 % half-width of P(pool loss) at the middle horizon is within that fraction of it.

    Bounded work: with a clock (e.g. time.monotonic) and max_seconds it also stops when that
    time is spent, even below `trials` (every vdev keeps at least one trial); progress(trials,
    relative error, seconds) is called after each batch. extra["stopped_by"] says which of
    STOPPED_BY ended the run."""
    if trials < 1 or max_trials < 1:
        raise ParamError("trials", f"{trials} (max {max_trials})", "at least 1 trial")
    life = lifetime or Lifetime.exponential(params.failure_rate_per_hour)
    hours = tuple(y * HOURS_PER_YEAR for y in params.years)
    sims = [(g, _VdevSimulator(g, layout, params, life, rng, classic=classic, exponential_repair=exponential_repair,
                               batch_variance=batch_variance, bias=bias), _Tally(hours)) for g in layout.groups]
    main = min(range(len(hours)), key=lambda k: abs(k - len(hours) // 2))
    start = clock() if clock is not None else 0.0
    deadline = start + max_seconds if clock is not None and max_seconds is not None else math.inf
    done = 0
    limit = max(max_trials, trials) if target_relative_error else trials
    stopped_by = "trials" if not target_relative_error else "trial budget"
    while done < limit:
        step = min(batch, limit - done)
        for _, sim, tally in sims:
            for _ in range(step):
                tally.add(*sim.trial(hours[-1]))
                if deadline < math.inf and clock() > deadline:  # type: ignore[misc]
                    stopped_by = "time budget"
                    break
            if stopped_by == "time budget":
                break
        done += step
        if stopped_by == "time budget":
            for _, sim, tally in sims:
                if tally.trials == 0:
                    tally.add(*sim.trial(hours[-1]))
            break
        if progress is not None:
            progress(done, _pool(sims, main).relative_error, clock() - start if clock is not None else 0.0)
        if target_relative_error and done >= trials:
            if _pool(sims, main).relative_error <= target_relative_error:
                stopped_by = "target error"
                break
    done = min(t.trials for _, _, t in sims)
    p_loss = [_pool(sims, i) for i in range(len(hours))]
    p_damage = [_pool(sims, i, "damage") for i in range(len(hours))]
    blocks = [_sum_blocks(sims, i) for i in range(len(hours))]
    stored = params.fill * usable_bytes
    lam = life.mean_rate(hours[-1])
    mttdl = _mttdl_from(p_loss[-1].value, hours[-1], lam, layout)
    result = RiskResult(
        "classic" if classic else "zfs", "montecarlo", params.years, mttdl,
        tuple(e.value for e in p_loss), tuple(e.value for e in p_damage),
        tuple(b.value * params.block_bytes for b in blocks), tuple(e.value * stored for e in p_loss),
        "from simulation: see p_loss and p_damage", (),
        {"trials": done, "stopped_by": stopped_by, "ci95": {
            "p_loss": {f"{y:g}": list(e.ci95) for y, e in zip(params.years, p_loss)},
            "p_damage": {f"{y:g}": list(e.ci95) for y, e in zip(params.years, p_damage)},
            "expected_bytes_lost": {f"{y:g}": [c * params.block_bytes for c in b.ci95] for y, b in zip(params.years, blocks)}},
         "relative_error": {f"{y:g}": e.relative_error for y, e in zip(params.years, p_loss)},
         "loss_events": sum(t.loss_events for _, _, t in sims),
         "failure_bias": {g.token: s.theta for g, s, _ in sims}, "mttdl_note": MTTDL_CAVEAT},
    )
    return result


def _pool(sims, i: int, what: str = "loss") -> Estimate:
    """Combine vdev estimates: 1 - prod(1 - P_v)^count, with a delta-method standard error."""
    log_survive, var = 0.0, 0.0
    parts = []
    for g, _, t in sims:
        e = t.estimate(t.loss if what == "loss" else t.damage, t.loss2 if what == "loss" else t.damage2, i)
        parts.append((g.count, e))
        log_survive += g.count * math.log1p(-min(e.value, 1 - 1e-15))
    value = -math.expm1(log_survive)
    for count, e in parts:
        deriv = count * (1 - value) / (1 - min(e.value, 1 - 1e-15))
        var += (deriv * e.stderr) ** 2
    return Estimate(value, math.sqrt(var))


def _sum_blocks(sims, i: int) -> Estimate:
    value = var = 0.0
    for g, _, t in sims:
        e = t.estimate(t.blocks, t.blocks2, i)
        value += g.count * e.value
        var += (g.count * e.stderr) ** 2
    return Estimate(value, math.sqrt(var))


def _mttdl_from(p: float, hours: float, lam: float, layout: Layout) -> float:
    """MTTDL of an exponential law with the same P(loss) at the mission end (secondary figure)."""
    if p <= 0:
        return math.inf
    # every simulated pool lost: the exponential law would say 0; 1 - p rounds to at most 2^-53
    return -hours / math.log1p(-min(p, 1 - 2**-53))
