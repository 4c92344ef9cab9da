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


def vdev_rate_ahead(disks: list[tuple[float | None, float]], horizon_hours: float, failures: int,
                    bands: tuple[AgeBand, ...] = HDD_AGE_BANDS) -> float:
    """The one rate per hour a vdev's constant-rate chain takes over the next `horizon_hours`, for disks
    given as (age in hours, or None for a disk of the constant rate beside it), `failures` = the failures
    that lose the vdev from where it is.

    While repairs are far faster than failures, the vdev is lost at a rate proportional to the sum over
    every set of `failures` disks of the product of their rates (docs/reliability.md#disk-age). The rate
    returned gives the chain that same sum, integrated over the horizon: its `failures`-th root. So it is
    the disks' mean for a single disk, the geometric mean for a mirror's two, and across an age band's
    edge a disk's later, higher rate weighs more than in a plain mean over time."""
    q = min(max(failures, 1), len(disks))
    cuts = {0.0, horizon_hours}
    for age, _ in disks:
        if age is not None:
            cuts |= {t for b in bands if 0 < (t := b.from_years * HOURS_PER_YEAR - age) < horizon_hours}
    edges = sorted(cuts)
    total = 0.0
    for t0, t1 in zip(edges, edges[1:]):
        rates = [_band_rate(age + (t0 + t1) / 2, bands) if age is not None else rate for age, rate in disks]
        total += (t1 - t0) * _symmetric_mean(rates, q)
    return (total / horizon_hours) ** (1 / q)


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
