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

import inspect
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from scipy.optimize import least_squares

from zfslab.model.layouts import Layout
from zfslab.model.log_fit import FitError, FittedParameter  # noqa: F401  (callers import them from here)
from zfslab.model.log_fit import (DIFF_STEP, LogParameters, Parameter, check_level, check_rates, jacobian,
                                  log_interval, scatter_and_covariance, soft_l1, soft_l1_terms)
from zfslab.model.performance import (DiskProfile, HostLimits, LayoutShape, Streaming, layout_shape,
                                      parity_ceiling_mb_s, streaming_mb_s)
from zfslab.model.streaming_table import StreamingTable

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
    scatter_dof: dict[str, float]  # the Student t of a new measurement: its tails and the scatter's own uncertainty
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


_PRIOR_CENTERS = np.log([p.prior for p in PARAMETERS])


def _prior_residuals(x: np.ndarray) -> np.ndarray:
    """Each parameter's distance from its prior in prior sds; x may be a (k, 10) array of sets."""
    centers = np.broadcast_to(_PRIOR_CENTERS, np.shape(x)).copy()
    # the rewrite prior is relative: the disk's read and write in series
    centers[..., 2] = -np.log(np.exp(-x[..., 0]) + np.exp(-x[..., 1]))
    return (x - centers) / _PRIOR_SD


class _Problem:
    """The measurements against the distinct shapes they were made on, and the fit's residuals."""

    def __init__(self, measurements: Sequence[Measurement], ashift: int, recordsize: int, host: HostLimits):
        index: dict[str, int] = {}
        self.shapes: list[LayoutShape] = []
        ceilings = []
        for m in measurements:
            key = str(m.layout)
            if key not in index:
                index[key] = len(self.shapes)
                self.shapes.append(layout_shape(m.layout, recordsize, ashift))
                ceilings.append(parity_ceiling_mb_s(m.layout, host, recordsize, ashift))
        self.ceilings = ceilings
        self.table = StreamingTable(self.shapes, ceilings)
        self.shape_index = np.array([index[str(m.layout)] for m in measurements], dtype=np.intp)
        self.metric_index = np.array([METRICS.index(m.metric) for m in measurements], dtype=np.intp)
        # the distinct (shape, metric) pairs measured, and each row's: rows repeat them, a refit works on them
        self.pairs, self.pair_of_row = np.unique(self.shape_index * len(METRICS) + self.metric_index,
                                                 return_inverse=True)
        self.observed = np.array([math.log(m.mb_s) for m in measurements])
        self.metrics = np.array([m.metric for m in measurements])
        self.mb_s = np.array([m.mb_s for m in measurements])

    def without(self, drop: Sequence[int]) -> _Problem:
        """The same problem less the measurements at `drop` (the shapes stay: unused, they cost nothing)."""
        keep = np.ones(len(self.metrics), dtype=bool)
        keep[list(drop)] = False
        out = object.__new__(_Problem)
        out.shapes, out.ceilings, out.table, out.pairs = self.shapes, self.ceilings, self.table, self.pairs
        out.shape_index, out.metric_index, out.observed = self.shape_index[keep], self.metric_index[keep], self.observed[keep]
        out.pair_of_row = self.pair_of_row[keep]
        out.metrics, out.mb_s = self.metrics[keep], self.mb_s[keep]
        return out

    def pair_log_predictions(self, xs: np.ndarray) -> np.ndarray:
        """The pairs' log MB/s under each row of a (k, 10) array of log-parameters: (k, pairs)."""
        v = np.exp(xs)
        mb_s = self.table.streaming_mb_s(
            disk_write_mb_s=v[:, 0], disk_read_mb_s=v[:, 1], disk_rewrite_mb_s=v[:, 2], host_write_mb_s=v[:, 3],
            host_read_mb_s=v[:, 4], reads_in_flight=v[:, 5], rewrite_parallel=v[:, 6], vdev_pipeline_mb_s=v[:, 7],
            child_io_us=v[:, 8], parity_us_per_mb=v[:, 9])
        return np.log(mb_s.reshape(len(v), -1)[:, self.pairs])

    def log_predictions(self, x: np.ndarray) -> np.ndarray:
        """The rows' log MB/s under log-parameters x, or under each row of a (k, 10) array of them."""
        out = self.pair_log_predictions(np.atleast_2d(x))[:, self.pair_of_row]
        return out[0] if np.ndim(x) == 1 else out

    def data_residuals(self, x: np.ndarray) -> np.ndarray:
        return self.log_predictions(x) - self.observed

    def robust_residuals(self, x: np.ndarray) -> np.ndarray:
        """The fit's residuals at x, or at each row of a (k, 10) array."""
        return np.concatenate([soft_l1(self.data_residuals(x)), _prior_residuals(x)], axis=-1)


def _starts(problem: _Problem) -> list[np.ndarray]:
    """Deterministic starting points: rates from the smallest pools, ceilings from the fastest."""
    x = np.log([p.prior for p in PARAMETERS])
    for metric, disk, host, per in (("write", 0, 3, "data_disks"), ("read", 1, 4, "read_children")):
        rows = [(float(y), problem.shapes[k]) for y, m, k in zip(problem.mb_s, problem.metrics, problem.shape_index)
                if m == metric]
        if rows:
            small, shape = min(rows, key=lambda r: getattr(r[1], per))
            x[disk] = math.log(small / getattr(shape, per))
            x[host] = math.log(1.5 * max(y for y, _ in rows))
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


# scipy 1.16 hands least_squares' finite differences to a map-like `workers`: one call of the
# vectorised model for all ten points (the same points and arithmetic as without it)
_BATCHED = (lambda f: {"workers": f}) if "workers" in inspect.signature(least_squares).parameters else (lambda f: {})


def fit_speed(measurements: Sequence[Measurement], *, ashift: int = 12, recordsize: int = 128 * KiB,
              host: HostLimits | None = None, fixed: dict[str, float] | None = None,
              start: SpeedFit | None = None) -> SpeedFit:
    """Fit the ten parameters on measured pools; `host` brings known facts (the CPU's parity rates),
    `fixed` holds parameters known beforehand (they keep their value and get no interval), and
    `start` a fit on nearly the same rows to start from alone (a leave-one-out refit)."""
    check_measurements(measurements)
    fixed = dict(fixed or {})
    _check_fixed(fixed)
    host = HostLimits() if host is None else host
    return _solve(_Problem(measurements, ashift, recordsize, host), fixed, start, ashift, recordsize, host)


def fits_leaving_out(measurements: Sequence[Measurement], left_out: Sequence[Sequence[int]], *, start: SpeedFit,
                     ashift: int = 12, recordsize: int = 128 * KiB,
                     host: HostLimits | None = None) -> Iterator[SpeedFit]:
    """For each set of indices in `left_out`, the fit on all the other measurements (validate --loo):
    the minimum of the same objective less those rows, found by Newton steps from `start` (the fit
    on them all) to within REFIT_TOL, or where they do not get there by fit_speed(others, start=start)."""
    check_measurements(measurements)
    host = HostLimits() if host is None else host
    problem = _Problem(measurements, ashift, recordsize, host)
    refits = _Refits(problem, np.array(start.log_values))
    for drop in left_out:
        part = problem.without(drop)
        if not len(part.metrics):
            raise FitError("nothing to fit: give at least one measured pool")
        at = refits.refit(drop)
        if at is None:
            yield _solve(part, {}, start, ashift, recordsize, host)
        else:
            yield _speed_fit(part, at.x, at.logs[part.pair_of_row] - part.observed, at.jac, at.prior_jac,
                             np.ones(len(NAMES), dtype=bool), ashift, recordsize, host, g_of_row=part.pair_of_row)


def _solve(problem: _Problem, fixed: dict[str, float], start: SpeedFit | None, ashift: int, recordsize: int,
           host: HostLimits) -> SpeedFit:
    free = np.array([name not in fixed for name in NAMES])
    pinned = np.log([fixed.get(name, 1.0) for name in NAMES])
    rows = len(problem.metrics)
    everything_free = bool(free.all())

    def full(z: np.ndarray) -> np.ndarray:
        x = np.broadcast_to(pinned, np.shape(z)[:-1] + pinned.shape).copy()
        x[..., free] = z
        return x

    def residuals(z: np.ndarray) -> np.ndarray:
        """At one z, or at each row of a (k, free) array."""
        r = problem.robust_residuals(full(z))
        return r if everything_free else np.concatenate([r[..., :rows], r[..., rows:][..., free]], axis=-1)

    def evaluate_all(_, zs):
        """least_squares' finite differences, all points in one call of the vectorised model."""
        return list(residuals(np.array(list(zs))))

    best = None
    starts = [np.clip(np.array(start.log_values), _LOW + 1e-9, _HIGH - 1e-9)] if start else _starts(problem)
    for x0 in starts:
        with np.errstate(all="ignore"):
            res = least_squares(residuals, x0[free], bounds=(_LOW[free], _HIGH[free]), x_scale=1.0,
                                **_BATCHED(evaluate_all))
        if best is None or res.cost < best.cost - 1e-12:
            best = res
    g = jacobian(lambda z: problem.log_predictions(full(z)), best.x, batched=True)
    prior_j = jacobian(lambda z: _prior_residuals(full(z))[..., free], best.x, batched=True)
    x = full(best.x)
    return _speed_fit(problem, x, problem.data_residuals(x), g, prior_j, free, ashift, recordsize, host)


def _speed_fit(problem: _Problem, x: np.ndarray, residuals: np.ndarray, g: np.ndarray, prior_j: np.ndarray,
               free: np.ndarray, ashift: int, recordsize: int, host: HostLimits,
               g_of_row: np.ndarray | None = None) -> SpeedFit:
    """The fit at its optimum x, given there the rows' log residuals and the Jacobians of their
    log predictions (rows x free parameters, or the pairs' with g_of_row) and of the prior terms."""
    scatter, scatter_dof, cov_free = scatter_and_covariance(g, prior_j, residuals, problem.metrics, METRICS,
                                                            g_of_row=g_of_row)
    cov = np.zeros((len(NAMES), len(NAMES)))
    cov[np.ix_(free, free)] = cov_free
    measured = set(problem.metric_index.tolist())
    fitted = tuple(m for k, m in enumerate(METRICS) if k in measured)
    return SpeedFit(tuple(float(v) for v in x), tuple(tuple(float(c) for c in row) for row in cov), scatter,
                    scatter_dof, fitted, ashift, recordsize, host)


# ---- leave-one-out refits --------------------------------------------------------------------------

REFIT_TOL = 1e-7  # log units: a refit stops where Newton's next step would move no parameter by more
REFIT_MAX_STEPS = 20  # a refit not there by then (a kink of the model's min() at its optimum) goes to least_squares
_AT_BOUND = 1e-6  # log units: a parameter this near a bound its gradient pushes against is held on it


@dataclass(frozen=True, slots=True)
class _Local:
    """The objective's pieces near x that no row's weight changes: the log predictions of the
    problem's (shape, metric) pairs and their Jacobian, the prior terms and theirs."""

    x: np.ndarray
    logs: np.ndarray  # (pairs,)
    jac: np.ndarray  # (pairs, 10)
    prior: np.ndarray
    prior_jac: np.ndarray


class _Refits:
    """The fit less a few rows, as the minimum of the same objective (least_squares' cost: half the
    summed soft-L1 and prior terms, within the bounds) reached by projected Newton steps from the
    fit on every row. Each step: the model at 21 points (x and the central differences) for the
    distinct (shape, metric) pairs only, then sums over the rows with the left-out ones weighted 0."""

    def __init__(self, problem: _Problem, x: np.ndarray):
        self.problem = problem
        self.start = self._local(np.clip(x, _LOW, _HIGH))  # shared by every refit's first step

    def _local(self, x: np.ndarray) -> _Local:
        e = np.eye(len(x)) * DIFF_STEP  # log_fit.jacobian's differences: the covariance's Jacobian
        with np.errstate(all="ignore"):
            logs = self.problem.pair_log_predictions(np.concatenate([x[None], x + e, x - e]))
        jac = ((logs[1:len(x) + 1] - logs[len(x) + 1:]) / (2 * DIFF_STEP)).T
        return _Local(x, logs[0], jac, _prior_residuals(x), jacobian(_prior_residuals, x, batched=True))

    def _objective(self, at: _Local, weight: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """The cost at `at`, its gradient, and the Gauss-Newton matrix with the loss's own curvature
        (positive definite: the prior terms alone make it so)."""
        rows = self.problem.pair_of_row
        loss, slope, curvature = soft_l1_terms(at.logs[rows] - self.problem.observed)
        pairs = len(at.logs)
        g = at.jac.T @ np.bincount(rows, weight * slope, minlength=pairs) + at.prior_jac.T @ at.prior
        pair_curvature = np.bincount(rows, weight * curvature, minlength=pairs)
        h = at.jac.T @ (at.jac * pair_curvature[:, None]) + at.prior_jac.T @ at.prior_jac
        return float(weight @ loss + 0.5 * at.prior @ at.prior), g, h

    def refit(self, drop: Sequence[int]) -> _Local | None:
        """The optimum without the rows at `drop`, or None if the steps do not get there."""
        weight = np.ones(len(self.problem.observed))
        weight[list(drop)] = 0.0
        at = self.start
        cost, g, h = self._objective(at, weight)
        for _ in range(REFIT_MAX_STEPS):
            step = _newton_step(at.x, g, h)
            if not np.isfinite(step).all():
                return None
            if np.max(np.abs(step)) <= REFIT_TOL:
                return at
            while True:  # backtrack until the cost falls (Armijo), allowing its rounding
                new = self._local(at.x + step)
                new_cost, new_g, new_h = self._objective(new, weight)
                if new_cost <= cost + 1e-4 * float(g @ step) + 1e-12 * abs(cost):
                    break
                step = step / 2
                if np.max(np.abs(step)) <= REFIT_TOL:
                    return None
            at, cost, g, h = new, new_cost, new_g, new_h
        return None


def _newton_step(x: np.ndarray, g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The projected Newton step: a parameter at (or within _AT_BOUND of) a bound its gradient
    pushes against goes onto it and stays; the others take Newton's step, clipped to the bounds."""
    held = ((x <= _LOW + _AT_BOUND) & (g > 0)) | ((x >= _HIGH - _AT_BOUND) & (g < 0))
    d = np.where(g > 0, _LOW, _HIGH) - x
    free = ~held
    d[free] = np.linalg.solve(h[np.ix_(free, free)], -g[free])
    return np.clip(x + d, _LOW, _HIGH) - x


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
