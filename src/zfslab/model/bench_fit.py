"""The speed model fitted on a bench run (a *bench fit*, what `plan --db` shows), as values: the fit,
what the run measured, the ranges it predicts, and the resilvers drill timed on the same disks.

Not to be confused with the *measurement design* (model/calibration.py: which layouts bench
measures) or validate's *fit rows* (model/validation.py); docs/design.md#terminology.
store/bench_fit.py reads a results database into these.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout
from zfslab.model.performance import predict

if TYPE_CHECKING:  # scipy loads only when a fit is asked for
    from zfslab.model.iops_fit import IopsFit
    from zfslab.model.per_host import FleetSpread
    from zfslab.model.performance import DiskProfile
    from zfslab.model.reliability.params import RiskParams
    from zfslab.model.speed_fit import SpeedFit


@dataclass(frozen=True, slots=True)
class MeasuredRate:
    """One stored measurement as the model reads it: a streaming MB/s or a 4K IOPS of a layout."""

    run_id: int
    layout: Layout
    stored_layout: str  # as the database holds it (report shows it so)
    test: str
    metric: str  # write | rewrite | read (MB/s), or an iops_fit.METRICS name
    value: float | None  # None: the test ran but gave no rate


@dataclass(frozen=True)
class BenchFit:
    """The speed fit on one bench run, and what that run measured (layout: metric: median MB/s)."""

    run_id: int
    fit: SpeedFit
    measured: dict[str, dict[str, float]]
    disk_count: int
    disk_bytes: int | None
    sandbox: bool
    iops: IopsFit | None = None  # None: no ars run on these disks, the IOPS are the preset's
    iops_run_id: int | None = None
    iops_measured: dict[str, dict[str, float]] | None = None  # layout: metric: median IOPS
    disk_ids: tuple[str, ...] = ()  # the run's disks: serials, or the paths bench was given
    run_ids: tuple[int, ...] = ()  # every run the fit took layouts from (a fleet: one or more per host)
    hosts: int = 1  # the hosts those runs were measured on (their origins)
    disk_rotational: bool | None = None  # the run's disks rotational, solid-state, or None: not known
    host_spread: FleetSpread | None = None  # hosts that measured the same layouts: how far apart (--every-host)

    def profile(self, base: DiskProfile) -> DiskProfile:
        """`base` with the fitted streaming rates and, when measured, the fitted random path."""
        speed = self.fit.profile(base)
        return speed if self.iops is None else self.iops.profile(speed)


@dataclass(frozen=True, slots=True)
class FitRanges:
    """A bench fit's predictions for a plan's rows: which rows were measured, and each row's
    interval per metric (write_mb_s: (low, high))."""

    measured: frozenset[str]
    intervals: dict[str, dict[str, tuple[float, float]]]
    level: float = 0.9
    measured_iops: frozenset[str] = frozenset()  # layouts the ars suite measured (their IOPS are fitted)


@dataclass(frozen=True)
class MeasuredResilver:
    """A healing resilver drill timed on these disks: ZFS's resilvered bytes over the seconds."""

    vdev_kind: str  # mirror | raidz
    mb_s: float
    drill_id: int
    layout: str
    fill: float
    resilvered_bytes: int
    seconds: float


def with_measured_resilvers(risk: RiskParams, measured: dict[str, MeasuredResilver]) -> RiskParams:
    """`risk` with the resilver rate drill measured for each vdev kind it timed (mirror, raidz)."""
    return risk.with_(resilver_mirror_mb_s=getattr(measured.get("mirror"), "mb_s", None),
                      resilver_raidz_mb_s=getattr(measured.get("raidz"), "mb_s", None))


def fit_ranges(bench_fit: BenchFit, layouts: list[str], ashift: int, recordsize: int,
               level: float = 0.9) -> FitRanges:
    """Each layout's range per streaming metric (and IOPS metric, when fitted), for the plan's ashift
    and recordsize."""
    # deliberate lazy loading: the fits import scipy (0.2 s), paid only when a fit predicts
    from zfslab.model.iops_fit import predict_iops_intervals
    from zfslab.model.speed_fit import predict_intervals

    fit = replace(bench_fit.fit, ashift=ashift, recordsize=recordsize)  # the parameters are the disks' and host's
    iops = None if bench_fit.iops is None else replace(bench_fit.iops, ashift=ashift, recordsize=recordsize)
    ranges = {}
    for name in layouts:
        layout = parse_layout(name)
        got = predict_intervals(fit, layout, level=level)
        ranges[name] = {f"{m}_mb_s": (i.low_mb_s, i.high_mb_s) for m, i in got.items()}
        if iops is not None:
            ranges[name] |= {m: (i.low_iops, i.high_iops)
                             for m, i in predict_iops_intervals(iops, layout, level=level).items()}
    return FitRanges(frozenset(bench_fit.measured), ranges, level, frozenset(bench_fit.iops_measured or ()))


@dataclass(frozen=True, slots=True)
class MeasuredVsPredicted:
    """A streaming test's measured MB/s beside the model's prediction for its layout."""

    layout: str  # as stored
    test: str
    predicted_mb_s: float
    measured_mb_s: float


def measured_vs_predicted(rates: list[MeasuredRate], profile: DiskProfile, *,
                          ashift: int) -> list[MeasuredVsPredicted]:
    """Each streaming rate above 0 beside what `profile` predicts for its layout."""
    return [MeasuredVsPredicted(r.stored_layout, r.test, getattr(predict(r.layout, profile, ashift=ashift),
                                                                 f"{r.metric}_mb_s"), r.value)
            for r in rates if r.value and r.value > 0]
