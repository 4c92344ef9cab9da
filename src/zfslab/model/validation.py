"""Check the speed model on a published table: fit on the fit rows, predict the rest.

A dataset row: disks, kind (stripe|mirror|raidz1|raidz2|raidz3), vdevs, width, any of
write_MBps / rewrite_MBps / read_MBps, and calibration (1 = may be fitted on). With
calibration "auto" the column is ignored and the design rule of calibration.py chooses at most
a third of the rows from their layouts alone. The fit and its intervals are speed_fit.py's.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from scipy.stats import spearmanr

from zfslab.errors import LayoutError, DatasetError, clip, shown
from zfslab.model.calibration import calibration_design
from zfslab.model.layouts import Layout, MAX_CHILDREN, MAX_POOL_DISKS, VdevGroup, VdevKind
from zfslab.model.speed_fit import (METRICS, FitError, Measurement, SpeedFit, fit_speed, fits_leaving_out,
                                    predict_intervals)
from zfslab.model.units import FLOAT_RE

KINDS = ("stripe", "mirror", "raidz1", "raidz2", "raidz3")
CALIBRATION_MODES = ("csv", "auto")
MIN_AUTO_ROWS = 3  # one row to fit on and two to check it on
LEVEL = 0.9  # the intervals' level


@dataclass(frozen=True, slots=True)
class DatasetRow:
    index: int
    layout: Layout
    measured: dict[str, float]
    fit_row: bool  # the model is fitted on it (the CSV's calibration column); else predicted and scored


# Measured MB/s a dataset may hold: the fit works on logarithms bounded at e^-5 and 1e7
MIN_MB_S, MAX_MB_S = 0.1, 1e6
MAX_ROWS = 1000
# validate --loo: 3-4 s of CPU at 1,000 rows of calomel's 26 layouts, 10 s at 1,000 distinct layouts
# (benchmarks/validate_loo.py): a refit's steps cost in proportion to the rows and the distinct layouts
MAX_LOO_ROWS = MAX_ROWS
_WHOLE_RE = re.compile(r"\s*[0-9]{1,6}\s*", re.ASCII)


def row_layout(disks: int, kind: str, vdevs: int, width: int, index: int) -> Layout:
    where = f"row {index}"
    if kind not in KINDS:
        raise DatasetError(f"{where}: kind {clip(kind)}: use one of {', '.join(KINDS)}")
    if vdevs < 1 or width < 1:
        raise DatasetError(f"{where}: vdevs and width must be at least 1, got {vdevs} and {width}")
    if vdevs * width != disks:
        raise DatasetError(f"{where}: {vdevs} vdevs x width {width} is {vdevs * width} disks, but disks says {disks}")
    if disks > MAX_POOL_DISKS or width > MAX_CHILDREN:
        raise DatasetError(f"{where}: at most {MAX_POOL_DISKS} disks and {MAX_CHILDREN} per vdev, got {disks} and {width}")
    try:
        if kind == "stripe":
            if width != 1:
                raise DatasetError(f"{where}: a stripe has width 1 (one disk per vdev), got {width}")
            return Layout((VdevGroup(VdevKind.DISK, 1, 0, vdevs),))
        if kind == "mirror":
            return Layout((VdevGroup(VdevKind.MIRROR, width, width - 1, vdevs),))
        parity = int(kind[-1])
        return Layout((VdevGroup(VdevKind.RAIDZ, width, parity, vdevs),))
    except LayoutError as e:
        raise DatasetError(f"{where}: {e}") from None


def _cell(r: dict, column: str) -> str:
    """A cell as text: a short row leaves None (csv's restval), a long one a list under None."""
    value = r.get(column)
    return value.strip() if isinstance(value, str) else ""


def parse_dataset(records: Sequence[dict[str, str]], *, calibration: str = "csv") -> list[DatasetRow]:
    """Rows from CSV records (dicts of strings), checked with one-line errors naming the row.

    calibration "csv" takes the rows marked calibration=1; "auto" ignores that column and marks
    the rows the design rule chooses (model/calibration.py).
    """
    if calibration not in CALIBRATION_MODES:
        raise DatasetError(f"calibration {clip(calibration)}: use one of {', '.join(CALIBRATION_MODES)}")
    if not records:
        raise DatasetError("the dataset has no rows: give a header line and one line per measured pool")
    if len(records) > MAX_ROWS:
        raise DatasetError(f"the dataset has {len(records)} rows; validate takes at most {MAX_ROWS}")
    for column in ("disks", "kind", "vdevs", "width"):
        if column not in records[0]:
            raise DatasetError(f"the dataset needs a column {column!r} (disks,kind,vdevs,width)")
    if not any(f"{m}_MBps" in records[0] for m in METRICS):
        raise DatasetError("the dataset has no measurements: give at least one column of write_MBps, rewrite_MBps, "
                         "read_MBps")
    rows = []
    for i, r in enumerate(records):
        texts = [_cell(r, c) for c in ("disks", "vdevs", "width")]
        if not all(_WHOLE_RE.fullmatch(t) for t in texts):
            raise DatasetError(f"row {i}: disks, vdevs and width must be whole numbers, got "
                             f"{', '.join(clip(t, 20) for t in texts)}")
        disks, vdevs, width = (int(t) for t in texts)
        measured = {}
        for m in METRICS:
            text = _cell(r, f"{m}_MBps")
            if text:
                value = float(text) if FLOAT_RE.fullmatch(text) else math.nan
                if math.isnan(value):
                    raise DatasetError(f"row {i}: {m}_MBps {clip(text)} is not a number")
                if not MIN_MB_S <= value <= MAX_MB_S:
                    raise DatasetError(f"row {i}: {m}_MBps must be from {MIN_MB_S:g} to {MAX_MB_S:g} MB/s, got {shown(text)}")
                measured[m] = value
        cal = _cell(r, "calibration") or "0"
        if calibration == "auto":
            cal = "0"
        elif cal not in ("0", "1"):
            raise DatasetError(f"row {i}: calibration is 1 (fit on it) or 0 (predict it), got {clip(cal)}")
        rows.append(DatasetRow(i, row_layout(disks, _cell(r, "kind"), vdevs, width, i), measured, cal == "1"))
    if calibration == "auto":
        rows = auto_fit_rows(rows)
    if not any(r.fit_row for r in rows):
        raise DatasetError("no row has calibration=1: mark the rows the model may be fitted on, or pass `calibration=auto`")
    if not any(r.fit_row and r.measured for r in rows):
        raise DatasetError("no calibration row has a measured value: nothing to fit the model on")
    return rows


def baseline(rows: list[DatasetRow], metric: str, row: DatasetRow, ashift: int) -> float | None:
    """The rule of thumb: proportional to data disks (mirror reads: to all disks), capped at the
    best fit row; the proportion from the smallest fit row."""
    cal = [r for r in rows if r.fit_row and metric in r.measured]
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




def auto_fit_rows(rows: list[DatasetRow]) -> list[DatasetRow]:
    """The rows with fit_row set by the measurement design (at most a third of them)."""
    if len(rows) < MIN_AUTO_ROWS:
        raise DatasetError(f"too few rows to fit and check: `calibration=auto` needs at least {MIN_AUTO_ROWS} measured "
                         f"pools, got {len(rows)}")
    chosen = {p.index for p in calibration_design([r.layout for r in rows])}
    return [replace(r, fit_row=i in chosen) for i, r in enumerate(rows)]


def measurements(rows: Sequence[DatasetRow]) -> list[Measurement]:
    return [Measurement(r.layout, m, v) for r in rows for m, v in r.measured.items()]


def _fit(rows: Sequence[DatasetRow], ashift: int, start: SpeedFit | None = None) -> SpeedFit:
    try:
        return fit_speed(measurements(rows), ashift=ashift, start=start)
    except FitError as e:
        raise DatasetError(str(e)) from None


def _spearman(predicted: list[float], measured: list[float]) -> float | None:
    if len(predicted) < 3 or len(set(predicted)) < 2 or len(set(measured)) < 2:
        return None
    return float(spearmanr(predicted, measured).statistic)


COVERAGE_TARGET = 0.85  # issue 35: 90 % intervals that hold 85-95 % of the rows they did not see


def _pair(p, y: float) -> tuple[float, float, bool, float]:
    """(predicted, measured, inside the interval, the interval's relative half-width in %)."""
    return p.mb_s, y, p.low_mb_s <= y <= p.high_mb_s, 50 * (p.high_mb_s - p.low_mb_s) / p.mb_s


def _summary(pairs: dict[str, list[tuple[float, float, bool, float | None]]]) -> dict:
    """Per metric over (predicted, measured, inside, half-width) rows: the median absolute % error,
    Spearman, the share of rows inside their interval and the interval's median relative
    half-width, and the narrowest relative half-width that one interval of the same width around
    every prediction would need to hold COVERAGE_TARGET of these rows: the |error| quantile,
    a bound that no interval set without the measurements can beat at that coverage."""
    out = {}
    for m, ps in pairs.items():
        errors = [abs(p - y) / y * 100 for p, y, _, _ in ps]
        relative = sorted(abs(y - p) / p * 100 for p, y, _, _ in ps)
        widths = [w for _, _, _, w in ps if w is not None]
        out[m] = {"median_ape_pct": statistics.median(errors) if errors else None, "rows": len(ps),
                  "spearman": _spearman([p for p, _, _, _ in ps], [y for _, y, _, _ in ps]),
                  "inside_interval_pct": 100 * sum(i for _, _, i, _ in ps) / len(ps) if ps else None,
                  "median_half_width_pct": statistics.median(widths) if widths else None,
                  "half_width_for_85_pct": (relative[math.ceil(COVERAGE_TARGET * len(relative)) - 1]
                                            if relative else None)}
    return out


def leave_one_out(rows: list[DatasetRow], *, ashift: int) -> dict:
    """Each row predicted from a fit on all the others: the model's reach, design aside."""
    pairs: dict[str, list[tuple[float, float, bool, float]]] = {m: [] for m in METRICS}
    measured = [r for r in rows if r.measured]
    if len(measured) < 2:
        return _summary(pairs)
    if len(measured) > MAX_LOO_ROWS:   # one refit per row: the cost grows with the square of the rows
        raise DatasetError(f"leave one out (`loo`) refits the model once per row: at most {MAX_LOO_ROWS} rows with measurements "
                           f"({len(measured)} given, up to {len(measured) ** 2 // 100_000} s); drop `loo`, or "
                           "validate a sample of the rows")
    everything = _fit(measured, ashift)  # each refit starts from it: one row less moves it little
    table = measurements(measured)
    first = 0
    left_out = []  # each row's measurements, as indices into the table
    for row in measured:
        left_out.append(range(first, first + len(row.measured)))
        first += len(row.measured)
    try:
        for row, fit in zip(measured, fits_leaving_out(table, left_out, start=everything, ashift=ashift)):
            predicted = predict_intervals(fit, row.layout, level=LEVEL)
            for m, y in row.measured.items():
                pairs[m].append(_pair(predicted[m], y))
    except FitError as e:
        raise DatasetError(str(e)) from None
    return _summary(pairs)


def validate(rows: list[DatasetRow], *, ashift: int = 12, loo: bool = False) -> dict:
    """Fit on the fit rows, predict every row with its interval, and score the predicted
    rows against the measurements and against the rule of thumb fitted on the same rows."""
    cal = [r for r in rows if r.fit_row and r.measured]
    if not cal:
        raise DatasetError("no calibration row has a measured value: nothing to fit the model on")
    fit = _fit(cal, ashift)
    out_rows = []
    ours: dict[str, list[tuple[float, float, bool, float]]] = {m: [] for m in METRICS}
    rule_pairs: dict[str, list[tuple[float, float, bool, None]]] = {m: [] for m in METRICS}
    for row in rows:
        predicted = predict_intervals(fit, row.layout, level=LEVEL)
        rule = {m: baseline(rows, m, row, ashift) for m in METRICS}
        for m, y in row.measured.items():
            if not row.fit_row and m in fit.fitted_metrics:
                ours[m].append(_pair(predicted[m], y))
                if rule[m] is not None:
                    rule_pairs[m].append((rule[m], y, False, None))
        # a metric no fit row measured would be the priors' guess, not a prediction
        fitted = {m: predicted[m] if m in fit.fitted_metrics else None for m in METRICS}
        out_rows.append({"index": row.index, "layout": str(row.layout), "calibration": row.fit_row,
                         "predicted": {m: p and p.mb_s for m, p in fitted.items()},
                         "interval": {m: p and [p.low_mb_s, p.high_mb_s] for m, p in fitted.items()},
                         "measured": dict(row.measured), "rule_of_thumb": rule})
    interval_keys = ("inside_interval_pct", "median_half_width_pct", "half_width_for_85_pct")
    baseline_summary = {m: {k: v for k, v in s.items() if k not in interval_keys}
                        for m, s in _summary(rule_pairs).items()}
    params = fit.parameters(LEVEL)
    result = {
        "rows": out_rows, "metrics": _summary(ours), "baseline": baseline_summary, "ashift": ashift,
        "interval_level": LEVEL, "fitted_metrics": list(fit.fitted_metrics),
        "calibration_rows": [r.index for r in rows if r.fit_row],
        "parameters": {p.name: p.value for p in params},
        "parameter_intervals": {p.name: {"value": p.value, "low": p.low, "high": p.high, "pinned_by": p.pinned_by,
                                         "prior_source": p.source} for p in params},
        "scatter_log": dict(fit.scatter),
    }
    if loo:
        result["leave_one_out"] = leave_one_out(rows, ashift=ashift)
    return result
