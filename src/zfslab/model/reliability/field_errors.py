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


def field_lse(disk_type: str, *, seeks: bool = True) -> FieldLse:
    """The study figures for a disk type; a measured profile (a name not listed) by its medium."""
    return BY_DISK_TYPE.get(disk_type, NEARLINE if seeks else FLASH)


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
                lse: FieldLse = NEARLINE, ber_per_bit: float = 1e-14) -> ScrubCheck:
    """A pool's scrub findings per year: every latent error born on an allocated part is found by
    the next scrub (field), or every bit a scrub reads fails at the BER (datasheet)."""
    episodes = disks * fill * lse.episodes_per_year
    per_scrub = disks * disk_bytes * fill * 8 * ber_per_bit
    return ScrubCheck(disks, disk_bytes, fill, scrub_days, episodes, episodes * RECORDS_PER_EPISODE, per_scrub,
                      per_scrub * 365.0 / scrub_days)
