"""Fit the streaming speed model on measured pools, with each parameter's uncertainty, and
predict any layout with an interval (docs/speed.md#fitting).

Ten physical parameters (PARAMETERS) in log space, fitted by least squares of log ratios
(scipy.optimize.least_squares, within physical bounds) plus one prior term per parameter, so a
parameter no measurement pins stays at its documented prior instead of wandering off. Rows more
than about 15 % off pull linearly rather than quadratically (a soft-L1 loss), so one odd
measurement cannot drag the fit. The covariance comes from the Jacobian at the optimum, with each
metric's scatter estimated from its residuals; a prediction's interval adds that scatter to the
parameters' uncertainty carried through the model, with Student's t for the few degrees of
freedom a calibration of a handful of rows leaves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from scipy.optimize import least_squares

from zfslab.model.layouts import Layout
from zfslab.model.log_fit import FitError, FittedParameter  # noqa: F401  (callers import them from here)
from zfslab.model.log_fit import (LogParameters, Parameter, check_level, check_rates, jacobian, log_interval,
                                  scatter_and_covariance, soft_l1)
from zfslab.model.performance import (DiskProfile, HostLimits, LayoutShape, Streaming, layout_shape,
                                      parity_ceiling_mb_s, streaming_mb_s)

KiB = 1024
METRICS = ("write", "rewrite", "read")


PARAMETERS = (
    Parameter("disk_write_mb_s", "write", 220, 1.5, 1, 30_000,
              "hdd7200 preset: a 7200 rpm disk's outer zone (docs/speed.md#presets); one sd spans 5400 rpm to SATA SSD"),
    Parameter("disk_read_mb_s", "read", 220, 1.5, 1, 30_000, "as disk_write_mb_s"),
    Parameter("disk_rewrite_mb_s", "rewrite", 1.0, 0.7, 1, 30_000,
              "one disk reading then writing the same bytes: 1/(1/read + 1/write) (DiskProfile.single_rewrite_mb_s)"),
    Parameter("host_write_mb_s", "write", 2400, 1.5, 10, 1e6,
              "a SAS-2 x4 wide port, the link most pools share (LSI 6Gb/s SAS HBA User Guide)"),
    Parameter("host_read_mb_s", "read", 2400, 1.5, 10, 1e6, "as host_write_mb_s"),
    Parameter("reads_in_flight", "read", 1.0, 1.0, 1, 1024,
              "the model before issue 15: a reader waits for each record, then copies it (disks and host in series); "
              "half-normal in log above that"),
    Parameter("rewrite_parallel", "rewrite", 0.2, 1.0, 1e-3, 1, "HostLimits' default (docs/speed.md#rewrite)"),
    Parameter("vdev_pipeline_mb_s", "write", 1200, 1.0, 10, 1e6,
              "libzpool: 114-191 us per 128 KiB copy (benchmarks/write_cpu_cost.py), less ~40 % userspace overhead"),
    Parameter("child_io_us", "write", 7.0, 1.0, 1e-3, 1e4,
              "libzpool: 7.3-12.5 us per child I/O (benchmarks/write_cpu_cost.py)"),
    Parameter("parity_us_per_mb", "write", 280, 1.0, 1e-2, 1e6,
              "libzpool: 42-63 us per parity column per 128 KiB record (benchmarks/write_cpu_cost.py), less ~40 %"),
)
NAMES = tuple(p.name for p in PARAMETERS)
_IDX = {name: i for i, name in enumerate(NAMES)}
_LOW = np.log([p.low for p in PARAMETERS])
_HIGH = np.log([p.high for p in PARAMETERS])
_PRIOR_SD = np.array([p.prior_log_sd for p in PARAMETERS])


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured streaming rate of one pool."""

    layout: Layout
    metric: str  # write, rewrite or read
    mb_s: float


@dataclass(frozen=True, slots=True)
class Interval:
    """A predicted MB/s and the interval a new measurement should fall in."""

    metric: str
    mb_s: float
    low_mb_s: float
    high_mb_s: float
    level: float


@dataclass(frozen=True, slots=True)
class SpeedFit(LogParameters):
    """Fitted log-parameters, their covariance and each metric's scatter (log units)."""

    PARAMETERS: ClassVar[tuple[Parameter, ...]] = PARAMETERS

    log_values: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    scatter: dict[str, float]
    scatter_dof: dict[str, float]  # degrees of freedom behind each scatter (residual rows + pseudo-rows)
    fitted_metrics: tuple[str, ...]  # metrics some measurement pinned
    ashift: int
    recordsize: int
    host: HostLimits  # the fixed host facts (parity ceiling); fitted fields are overwritten

    def profile(self, base: DiskProfile) -> DiskProfile:
        """`base` (for its IOPS and latencies) with the fitted streaming rates and host."""
        v = self.values
        host = replace(self.host, write_mb_s=v["host_write_mb_s"], read_mb_s=v["host_read_mb_s"],
                       rewrite_parallel=v["rewrite_parallel"], vdev_pipeline_mb_s=v["vdev_pipeline_mb_s"],
                       child_io_us=v["child_io_us"], parity_us_per_mb=v["parity_us_per_mb"],
                       reads_in_flight=v["reads_in_flight"])
        return replace(base, seq_write_mb_s=v["disk_write_mb_s"], seq_read_mb_s=v["disk_read_mb_s"],
                       rewrite_mb_s=v["disk_rewrite_mb_s"], host=host, source=f"fitted; {base.source}".strip("; "))


def _streaming(x: np.ndarray, shape: LayoutShape, ceiling: float) -> Streaming:
    v = np.exp(x)
    return streaming_mb_s(shape, disk_write_mb_s=v[0], disk_read_mb_s=v[1], disk_rewrite_mb_s=v[2],
                          host_write_mb_s=v[3], host_read_mb_s=v[4], reads_in_flight=v[5], rewrite_parallel=v[6],
                          vdev_pipeline_mb_s=v[7], child_io_us=v[8], parity_us_per_mb=v[9], parity_ceiling_mb_s=ceiling)


def _prior_residuals(x: np.ndarray) -> np.ndarray:
    centers = np.log([p.prior for p in PARAMETERS])
    # the rewrite prior is relative: the disk's read and write in series
    centers[2] = -math.log(math.exp(-x[0]) + math.exp(-x[1]))
    return (x - centers) / _PRIOR_SD


class _Problem:
    """The measurements as shapes, and the residuals of the fit."""

    def __init__(self, measurements: Sequence[Measurement], ashift: int, recordsize: int, host: HostLimits):
        shapes: dict[str, tuple[LayoutShape, float]] = {}
        for m in measurements:
            key = str(m.layout)
            if key not in shapes:
                shapes[key] = (layout_shape(m.layout, recordsize, ashift),
                               parity_ceiling_mb_s(m.layout, host, recordsize, ashift))
        self.rows = [(shapes[str(m.layout)], m.metric, math.log(m.mb_s)) for m in measurements]
        self.metrics = [m.metric for m in measurements]

    def log_predictions(self, x: np.ndarray) -> np.ndarray:
        cache: dict[int, Streaming] = {}
        out = []
        for (shape, ceiling), metric, _ in self.rows:
            s = cache.get(id(shape))
            if s is None:
                s = cache[id(shape)] = _streaming(x, shape, ceiling)
            out.append(math.log(getattr(s, f"{metric}_mb_s")))
        return np.array(out)

    def data_residuals(self, x: np.ndarray) -> np.ndarray:
        return self.log_predictions(x) - np.array([y for _, _, y in self.rows])

    def robust_residuals(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([soft_l1(self.data_residuals(x)), _prior_residuals(x)])


def _starts(problem: _Problem, measurements: Sequence[Measurement]) -> list[np.ndarray]:
    """Deterministic starting points: rates from the smallest pools, ceilings from the fastest."""
    x = np.log([p.prior for p in PARAMETERS])
    for metric, disk, host, per in (("write", 0, 3, "data_disks"), ("read", 1, 4, "read_children")):
        rows = [(m, shape) for m, ((shape, _), _, _) in zip(measurements, problem.rows) if m.metric == metric]
        if rows:
            small, shape = min(rows, key=lambda r: getattr(r[1], per))
            x[disk] = math.log(small.mb_s / getattr(shape, per))
            x[host] = math.log(1.5 * max(m.mb_s for m, _ in rows))
    x[2] = -math.log(math.exp(-x[0]) + math.exp(-x[1]))
    starts = [x]
    for shift in (-1.0, 1.0):  # the pipeline and host-time parameters one prior sd either way
        y = x.copy()
        y[[5, 7, 8, 9]] += shift * _PRIOR_SD[[5, 7, 8, 9]]
        starts.append(y)
    return [np.clip(s, _LOW + 1e-9, _HIGH - 1e-9) for s in starts]


def check_measurements(measurements: Sequence[Measurement]) -> None:
    """Raise FitError naming the first measurement no fit can use."""
    check_rates([(m.layout, m.metric, m.mb_s) for m in measurements], METRICS, "MB/s", "measured pool")


def _check_fixed(fixed: dict[str, float]) -> None:
    for name, value in fixed.items():
        if name not in _IDX:
            raise FitError(f"cannot fix {name!r}: the parameters are {', '.join(NAMES)}")
        p = PARAMETERS[_IDX[name]]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not p.low <= value <= p.high:
            raise FitError(f"{name} fixed at {value!r}: it must be from {p.low:g} to {p.high:g}")


REFIT_MAX_NFEV = 4


def fit_speed(measurements: Sequence[Measurement], *, ashift: int = 12, recordsize: int = 128 * KiB,
              host: HostLimits | None = None, fixed: dict[str, float] | None = None,
              start: SpeedFit | None = None) -> SpeedFit:
    """Fit the ten parameters on measured pools; `host` brings known facts (the CPU's parity rates),
    `fixed` holds parameters known beforehand (they keep their value and get no interval), and
    `start` a fit on nearly the same rows to start from alone (leave-one-out refits)."""
    check_measurements(measurements)
    fixed = dict(fixed or {})
    _check_fixed(fixed)
    host = HostLimits() if host is None else host
    problem = _Problem(measurements, ashift, recordsize, host)
    free = np.array([name not in fixed for name in NAMES])
    pinned = np.log([fixed.get(name, 1.0) for name in NAMES])

    def full(z: np.ndarray) -> np.ndarray:
        x = pinned.copy()
        x[free] = z
        return x

    def residuals(z: np.ndarray) -> np.ndarray:
        r = problem.robust_residuals(full(z))
        return np.concatenate([r[:len(problem.rows)], r[len(problem.rows):][free]])

    best = None
    starts = [np.clip(np.array(start.log_values), _LOW + 1e-9, _HIGH - 1e-9)] if start else _starts(problem, measurements)
    for x0 in starts:
        with np.errstate(all="ignore"):
            # a refit from a fit on nearly the same rows (leave-one-out) is a few steps from its
            # optimum: capped, it costs 2-3 Jacobians instead of 7 (benchmarks/validate_loo.py)
            res = least_squares(residuals, x0[free], bounds=(_LOW[free], _HIGH[free]), x_scale=1.0,
                                max_nfev=REFIT_MAX_NFEV if start else None)
        if best is None or res.cost < best.cost - 1e-12:
            best = res
    x = full(best.x)
    g = jacobian(lambda z: problem.log_predictions(full(z)), best.x)
    prior_j = jacobian(lambda z: _prior_residuals(full(z))[free], best.x)
    scatter, scatter_dof, cov_free = scatter_and_covariance(g, prior_j, problem.data_residuals(x), problem.metrics,
                                                            METRICS)
    cov = np.zeros((len(NAMES), len(NAMES)))
    cov[np.ix_(free, free)] = cov_free
    fitted = tuple(m for m in METRICS if m in set(problem.metrics))
    return SpeedFit(tuple(float(v) for v in x), tuple(tuple(float(c) for c in row) for row in cov), scatter,
                    scatter_dof, fitted, ashift, recordsize, host)


def predict_intervals(fit: SpeedFit, layout: Layout, *, level: float = 0.9) -> dict[str, Interval]:
    """Streaming write, rewrite and read of `layout` under `fit`, each with its interval."""
    check_level(level)
    shape = layout_shape(layout, fit.recordsize, fit.ashift)
    ceiling = parity_ceiling_mb_s(layout, fit.host, fit.recordsize, fit.ashift)
    x = np.array(fit.log_values)

    def logs(v: np.ndarray) -> np.ndarray:
        s = _streaming(v, shape, ceiling)
        return np.log([s.write_mb_s, s.rewrite_mb_s, s.read_mb_s])

    center = logs(x)
    g = jacobian(logs, x)
    cov = np.array(fit.covariance)
    return {m: Interval(m, *log_interval(center[k], g[k], cov, fit.scatter[m], fit.scatter_dof[m], level), level)
            for k, m in enumerate(METRICS)}
