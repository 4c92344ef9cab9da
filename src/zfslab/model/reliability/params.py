"""Inputs of the risk models, with their conventions and per-disk-class defaults.

Conventions (docs/reliability.md#inputs): an AFR a gives a failure rate
lambda = -ln(1 - a) / 8760 per hour; a year is 8760 h; repair time = replacement delay +
fill x disk size / resilver rate; failed disks of a vdev resilver in parallel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from zfslab.errors import ParamError
from zfslab.model.disk_types import DISK_TYPES
from zfslab.model.reliability.field_errors import RECORDS_PER_EPISODE, LseByAge, field_lse, lse_by_age

HOURS_PER_YEAR = 8760.0
DEFAULT_YEARS = (1.0, 5.0, 10.0)
BLOCK_BYTES = 128 * 1024  # a bad sector costs one record: the default recordsize
# Read errors (docs/reliability.md#field-error-model): `field` counts latent sector errors as field
# studies saw them, cleared by scrubs; `datasheet` reads the BER bound literally, bit by bit, as RAID
# calculators do. A bare RiskParams is the calculators' (datasheet); a disk class's and the command
# line's default is the field.
ERROR_MODELS = ("field", "datasheet")
DEFAULT_ERROR_MODEL = "field"
MAX_LSE_PER_YEAR = 365.0  # an episode a day on every disk: far past any study, still a number


@dataclass(frozen=True, slots=True)
class DiskClass:
    """Defaults for one kind of disk; every value can be overridden on the command line."""

    name: str
    afr: float  # annualised failure rate, a fraction
    ber_per_bit: float  # unrecoverable read errors per bit read
    streaming_mb_s: float  # sequential MB/s (10^6 B/s): the ceiling of a resilver
    source: str


def _classes() -> dict[str, DiskClass]:
    # one description of each disk: the risk figures and the speed come from the same DiskType
    return {t.name: DiskClass(t.name, t.afr, t.ber_per_bit, t.streaming_mb_s, t.source) for t in DISK_TYPES.values()}


DISK_CLASSES = _classes()


@dataclass(frozen=True, slots=True)
class RiskParams:
    """Everything the risk engines need besides the layout."""

    disk_bytes: int | None = None  # None: plan() takes it from its DiskSet, the one place it is given
    afr: float = 0.015
    ber_per_bit: float = 1e-14
    replace_hours: float = 48.0  # from a failure until the admin has put in a new disk
    resilver_mb_s: float | None = None  # healing resilver rate; None: from the disk class
    # healing resilver rates measured on these disks (zfslab drill), per vdev kind; the user's
    # resilver_mb_s still wins, and a kind not measured keeps the disk class's share of streaming
    resilver_mirror_mb_s: float | None = None
    resilver_raidz_mb_s: float | None = None
    streaming_mb_s: float = 150.0
    fill: float = 0.7
    detect_hours: float = 0.0  # ZED notices and starts a spare: part of the repair when a spare is used
    scrub_days: float = 30.0
    lse_per_hour: float = 0.0  # latent sector errors per drive-hour (off: BER stands for read errors)
    error_model: str = "datasheet"
    lse_episodes_per_year: float = 0.0  # field model: LSE episodes per drive-year (field_errors.py)
    lse_records_per_episode: float = 2.0  # field model: 128 KiB records one episode damages
    # field model by age (docs/reliability.md#by-age): (start age in years, episodes per drive-year).
    # When set, these (not lse_episodes_per_year, the study average) give the damage; empty: that
    # average at every age; with_overrides() empties them when a rate is given.
    # disk_age_years: the disks' age when the mission starts (plan: 0, new disks)
    lse_age_bands: tuple[tuple[float, float], ...] = ()
    disk_age_years: float = 0.0
    block_bytes: int = BLOCK_BYTES
    parallel_repair: bool = True
    years: tuple[float, ...] = DEFAULT_YEARS
    mtbf_hours: float | None = None  # if set, lambda = 1/MTBF instead of the AFR conversion

    def __post_init__(self) -> None:
        if self.disk_bytes is not None and self.disk_bytes <= 0:
            raise ParamError("disk_bytes", str(self.disk_bytes), "must be more than 0 bytes")
        if not 0 < self.afr < 1:
            raise ParamError("afr_pct", f"{100 * self.afr:g}", "an annual failure rate is between 0 and 100 %")
        if self.mtbf_hours is not None and self.mtbf_hours <= 0:
            raise ParamError("mtbf_hours", f"{self.mtbf_hours:g}", "must be more than 0")
        if not 0 <= self.ber_per_bit < 1e-3:
            raise ParamError("ber_per_bit", f"{self.ber_per_bit:g}", "errors per bit read, e.g. 1e-14 or 1e-15")
        if not 0 <= self.replace_hours < math.inf:  # written so that NaN fails too
            raise ParamError("replace_hours", f"{self.replace_hours:g}", "must be 0 or more")
        if not 0 <= self.detect_hours < math.inf:
            raise ParamError("detect_hours", f"{self.detect_hours:g}", "the hours until a failure is noticed, 0 or more")
        if not 0 < self.streaming_mb_s < math.inf:
            raise ParamError("streaming_mb_s", f"{self.streaming_mb_s:g}", "the disk's sequential MB/s, more than 0")
        for name in ("resilver_mb_s", "resilver_mirror_mb_s", "resilver_raidz_mb_s"):
            value = getattr(self, name)
            if value is not None and not 0 < value < math.inf:
                raise ParamError(name, f"{value:g}", "must be more than 0 MB/s")
        if not 0 < self.fill <= 1:
            raise ParamError("fill", f"{self.fill:g}", "the allocated fraction is above 0 and at most 1")
        if not self.scrub_days > 0:  # written so that NaN fails too
            raise ParamError("scrub_days", f"{self.scrub_days:g}", "must be more than 0")
        if self.scrub_days == math.inf:
            raise ParamError("scrub_days", f"{self.scrub_days:g}", "the days between scrubs, a finite number")
        if not 0 <= self.lse_per_hour < math.inf:
            raise ParamError("lse_per_hour", f"{self.lse_per_hour:g}", "latent sector errors per drive-hour, 0 or more")
        if self.error_model not in ERROR_MODELS:
            raise ParamError("error_model", repr(self.error_model), f"use one of {', '.join(ERROR_MODELS)}")
        if not 0 <= self.lse_episodes_per_year <= MAX_LSE_PER_YEAR:
            raise ParamError("lse_episodes_per_year", f"{self.lse_episodes_per_year:g}",
                             f"latent-error episodes per drive-year, 0 to {MAX_LSE_PER_YEAR:g} (e.g. 0.047)")
        if not 1 <= self.lse_records_per_episode < math.inf:
            raise ParamError("lse_records_per_episode", f"{self.lse_records_per_episode:g}",
                             "records one latent-error episode damages, 1 or more")
        if self.lse_age_bands:
            try:
                LseByAge(self.lse_age_bands, "")
            except ValueError as e:
                raise ParamError("lse_age_bands", repr(self.lse_age_bands), str(e)) from None
            for _, rate in self.lse_age_bands:
                if not 0 <= rate <= MAX_LSE_PER_YEAR:
                    raise ParamError("lse_age_bands", f"{rate:g}",
                                     f"latent-error episodes per drive-year, 0 to {MAX_LSE_PER_YEAR:g}")
        if not 0 <= self.disk_age_years < math.inf:
            raise ParamError("disk_age_years", f"{self.disk_age_years:g}", "the disks' age in years, 0 or more")
        if not self.years or any(y <= 0 for y in self.years):
            raise ParamError("years", ",".join(f"{y:g}" for y in self.years), "give positive years, e.g. 1,5,10")

    @property
    def failure_rate_per_hour(self) -> float:
        if self.mtbf_hours is not None:
            return 1.0 / self.mtbf_hours
        return -math.log1p(-self.afr) / HOURS_PER_YEAR

    def healing_mb_s(self, mirror: bool) -> float:
        """The user's resilver rate, else the rate drill measured for this vdev kind, else 0.8 (mirror)
        / 0.5 (raidz) of streaming (docs/reliability.md#repair-time)."""
        if self.resilver_mb_s is not None:
            return self.resilver_mb_s
        measured = self.resilver_mirror_mb_s if mirror else self.resilver_raidz_mb_s
        if measured is not None:
            return measured
        return self.streaming_mb_s * (0.8 if mirror else 0.5)

    def resilver_measured(self, mirror: bool) -> bool:
        """Whether the rate healing_mb_s() gives for this kind is drill's measurement."""
        measured = self.resilver_mirror_mb_s if mirror else self.resilver_raidz_mb_s
        return self.resilver_mb_s is None and measured is not None

    def resilver_hours(self, mirror: bool, speedup: float = 1.0) -> float:
        """Time to rewrite a disk's allocated bytes at the resilver rate (dRAID: times its speed-up)."""
        return self.fill * self.disk_bytes / (self.healing_mb_s(mirror) * 1e6 * speedup) / 3600.0

    @property
    def field(self) -> bool:
        return self.error_model == "field"

    def lse_by_age(self) -> LseByAge:
        """The field model's episode rate by age: the class's bands, or lse_episodes_per_year at every age."""
        return LseByAge(self.lse_age_bands or ((0.0, self.lse_episodes_per_year),), "")

    def with_(self, **changes) -> "RiskParams":
        return replace(self, **changes)


def params_for_class(disk_class: str, disk_bytes: int, **overrides) -> RiskParams:
    """RiskParams with a disk class's defaults, then the user's overrides (None means default)."""
    if disk_class not in DISK_CLASSES:
        raise ParamError("disk_class", repr(disk_class), f"use one of {', '.join(DISK_CLASSES)}")
    c = DISK_CLASSES[disk_class]
    base = RiskParams(disk_bytes=disk_bytes, afr=c.afr, ber_per_bit=c.ber_per_bit, streaming_mb_s=c.streaming_mb_s,
                      **field_inputs(disk_class))
    return with_overrides(base, overrides)


def with_overrides(base: RiskParams, overrides: dict) -> RiskParams:
    """`base` with the overrides that are not None; a rate of latent errors given replaces the class's
    rates by age (the user's rate holds at every age)."""
    given = {k: v for k, v in overrides.items() if v is not None}
    if "lse_episodes_per_year" in given and "lse_age_bands" not in given:
        given["lse_age_bands"] = ()
    return base.with_(**given)


def field_inputs(disk_type: str, *, seeks: bool = True, error_model: str = DEFAULT_ERROR_MODEL) -> dict:
    """The error model's RiskParams fields for a disk type: the field studies' LSE rate for its class."""
    return {"error_model": error_model, "lse_episodes_per_year": field_lse(disk_type, seeks=seeks).episodes_per_year,
            "lse_age_bands": lse_by_age(disk_type, seeks=seeks).bands, "lse_records_per_episode": RECORDS_PER_EPISODE}
