"""Read errors as the field sees them: latent sector errors (LSEs) per drive and year, by class of
disk, from the large field studies, instead of the datasheet's bound of one error per 10^14 bits.

The numbers, their sources and the check against what scrubs report are in
docs/reliability.md#field-error-model. In short: an LSE episode (one sector, or a burst of nearby
ones) appears on a drive at `episodes_per_year`; it stays unseen until a scrub (or a read) reaches
it, so a resilver meets only those born since the last scrub, and only on the allocated part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# P(a drive that had errors this month has new ones the next): Schroeder, Lagisetty and Merchant
# (FAST 2016) measured 30 % for flash; Bairavasundaram et al. (SIGMETRICS 2007) and Schroeder,
# Damouras and Gill (FAST 2010) find the same clustering in time on disks. An affected drive so
# shows 1 / (1 - 0.3) = 1.43 episodes for each first one.
RECURRENCE = 0.3
# 128 KiB records one episode damages: most LSEs are single sectors (contiguous multi-sector errors
# are under 2.5 % of them) and a second error on a drive lies mostly within 100 sectors of the
# first (Schroeder, Damouras and Gill 2010): one record, at times its neighbour.
RECORDS_PER_EPISODE = 2.0


@dataclass(frozen=True, slots=True)
class FieldLse:
    """How often drives of one class develop latent sector errors, as a study counted them."""

    name: str
    drives_affected: float  # the fraction of drives with at least one LSE ...
    months: float  # ... within this many months in the field
    source: str

    @property
    def incidence_per_year(self) -> float:
        """The fraction of drives that develop a first LSE in a year (a constant hazard over the study)."""
        return -math.expm1(math.log1p(-self.drives_affected) * 12.0 / self.months)

    @property
    def episodes_per_year(self) -> float:
        """LSE episodes per drive-year: first episodes and the recurrences that follow them."""
        return self.incidence_per_year / (1.0 - RECURRENCE)


NEARLINE = FieldLse("nearline hdd", 0.085, 32.0,
                    "Bairavasundaram et al. 2007: 8.5 % of 1.53 M nearline (SATA) drives in 32 months")
ENTERPRISE = FieldLse("enterprise hdd", 0.019, 32.0,
                      "Bairavasundaram et al. 2007: 1.9 % of enterprise (FC) drives in 32 months")
FLASH = FieldLse("flash", 0.40, 48.0,
                 "Schroeder, Lagisetty and Merchant 2016: 20-63 % of drives by model saw an uncorrectable "
                 "error in 4 years; 40 %, the middle")
BY_DISK_TYPE = {"hdd": NEARLINE, "hdd5400": NEARLINE, "hdd-enterprise": ENTERPRISE, "ssd": FLASH, "nvme": FLASH}

# Nearline disks by age (docs/reliability.md#by-age): the same study counted 3.15 % of nearline disks
# with a first LSE in their first 12 months. Against 8.5 % in 32 months (read, as the class rate is,
# as disks watched from new) the months 13-32 carry the rest of the cumulative hazard:
# (-ln(1 - 0.085) + ln(1 - 0.0315)) / (20/12) = 0.0341 a year, 1.065 times the first year's 0.0320.
NEARLINE_FIRST_YEAR = 0.0315
NEARLINE_FIRST_YEAR_MONTHS = 12.0


@dataclass(frozen=True, slots=True)
class LseByAge:
    """LSE episodes per drive-year by the drive's age: constant from each band's start to the next's."""

    bands: tuple[tuple[float, float], ...]  # (age in years where the band starts, episodes per drive-year)
    source: str

    def __post_init__(self) -> None:
        starts = [a for a, _ in self.bands]
        if not starts or starts[0] != 0 or any(b <= a for a, b in zip(starts, starts[1:])):
            raise ValueError(f"age bands must start at 0 and rise, got starts {starts}")

    def episodes_at(self, age_years: float) -> float:
        """The episode rate of a drive `age_years` old."""
        return [rate for start, rate in self.bands if start <= age_years][-1]

    def years_in_bands(self, from_age: float, years: float) -> tuple[float, ...]:
        """How many of the `years` from age `from_age` on fall in each band."""
        ends = [a for a, _ in self.bands[1:]] + [math.inf]
        return tuple(max(0.0, min(from_age + years, end) - max(from_age, start))
                     for (start, _), end in zip(self.bands, ends))

    def mean_episodes(self, from_age: float, years: float) -> float:
        """The mean episode rate over a mission of `years` from age `from_age` (plan: new disks, 0)."""
        return sum(rate * y for (_, rate), y in zip(self.bands, self.years_in_bands(from_age, years))) / years


def _hazard(fraction: float) -> float:
    return -math.log1p(-fraction)


def _episodes(hazard_per_year: float) -> float:
    return -math.expm1(-hazard_per_year) / (1.0 - RECURRENCE)


def nearline_by_age() -> LseByAge:
    first = _hazard(NEARLINE_FIRST_YEAR) * 12.0 / NEARLINE_FIRST_YEAR_MONTHS
    later = (_hazard(NEARLINE.drives_affected) - first * NEARLINE_FIRST_YEAR_MONTHS / 12.0) \
        / ((NEARLINE.months - NEARLINE_FIRST_YEAR_MONTHS) / 12.0)
    return LseByAge(((0.0, _episodes(first)), (NEARLINE_FIRST_YEAR_MONTHS / 12.0, _episodes(later))),
                    "Bairavasundaram et al. 2007: 3.15 % of nearline drives in their first 12 months, 8.5 % in 32; "
                    "held after 32 months (no count by age beyond)")


NEARLINE_BY_AGE = nearline_by_age()
# Enterprise drives: the study saw their fraction with LSEs grow linearly with age, a constant hazard
# (docs/reliability.md#by-age); flash: no count by age taken. One band each, the class rate.
BY_AGE = {NEARLINE.name: NEARLINE_BY_AGE,
          ENTERPRISE.name: LseByAge(((0.0, ENTERPRISE.episodes_per_year),), ENTERPRISE.source),
          FLASH.name: LseByAge(((0.0, FLASH.episodes_per_year),), FLASH.source)}


def field_lse(disk_type: str, *, seeks: bool = True) -> FieldLse:
    """The study figures for a disk type; a measured profile (a name not listed) by its medium."""
    return BY_DISK_TYPE.get(disk_type, NEARLINE if seeks else FLASH)


def lse_by_age(disk_type: str, *, seeks: bool = True) -> LseByAge:
    """The episode rate by age for a disk type's class."""
    return BY_AGE[field_lse(disk_type, seeks=seeks).name]


@dataclass(frozen=True, slots=True)
class ScrubCheck:
    """What the scrubs of one pool find in a year on each model (docs/reliability.md#checked-against-the-field)."""

    disks: int
    disk_bytes: int
    fill: float
    scrub_days: float
    field_episodes_per_year: float  # latent-error episodes found, the field model
    field_records_per_year: float
    datasheet_errors_per_scrub: float  # bits read x BER
    datasheet_errors_per_year: float

    @property
    def scrubs_per_year(self) -> float:
        return 365.0 / self.scrub_days

    @property
    def field_p_scrub_repairs(self) -> float:
        """P(one scrub reports a repair), the field model."""
        return -math.expm1(-self.field_episodes_per_year / self.scrubs_per_year)

    @property
    def datasheet_p_scrub_repairs(self) -> float:
        return -math.expm1(-self.datasheet_errors_per_scrub)


def scrub_check(disks: int, disk_bytes: int, *, fill: float = 0.5, scrub_days: float = 30.0,
                lse: FieldLse = NEARLINE, ber_per_bit: float = 1e-14, age_years: float | None = None) -> ScrubCheck:
    """A pool's scrub findings per year: every latent error born on an allocated part is found by
    the next scrub (field), or every bit a scrub reads fails at the BER (datasheet). With `age_years`,
    the field rate of disks that old (LseByAge); else the class's study average."""
    rate = lse.episodes_per_year if age_years is None else BY_AGE[lse.name].episodes_at(age_years)
    episodes = disks * fill * rate
    per_scrub = disks * disk_bytes * fill * 8 * ber_per_bit
    return ScrubCheck(disks, disk_bytes, fill, scrub_days, episodes, episodes * RECORDS_PER_EPISODE, per_scrub,
                      per_scrub * 365.0 / scrub_days)
