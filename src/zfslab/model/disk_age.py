"""A spinning disk's failure rate from its age (the bathtub curve, by age band), and which disks of a
vdev are one batch: docs/reliability.md#disk-age and #disks-of-one-batch, each number's source there.
Pure: the caller gives each disk's power-on hours and model as SMART reported them."""

from __future__ import annotations

import math
from dataclasses import dataclass

HOURS_PER_YEAR = 8760.0
# SMART came with ATA-3 (1997): a counter of more than 30 years predates it, so it is not an age
# (a vendor's packed field, a wrapped or garbage value); it is ignored with a note.
MAX_AGE_HOURS = 30 * 8760
# Disks bought and installed together run the same hours: within a month of running apart, with the
# same model, zfslab takes them as one batch (a lot from one production run, shipped together).
BATCH_HOURS_APART = 720
# The batch's shared frailty: gamma-distributed, mean 1, variance v. Schroeder and Gibson (FAST 2007)
# found the times between replacements with a squared coefficient of variation C^2 = 2.4 (1 for
# independent exponential failures); a gamma frailty gives C^2 = 1 / (1 - 2v), so v = (1 - 1/2.4) / 2.
# All of that variability is put on the batch: an upper estimate (docs/reliability.md#disks-of-one-batch).
BATCH_FRAILTY_VARIANCE = (1 - 1 / 2.4) / 2


# A spinning disk its SMART counters flag fails faster for a while: Pinheiro, Weber, Barroso (FAST 2007)
# measured, after the first such event, how much more likely a disk was to fail within 60 days than
# disks without it, and over their whole observation (docs/reliability.md#flagged-disks).
FLAGGED_HOURS = 60 * 24


@dataclass(frozen=True, slots=True)
class SmartSignal:
    """A SMART counter above zero and what it does to the disk's rate: × `factor` for the first
    FLAGGED_HOURS, × `after_factor` from then (1: back to its age's rate)."""

    counter: str  # as the text names it
    factor: float
    after_factor: float
    source: str


# keyed by the DiskHealth field; a disk with several takes the one of the largest factor (the paper
# gives each alone, and they come together: multiplying them would count one failing disk twice)
SMART_SIGNALS = {
    "offline_uncorrectable": SmartSignal(
        "offline uncorrectable sectors", 39.0, 10.0,
        "Pinheiro et al.: after the first scan error 39x as likely to fail within 60 days; disks with scan "
        "errors 10x as likely to fail over the study (ATA 198 is the drive's own offline scan's count: "
        "zfslab's reading of their scan errors)"),
    "pending": SmartSignal(
        "pending sectors", 16.0, 1.0,
        "Pinheiro et al.: after the first probational count 16x as likely to fail within 60 days; no "
        "longer-term factor given, so back to the age's rate"),
    "reallocated": SmartSignal(
        "reallocated sectors", 14.0, 3.0,
        "Pinheiro et al.: after the first reallocation 14x as likely to fail within 60 days; disks with "
        "reallocations fail 3-6x as often over the study (the low end taken)"),
}


@dataclass(frozen=True, slots=True)
class AgeBand:
    """From `from_years` of power-on time until the next band, a disk fails at `afr_per_year`."""

    from_years: float
    afr_per_year: float  # a fraction
    source: str

    @property
    def rate_per_hour(self) -> float:
        return -math.log1p(-self.afr_per_year) / HOURS_PER_YEAR  # docs/reliability.md#inputs


# A spinning disk's AFR by age (docs/reliability.md#disk-age): high for the first months, lowest in
# years 1-4, rising after; each figure from a field study, the judgement calls said as such there.
HDD_AGE_BANDS = (
    AgeBand(0.0, 0.030, "first months: between Backblaze 2013 (5.1 %/y over 18 months) and 2025 (about 1.3 % "
                        "in year 1); zfslab's judgement"),
    AgeBand(0.25, 0.017, "Pinheiro, Weber, Barroso (FAST 2007): 1.7 % in the first year"),
    AgeBand(1.0, 0.014, "Backblaze 2013: 1.4 %/y from 18 to 36 months (fleet 2024: 1.57 %)"),
    AgeBand(4.0, 0.030, "Schroeder, Gibson (FAST 2007): replacements grow with age from year 2-3, "
                        "2-4 % common"),
    AgeBand(7.0, 0.0425, "Backblaze 2025: its peak, 4.25 % at 10 years 3 months (2021: 14.24 %, 2013: 11.8 %)"),
)


def cumulative_hazard(hours: float, bands: tuple[AgeBand, ...] = HDD_AGE_BANDS) -> float:
    """Expected failures of one disk from new to `hours` of power-on time (a sum over the bands)."""
    total = 0.0
    for i, band in enumerate(bands):
        start = band.from_years * HOURS_PER_YEAR
        end = bands[i + 1].from_years * HOURS_PER_YEAR if i + 1 < len(bands) else math.inf
        if hours <= start:
            break
        total += (min(hours, end) - start) * band.rate_per_hour
    return total


def rate_ahead(age_hours: float, horizon_hours: float, bands: tuple[AgeBand, ...] = HDD_AGE_BANDS) -> float:
    """A disk's mean failure rate per hour over the next `horizon_hours`, from its age now: the rate a
    constant-rate chain needs to give the same expected failures over that horizon."""
    return (cumulative_hazard(age_hours + horizon_hours, bands) - cumulative_hazard(age_hours, bands)) / horizon_hours


def _band_rate(hours: float, bands: tuple[AgeBand, ...]) -> float:
    return next(b for b in reversed(bands) if hours >= b.from_years * HOURS_PER_YEAR).rate_per_hour


def _symmetric_mean(rates: list[float], q: int) -> float:
    """e_q(rates) / C(n, q): the mean, over every set of q disks, of the product of their rates."""
    e = [1.0] + [0.0] * q
    for x in rates:
        for k in range(q, 0, -1):
            e[k] += e[k - 1] * x
    return e[q] / math.comb(len(rates), q)


@dataclass(frozen=True, slots=True)
class DiskHazard:
    """One disk's failure rate ahead: its age's band (without an age, `rate_per_hour` throughout),
    times `factor` for the first `factor_hours` ahead and `after_factor` from then: a disk its SMART
    counters flag (SMART_SIGNALS, docs/reliability.md#flagged-disks)."""

    age_hours: float | None
    rate_per_hour: float = 0.0  # the rate of a disk without an age
    factor: float = 1.0
    factor_hours: float = 0.0
    after_factor: float = 1.0

    def cuts(self, horizon_hours: float, bands: tuple[AgeBand, ...] = HDD_AGE_BANDS) -> set[float]:
        """The times ahead, within the horizon, where this disk's rate steps."""
        steps = {self.factor_hours} if self.factor != self.after_factor else set()
        if self.age_hours is not None:
            steps |= {b.from_years * HOURS_PER_YEAR - self.age_hours for b in bands}
        return {t for t in steps if 0 < t < horizon_hours}

    def rate_at(self, hours_ahead: float, bands: tuple[AgeBand, ...] = HDD_AGE_BANDS) -> float:
        base = self.rate_per_hour if self.age_hours is None else _band_rate(self.age_hours + hours_ahead, bands)
        return base * (self.factor if hours_ahead < self.factor_hours else self.after_factor)


def vdev_rate_steps(disks: list[DiskHazard | tuple[float | None, float]], horizon_hours: float, failures: int,
                    bands: tuple[AgeBand, ...] = HDD_AGE_BANDS, *, cuts: tuple[float, ...] = ()) -> list[
                        tuple[float, float, float]]:
    """The vdev's rate per hour stretch by stretch over the next `horizon_hours`: (from, to, rate)
    with every disk's rate constant within each (split where any disk's rate steps, and at `cuts`).

    While repairs are far faster than failures, the vdev is lost at a rate proportional to the sum
    over every set of `failures` disks (those that lose it from where it is) of the product of their
    rates (docs/reliability.md#disk-age). Each stretch's rate gives the chain that same sum: the
    `failures`-th root of its mean over the sets. So it is the disks' mean for a single disk, the
    geometric mean for a mirror's two, and a disk SMART flags weighs in every set it is in."""
    hazards = [d if isinstance(d, DiskHazard) else DiskHazard(*d) for d in disks]
    edges = rate_edges(hazards, horizon_hours, cuts, bands)
    return [(t0, t1, loss_term_rate(hazards, failures, (t0 + t1) / 2, bands)) for t0, t1 in zip(edges, edges[1:])]


def rate_edges(hazards: list[DiskHazard], horizon_hours: float, cuts: tuple[float, ...] = (),
               bands: tuple[AgeBand, ...] = HDD_AGE_BANDS) -> list[float]:
    """0, the horizon, and every time between where a disk's rate steps or the caller cuts, in order."""
    edges = {0.0, horizon_hours} | {t for t in cuts if 0 < t < horizon_hours}
    for h in hazards:
        edges |= h.cuts(horizon_hours, bands)
    return sorted(edges)


def loss_term_rate(hazards: list[DiskHazard], failures: int, hours_ahead: float,
                   bands: tuple[AgeBand, ...] = HDD_AGE_BANDS) -> float:
    """The one rate that gives `failures` failures among these disks, at that time, the loss term of
    their own rates: the `failures`-th root of the mean over the sets of that many disks of their product."""
    q = min(max(failures, 1), len(hazards))
    return _symmetric_mean([h.rate_at(hours_ahead, bands) for h in hazards], q) ** (1 / q)


def vdev_rate_ahead(disks: list[DiskHazard | tuple[float | None, float]], horizon_hours: float, failures: int,
                    bands: tuple[AgeBand, ...] = HDD_AGE_BANDS) -> float:
    """The one rate per hour that gives a constant-rate chain the loss term of vdev_rate_steps over
    the whole horizon (disks given as DiskHazard, or (age in hours or None, the rate without an age)):
    the `failures`-th root of the steps' mean of rate^failures. Across an age band's edge a disk's
    later, higher rate weighs more than in a plain mean over time. It is the figure shown for a vdev;
    the chain itself steps through vdev_rate_steps (docs/reliability.md#disk-age)."""
    q = min(max(failures, 1), len(disks))
    steps = vdev_rate_steps(disks, horizon_hours, failures, bands)
    return (sum((t1 - t0) * rate ** q for t0, t1, rate in steps) / horizon_hours) ** (1 / q)


def afr_of_rate(rate_per_hour: float) -> float:
    """The AFR (a fraction) of a constant rate: the inverse of AgeBand.rate_per_hour."""
    return -math.expm1(-rate_per_hour * HOURS_PER_YEAR)


@dataclass(frozen=True, slots=True)
class DiskAge:
    """One disk as the age model sees it: its power-on hours when usable (None: the class rate is used,
    `note` says why) and its model, for the batch rule."""

    name: str
    hours: int | None
    model: str = ""
    note: str = ""

    @property
    def age_years(self) -> float | None:
        return None if self.hours is None else self.hours / HOURS_PER_YEAR


def disk_age(name: str, hours: object, model: str = "", why_none: str = "") -> DiskAge:
    """A disk's age from SMART's power-on hours, checked: a value that cannot be an age is ignored with a
    note (never an error: the other disks' figures still stand)."""
    if hours is None:
        return DiskAge(name, None, model, why_none or "SMART reports no power-on hours")
    if isinstance(hours, bool) or not isinstance(hours, int):
        return DiskAge(name, None, model, f"SMART power-on hours {str(hours)[:40]!r} is not a whole number: ignored")
    if hours < 0:
        return DiskAge(name, None, model, f"SMART power-on hours {hours:,} is negative: ignored")
    if hours > MAX_AGE_HOURS:
        shown_hours = f"{hours:,}" if hours < 10**24 else f"{str(hours)[:12]}… ({len(str(hours))} digits)"
        return DiskAge(name, None, model, f"SMART power-on hours {shown_hours} is more than {MAX_AGE_HOURS // 8760} "
                                          "years, older than SMART itself: ignored")
    return DiskAge(name, hours, model)


def largest_batch(disks: tuple[DiskAge, ...]) -> tuple[DiskAge, ...]:
    """The most disks of one model whose power-on hours lie within BATCH_HOURS_APART of each other
    (a disk without hours or model is in no batch); () when no two are."""
    best: tuple[DiskAge, ...] = ()
    models = {d.model for d in disks if d.model and d.hours is not None}
    for model in sorted(models):
        same = sorted((d for d in disks if d.model == model and d.hours is not None), key=lambda d: d.hours)
        lo = 0
        for hi in range(len(same)):
            while same[hi].hours - same[lo].hours > BATCH_HOURS_APART:
                lo += 1
            if hi - lo + 1 > len(best):
                best = tuple(same[lo:hi + 1])
    return best if len(best) >= 2 else ()
