"""Check the speed model on a published table: fit on the calibration rows, predict the rest.

A dataset row: disks, kind (stripe|mirror|raidz1|raidz2|raidz3), vdevs, width, any of
write_MBps / rewrite_MBps / read_MBps, and calibration (1 = may be fitted on). The fitted
parameters are the physical ones of performance.py: per-disk streaming rates, the host's
write and read ceilings, a disk's rewrite rate and the rewrite parallel share.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from zfslab.errors import LayoutError, UsageError, clip, shown
from zfslab.model.layouts import MAX_CHILDREN, MAX_POOL_DISKS, Layout, VdevGroup, VdevKind
from zfslab.model.performance import DiskProfile, HostLimits, data_disks, predict, read_disks
from zfslab.model.units import FLOAT_RE

METRICS = ("write", "rewrite", "read")
KINDS = ("stripe", "mirror", "raidz1", "raidz2", "raidz3")
UNBOUNDED = 1e7  # MB/s: a ceiling the data never reaches


@dataclass(frozen=True, slots=True)
class DatasetRow:
    index: int
    layout: Layout
    measured: dict[str, float]
    calibration: bool


# Measured MB/s a dataset may hold: the fit works on logarithms bounded at e^-5 and 1e7
MIN_MB_S, MAX_MB_S = 0.1, 1e6
MAX_ROWS = 1000
_WHOLE_RE = re.compile(r"\s*[0-9]{1,6}\s*", re.ASCII)


def row_layout(disks: int, kind: str, vdevs: int, width: int, index: int) -> Layout:
    where = f"row {index}"
    if kind not in KINDS:
        raise UsageError(f"{where}: kind {clip(kind)}: use one of {', '.join(KINDS)}")
    if vdevs < 1 or width < 1:
        raise UsageError(f"{where}: vdevs and width must be at least 1, got {vdevs} and {width}")
    if vdevs * width != disks:
        raise UsageError(f"{where}: {vdevs} vdevs x width {width} is {vdevs * width} disks, but disks says {disks}")
    if disks > MAX_POOL_DISKS or width > MAX_CHILDREN:
        raise UsageError(f"{where}: at most {MAX_POOL_DISKS} disks and {MAX_CHILDREN} per vdev, got {disks} and {width}")
    try:
        if kind == "stripe":
            if width != 1:
                raise UsageError(f"{where}: a stripe has width 1 (one disk per vdev), got {width}")
            return Layout((VdevGroup(VdevKind.DISK, 1, 0, vdevs),))
        if kind == "mirror":
            return Layout((VdevGroup(VdevKind.MIRROR, width, width - 1, vdevs),))
        parity = int(kind[-1])
        return Layout((VdevGroup(VdevKind.RAIDZ, width, parity, vdevs),))
    except LayoutError as e:
        raise UsageError(f"{where}: {e}") from None


def _cell(r: dict, column: str) -> str:
    """A cell as text: a short row leaves None (csv's restval), a long one a list under None."""
    value = r.get(column)
    return value.strip() if isinstance(value, str) else ""


def parse_dataset(records: Sequence[dict[str, str]]) -> list[DatasetRow]:
    """Rows from CSV records (dicts of strings), checked with one-line errors naming the row."""
    if not records:
        raise UsageError("the dataset has no rows: give a header line and one line per measured pool")
    if len(records) > MAX_ROWS:
        raise UsageError(f"the dataset has {len(records)} rows; validate takes at most {MAX_ROWS}")
    for column in ("disks", "kind", "vdevs", "width"):
        if column not in records[0]:
            raise UsageError(f"the dataset needs a column {column!r} (disks,kind,vdevs,width)")
    if not any(f"{m}_MBps" in records[0] for m in METRICS):
        raise UsageError("the dataset has no measurements: give at least one column of write_MBps, rewrite_MBps, "
                         "read_MBps")
    rows = []
    for i, r in enumerate(records):
        texts = [_cell(r, c) for c in ("disks", "vdevs", "width")]
        if not all(_WHOLE_RE.fullmatch(t) for t in texts):
            raise UsageError(f"row {i}: disks, vdevs and width must be whole numbers, got "
                             f"{', '.join(clip(t, 20) for t in texts)}")
        disks, vdevs, width = (int(t) for t in texts)
        measured = {}
        for m in METRICS:
            text = _cell(r, f"{m}_MBps")
            if text:
                value = float(text) if FLOAT_RE.fullmatch(text) else math.nan
                if math.isnan(value):
                    raise UsageError(f"row {i}: {m}_MBps {clip(text)} is not a number")
                if not MIN_MB_S <= value <= MAX_MB_S:
                    raise UsageError(f"row {i}: {m}_MBps must be from {MIN_MB_S:g} to {MAX_MB_S:g} MB/s, got {shown(text)}")
                measured[m] = value
        cal = _cell(r, "calibration") or "0"
        if cal not in ("0", "1"):
            raise UsageError(f"row {i}: calibration is 1 (fit on it) or 0 (predict it), got {clip(cal)}")
        rows.append(DatasetRow(i, row_layout(disks, _cell(r, "kind"), vdevs, width, i), measured, cal == "1"))
    if not any(r.calibration for r in rows):
        raise UsageError("no row has calibration=1: mark the rows the model may be fitted on")
    if not any(r.calibration and r.measured for r in rows):
        raise UsageError("no calibration row has a measured value: nothing to fit the model on")
    return rows


@dataclass(frozen=True, slots=True)
class Fitted:
    disk: DiskProfile
    host: HostLimits


def _fit(rows: list[DatasetRow], metric: str, make, x0: list[float]) -> np.ndarray:
    cal = [r for r in rows if r.calibration and metric in r.measured]
    if not cal:
        return np.log(np.array(x0))

    def residuals(logx):
        return [math.log(getattr(make(np.exp(logx)).__call__(r.layout), f"{metric}_mb_s") / r.measured[metric])
                for r in cal]
    upper = np.log(np.full(len(x0), UNBOUNDED))
    res = least_squares(residuals, np.log(np.array(x0)), bounds=(np.full(len(x0), -5.0), upper))
    return res.x


def fit(rows: list[DatasetRow], ashift: int) -> Fitted:
    """Fit the physical parameters on the calibration rows (least squares of log ratios)."""
    cal = [r for r in rows if r.calibration]
    smallest = min(cal, key=lambda r: r.layout.disks)
    base = {m: smallest.measured.get(m, 100.0) for m in METRICS}
    disk = DiskProfile("fitted", base["read"], base["write"], 100, 200, 200, 10.0)
    host = HostLimits(UNBOUNDED, UNBOUNDED, 0.2)

    def model(d: DiskProfile, h: HostLimits):
        return lambda layout: predict(layout, d, h, ashift=ashift)

    w = np.exp(_fit(rows, "write", lambda x: model(_with(disk, seq_write_mb_s=x[0]), _with(host, write_mb_s=x[1])),
                    [base["write"], 10 * base["write"]]))
    disk, host = _with(disk, seq_write_mb_s=w[0]), _with(host, write_mb_s=w[1])
    r = np.exp(_fit(rows, "read", lambda x: model(_with(disk, seq_read_mb_s=x[0]), _with(host, read_mb_s=x[1])),
                    [base["read"], 10 * base["read"]]))
    disk, host = _with(disk, seq_read_mb_s=r[0]), _with(host, read_mb_s=r[1])
    rw = np.exp(_fit(rows, "rewrite", lambda x: model(_with(disk, rewrite_mb_s=x[0]), _with(host, rewrite_parallel=min(x[1], 1.0))),
                     [base["rewrite"], 0.3]))
    return Fitted(_with(disk, rewrite_mb_s=rw[0]), _with(host, rewrite_parallel=min(rw[1], 1.0)))


def _with(obj, **changes):
    from dataclasses import replace
    return replace(obj, **changes)


def baseline(rows: list[DatasetRow], metric: str, row: DatasetRow, ashift: int) -> float | None:
    """The rule of thumb: proportional to data disks (mirror reads: to all disks), capped at the
    best calibration row; the proportion from the smallest calibration row."""
    cal = [r for r in rows if r.calibration and metric in r.measured]
    if not cal:
        return None

    def units(layout: Layout) -> float:
        g = layout.groups[0]
        if metric == "read" and g.kind is VdevKind.MIRROR:
            return float(layout.disks)
        if g.kind is VdevKind.RAIDZ:
            return float(g.count * (g.width - g.parity))
        return float(g.count)

    smallest = min(cal, key=lambda r: units(r.layout))
    per_unit = smallest.measured[metric] / units(smallest.layout)
    cap = max(r.measured[metric] for r in cal)
    return min(per_unit * units(row.layout), cap)


def validate(rows: list[DatasetRow], *, ashift: int = 12) -> dict:
    """Per-row predictions and the median absolute percentage error of the predicted rows."""
    fitted = fit(rows, ashift)
    out_rows, errors, base_errors = [], {m: [] for m in METRICS}, {m: [] for m in METRICS}
    for row in rows:
        p = predict(row.layout, fitted.disk, fitted.host, ashift=ashift)
        predicted = {m: getattr(p, f"{m}_mb_s") for m in METRICS}
        rule = {m: baseline(rows, m, row, ashift) for m in METRICS}
        for m, meas in row.measured.items():
            if not row.calibration:
                errors[m].append(abs(predicted[m] - meas) / meas * 100)
                if rule[m] is not None:
                    base_errors[m].append(abs(rule[m] - meas) / meas * 100)
        out_rows.append({"index": row.index, "layout": str(row.layout), "calibration": row.calibration,
                         "predicted": predicted, "measured": dict(row.measured), "rule_of_thumb": rule})

    def summary(errs):
        return {m: {"median_ape_pct": statistics.median(e) if e else None, "rows": len(e)} for m, e in errs.items()}

    fitted_metrics = [m for m in METRICS if any(r.calibration and m in r.measured for r in rows)]
    return {
        "rows": out_rows, "metrics": summary(errors), "baseline": summary(base_errors), "ashift": ashift,
        "fitted_metrics": fitted_metrics,
        "parameters": {
            "disk_seq_write_mb_s": fitted.disk.seq_write_mb_s, "disk_seq_read_mb_s": fitted.disk.seq_read_mb_s,
            "disk_rewrite_mb_s": fitted.disk.single_rewrite_mb_s, "host_write_mb_s": fitted.host.write_mb_s,
            "host_read_mb_s": fitted.host.read_mb_s, "rewrite_parallel": fitted.host.rewrite_parallel,
        },
    }
