"""Fit the random path of the speed model (4 KiB random read, write and sync-write IOPS at the Ars
Technica points) on measured pools, and predict any layout with an interval (docs/speed.md#fitting-iops).

A second stage after model/speed_fit.py, on purpose: the streaming fit is left exactly as it was
(validate's figures do not move), and the random writes take the pool's streaming write rate
from it, held fixed, for the record each 4 KiB write dirties. Six physical parameters
(PARAMETERS) are fitted in log space the same way: bounded least squares of log ratios with a
soft-L1 loss, one prior term per parameter, the covariance from the Jacobian with each metric's
scatter from its residuals, Student's t for the intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from scipy.optimize import least_squares

from zfslab.model.layouts import Layout
from zfslab.model.log_fit import FitError  # noqa: F401  (callers import it from here)
from zfslab.model.log_fit import (LogParameters, Parameter, check_level, check_rates, jacobian, log_interval,
                                  scatter_and_covariance, soft_l1)
from zfslab.model.performance import DiskProfile, RandomIops, predict, random_iops, random_read_servers

KiB = 1024
BLOCK = 4 * KiB
# the measured columns, named as SpeedPrediction names them
METRICS = ("rand_read_iops_qd1", "rand_read_iops_qd8", "rand_write_iops_qd1", "rand_write_iops_qd8",
           "sync_write_iops_qd1", "sync_write_iops_qd8")
_FIELD = dict(zip(METRICS, ("read_qd1", "read_qd8", "write_qd1", "write_qd8", "sync_qd1", "sync_qd8")))

PARAMETERS = (
    Parameter("disk_read_iops_qd1", "rand_read_iops_qd1", 80, 1.5, 1, 1e7,
              "the disk type's preset (hdd7200: 1/(8.2 ms seek + 4.17 ms half a revolution) = 80); "
              "one sd spans 5400 rpm disks to a few SSDs' worth"),
    Parameter("disk_read_iops_qd8", "rand_read_iops_qd8", 140, 1.5, 1, 1e7,
              "the disk type's preset (hdd7200: 140, command queueing shortening the seeks)"),
    Parameter("host_read_iops", "rand_read_iops_qd8", 50_000, 1.5, 100, 1e8,
              "20 us of host time per read: one child I/O through the zio pipeline (7 us, libzpool, "
              "benchmarks/write_cpu_cost.py) plus the 128 KiB record's checksum and copy (~13 us at ~10 GB/s)"),
    Parameter("read_modify_write", "rand_write_iops_qd1", 1.0, 1.0, 1e-3, 1,
              "bench's primarycache=metadata keeps data out of the ARC, so a 4 KiB write into a 128 KiB record "
              "reads the record first (dmu_write: dmu_buf_will_dirty -> dbuf_read, module/zfs/dmu.c, dbuf.c); "
              "half-normal in log below that"),
    Parameter("sync_write_ms", "sync_write_iops_qd1", 12.0, 1.5, 0.005, 1000,
              "the disk type's preset (hdd7200: a log write and a cache flush, about 1.5 revolutions)"),
    Parameter("sync_batch", "sync_write_iops_qd8", 1.0, 1.0, 1, 8,
              "none: each fsync its own commit (the model before issue 15); zil_commit() lets concurrent "
              "fsyncs wait on one log write block (module/zfs/zil.c), up to the 8 writers"),
)
NAMES = tuple(p.name for p in PARAMETERS)
_LOW = np.log([p.low for p in PARAMETERS])
_HIGH = np.log([p.high for p in PARAMETERS])
_PRIOR_SD = np.array([p.prior_log_sd for p in PARAMETERS])
# parameters whose prior is the disk type's preset's own figure
_FROM_PRESET = {"disk_read_iops_qd1": "rand_read_iops_qd1", "disk_read_iops_qd8": "rand_read_iops_qd8",
                "sync_write_ms": "sync_write_ms"}


@dataclass(frozen=True, slots=True)
class IopsMeasurement:
    """One measured random-I/O rate of one pool (the median of a test's repeats)."""

    layout: Layout
    metric: str  # one of METRICS
    iops: float


@dataclass(frozen=True, slots=True)
class IopsInterval:
    metric: str
    iops: float
    low_iops: float
    high_iops: float
    level: float


@dataclass(frozen=True, slots=True)
class IopsFit(LogParameters):
    """Fitted log-parameters of the random path, their covariance and each metric's scatter."""

    PARAMETERS: ClassVar[tuple[Parameter, ...]] = PARAMETERS

    log_values: tuple[float, ...]
    prior_values: tuple[float, ...]  # the prior medians used (the preset's figures where they come from it)
    covariance: tuple[tuple[float, ...], ...]
    scatter: dict[str, float]
    scatter_dof: dict[str, float]
    fitted_metrics: tuple[str, ...]
    streaming: DiskProfile  # the (fitted) streaming profile the random writes take their write-back rate from
    ashift: int
    recordsize: int

    def profile(self, base: DiskProfile) -> DiskProfile:
        """`base` with the fitted random-path figures (disk IOPS, sync latency, host read path)."""
        v = self.values
        host = replace(base.host, read_iops=v["host_read_iops"], read_modify_write=v["read_modify_write"],
                       sync_batch=v["sync_batch"])
        return replace(base, rand_read_iops_qd1=v["disk_read_iops_qd1"], rand_read_iops_qd8=v["disk_read_iops_qd8"],
                       sync_write_ms=v["sync_write_ms"], host=host)


@dataclass(frozen=True, slots=True)
class _Shape:
    servers: float
    vdevs: int
    write_mb_s: float


def _shape(layout: Layout, streaming: DiskProfile, recordsize: int, ashift: int) -> _Shape:
    write = predict(layout, streaming, recordsize=recordsize, ashift=ashift).write_mb_s
    return _Shape(random_read_servers(layout, recordsize, ashift), layout.top_level_vdevs, write)


def _iops(x: np.ndarray, s: _Shape, recordsize: int) -> RandomIops:
    v = np.exp(x)
    return random_iops(servers=s.servers, vdevs=s.vdevs, write_mb_s=s.write_mb_s, recordsize=recordsize,
                       block_size=BLOCK, disk_read_iops_qd1=v[0], disk_read_iops_qd8=v[1], host_read_iops=v[2],
                       read_modify_write=v[3], sync_write_ms=v[4], sync_batch=v[5])


def check_iops_measurements(measurements: Sequence[IopsMeasurement]) -> None:
    """Raise FitError naming the first measurement no fit can use."""
    check_rates([(m.layout, m.metric, m.iops) for m in measurements], METRICS, "IOPS", "measured random-I/O rate")


def _priors(base: DiskProfile) -> np.ndarray:
    values = [getattr(base, _FROM_PRESET[p.name]) if p.name in _FROM_PRESET else p.prior for p in PARAMETERS]
    return np.clip(np.log(values), _LOW, _HIGH)


def fit_iops(measurements: Sequence[IopsMeasurement], *, streaming: DiskProfile, ashift: int = 12,
             recordsize: int = 128 * KiB) -> IopsFit:
    """Fit the six random-path parameters on measured pools. `streaming` is the profile whose
    predicted streaming write is each pool's write-back rate (the streaming fit's, or a preset);
    its random-path figures are the priors of the three parameters a preset gives."""
    check_iops_measurements(measurements)
    shapes: dict[str, _Shape] = {}
    for m in measurements:
        if str(m.layout) not in shapes:
            shapes[str(m.layout)] = _shape(m.layout, streaming, recordsize, ashift)
    rows = [(shapes[str(m.layout)], _FIELD[m.metric], math.log(m.iops)) for m in measurements]
    metrics = np.array([m.metric for m in measurements])
    prior = _priors(streaming)
    observed = np.array([y for _, _, y in rows])

    def log_predictions(x: np.ndarray) -> np.ndarray:
        cache: dict[int, RandomIops] = {}
        out = []
        for shape, field, _ in rows:
            r = cache.get(id(shape))
            if r is None:
                r = cache[id(shape)] = _iops(x, shape, recordsize)
            out.append(math.log(getattr(r, field)))
        return np.array(out)

    def prior_residuals(x: np.ndarray) -> np.ndarray:
        return (x - prior) / _PRIOR_SD

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.concatenate([soft_l1(log_predictions(x) - observed), prior_residuals(x)])  # as the streaming fit

    best = None
    for x0 in _starts(prior, measurements, shapes):
        with np.errstate(all="ignore"):
            res = least_squares(residuals, x0, bounds=(_LOW, _HIGH), x_scale=1.0)
        if best is None or res.cost < best.cost - 1e-12:
            best = res
    x = best.x
    g = jacobian(log_predictions, x)
    prior_j = np.diag(1.0 / _PRIOR_SD)
    scatter, scatter_dof, cov = scatter_and_covariance(g, prior_j, log_predictions(x) - observed, metrics, METRICS)
    fitted = tuple(m for m in METRICS if m in set(metrics))
    return IopsFit(tuple(float(v) for v in x), tuple(float(math.exp(v)) for v in prior),
                   tuple(tuple(float(c) for c in row) for row in cov), scatter, scatter_dof, fitted, streaming,
                   ashift, recordsize)


def _starts(prior: np.ndarray, measurements: Sequence[IopsMeasurement], shapes: dict[str, _Shape]) -> list[np.ndarray]:
    """The priors, and the disk figures read off the pools with the fewest read servers."""
    x = prior.copy()
    for metric, i, per in (("rand_read_iops_qd1", 0, lambda s: 1.0), ("rand_read_iops_qd8", 1, lambda s: s.servers)):
        rows = [m for m in measurements if m.metric == metric]
        if rows:
            m = min(rows, key=lambda m: shapes[str(m.layout)].servers)
            x[i] = math.log(m.iops / per(shapes[str(m.layout)]))
    rows = [m for m in measurements if m.metric == "sync_write_iops_qd1"]
    if rows:
        x[4] = math.log(1000.0 / max(m.iops for m in rows))
    return [np.clip(s, _LOW + 1e-9, _HIGH - 1e-9) for s in (x, prior)]


def predict_iops_intervals(fit: IopsFit, layout: Layout, *, level: float = 0.9) -> dict[str, IopsInterval]:
    """The six random-I/O rates of `layout` under `fit`, each with its interval."""
    check_level(level)
    shape = _shape(layout, fit.streaming, fit.recordsize, fit.ashift)
    x = np.array(fit.log_values)

    def logs(v: np.ndarray) -> np.ndarray:
        r = _iops(v, shape, fit.recordsize)
        return np.log([getattr(r, _FIELD[m]) for m in METRICS])

    center = logs(x)
    g = jacobian(logs, x)
    cov = np.array(fit.covariance)
    return {m: IopsInterval(m, *log_interval(center[k], g[k], cov, fit.scatter[m], fit.scatter_dof[m], level), level)
            for k, m in enumerate(METRICS)}
