"""`plan --db`: the speed model fitted on a bench run's streaming results (and on the ars suite's 4K
IOPS measured on the same disks), and what the plan shows of the fit (docs/speed.md#plan---db)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from zfslab.errors import UsageError, ZfslabError, shown
from zfslab.model.layouts import parse_layout
from zfslab.model.units import parse_blocksize
from zfslab.report.plan_table import Calibrated

if TYPE_CHECKING:  # scipy loads only when --db asks for a fit
    from zfslab.model.iops_fit import IopsFit
    from zfslab.model.speed_fit import SpeedFit


MIN_FIT_LAYOUTS = 2  # one pool cannot tell the disks from the host


@dataclass(frozen=True)
class Calibration:
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

    def profile(self, base):
        """`base` with the fitted streaming rates and, when measured, the fitted random path."""
        speed = self.fit.profile(base)
        return speed if self.iops is None else self.iops.profile(speed)


def calibrate(path: str, base) -> Calibration:
    """Fit the speed model on the latest bench run of `path` with streaming results."""
    from zfslab.model.speed_fit import FitError, Measurement, fit_speed
    from zfslab.store.readback import read_results
    from zfslab.system.suites import streaming_rate

    runs, bench, _, _ = read_results(path)
    db = shown(path, 200)
    if not runs:
        raise UsageError(f"--db {db}: no bench run in it; `zfslab bench --layouts calibration --suite seq --db {db}` "
                         "measures one")
    streaming = [b for b in bench if streaming_rate(b)]
    if not streaming:
        raise UsageError(f"--db {db}: no bench run measured streaming rates (seqwrite, rewrite, seqread); "
                         "`zfslab bench --layouts calibration --suite seq` does")
    run_id = max(b["run_id"] for b in streaming)
    run = next(r for r in runs if r["id"] == run_id)
    rows, measured = _run_rates(streaming, run_id, streaming_rate, Measurement, "MB/s", db)
    if len(measured) < MIN_FIT_LAYOUTS:
        raise FitError(f"--db {db}: run {run_id} measured {len(measured)} layout{'s' * (len(measured) != 1)}; "
                       f"the fit needs at least {MIN_FIT_LAYOUTS}: `zfslab bench --layouts calibration` measures enough")
    ashift, recordsize = _run_options(run, db)
    fit = fit_speed(rows, ashift=ashift, recordsize=recordsize, host=base.host)
    iops_run, iops_fit, iops_measured = _fit_iops(runs, bench, run, fit.profile(base), db)
    return Calibration(run_id, fit, measured, run["disk_count"], run["disk_bytes"], bool(run["sandbox"]),
                       iops_fit, iops_run, iops_measured, run.get("disk_ids", ()))


def _fit_iops(runs, bench, streaming_run: dict, streaming, db: str):
    """The random path fitted on the latest run on the same disks that measured the ars suite's 4K
    tests (often a run of its own: `bench --suite ars`); (None, None, None) when there is none."""
    from zfslab.model.iops_fit import IopsMeasurement, fit_iops
    from zfslab.system.suites import iops_rate

    same = {r["id"] for r in runs if r.get("disk_ids") == streaming_run.get("disk_ids")
            and bool(r["sandbox"]) == bool(streaming_run["sandbox"])}
    with_iops = [b for b in bench if b["run_id"] in same and iops_rate(b)]
    if not with_iops:
        return None, None, None
    run_id = max(b["run_id"] for b in with_iops)
    rows, measured = _run_rates(with_iops, run_id, iops_rate, IopsMeasurement, "IOPS", db)
    if not rows:
        return None, None, None
    run = next(r for r in runs if r["id"] == run_id)
    ashift, recordsize = _run_options(run, db)
    return run_id, fit_iops(rows, streaming=streaming, ashift=ashift, recordsize=recordsize), measured


def _run_rates(results, run_id: int, rate, make, unit: str, db: str):
    """Run `run_id`'s measurements of one kind (`rate` maps a stored row to (metric, value) or None)
    as fit rows made by `make`, and {layout: {metric: value}}; a row no fit may take is refused."""
    from zfslab.model.speed_fit import FitError

    rows, measured = [], {}
    for b in results:
        if b["run_id"] != run_id:
            continue
        metric, value = rate(b)
        if value is None:
            continue
        try:
            layout = parse_layout(b["layout"])
        except ZfslabError as e:
            raise UsageError(f"--db {db}: run {run_id} measured a layout zfslab cannot read ({e})") from None
        if value <= 0:
            raise FitError(f"--db {db}: run {run_id}, {layout} {b['test']}: {value!r} {unit}; "
                           "a measured rate must be above 0")
        rows.append(make(layout, metric, float(value)))
        measured.setdefault(str(layout), {})[metric] = float(value)
    return rows, measured


def _run_options(run: dict, db: str) -> tuple[int, int]:
    """The ashift and recordsize the run measured with."""
    try:
        options = json.loads(run.get("options_json") or "{}")
        ashift, recordsize = int(options.get("ashift", 12)), parse_blocksize(options.get("recordsize", "128K"))
    except (ValueError, TypeError, AttributeError, ZfslabError):
        raise UsageError(f"--db {db}: run {run['id']} has options zfslab cannot read") from None
    if not 9 <= ashift <= 16:
        raise UsageError(f"--db {db}: run {run['id']} has ashift {ashift}; zfslab reads 9 to 16")
    return ashift, recordsize


def intervals(calibration: Calibration, rows, ashift: int, recordsize: int, level: float = 0.9) -> Calibrated:
    """Each row's range per streaming metric (and IOPS metric, when fitted), for the plan's ashift and
    recordsize."""
    from zfslab.model.iops_fit import predict_iops_intervals
    from zfslab.model.speed_fit import predict_intervals

    fit = replace(calibration.fit, ashift=ashift, recordsize=recordsize)  # the parameters are the disks' and host's
    iops = None if calibration.iops is None else replace(calibration.iops, ashift=ashift, recordsize=recordsize)
    ranges = {}
    for r in rows:
        layout = parse_layout(r.layout)
        got = predict_intervals(fit, layout, level=level)
        ranges[r.layout] = {f"{m}_mb_s": (i.low_mb_s, i.high_mb_s) for m, i in got.items()}
        if iops is not None:
            ranges[r.layout] |= {m: (i.low_iops, i.high_iops)
                                 for m, i in predict_iops_intervals(iops, layout, level=level).items()}
    return Calibrated(frozenset(calibration.measured), ranges, level, frozenset(calibration.iops_measured or ()))


def calibrated_fields(layout: str, calibration: Calibration, calibrated: Calibrated) -> dict:
    """A JSON/CSV row's ranges and, for a measured layout, the measured medians."""
    out: dict = {}
    for key, (low, high) in calibrated.intervals.get(layout, {}).items():
        out[f"{key}_low"], out[f"{key}_high"] = low, high
    measured = calibration.measured.get(layout, {})
    out["measured"] = bool(measured)
    for metric in ("write", "rewrite", "read"):
        out[f"measured_{metric}_mb_s"] = measured.get(metric)
    if calibration.iops is not None:
        from zfslab.model.iops_fit import METRICS
        iops = (calibration.iops_measured or {}).get(layout, {})
        out["measured_iops"] = bool(iops)
        for metric in METRICS:
            out[f"measured_{metric}"] = iops.get(metric)
    return out


def _parameters(fit, level: float) -> list[dict]:
    return [{"name": p.name, "value": p.value, "low": p.low, "high": p.high, "pinned_by": p.pinned_by}
            for p in fit.parameters(level)]


def fit_dict(calibration: Calibration, level: float) -> dict:
    iops = None if calibration.iops is None else {
        "run_id": calibration.iops_run_id, "layouts_measured": sorted(calibration.iops_measured or ()),
        "parameters": _parameters(calibration.iops, level)}
    return {"run_id": calibration.run_id, "sandbox": calibration.sandbox, "level": level,
            "layouts_measured": sorted(calibration.measured), "parameters": _parameters(calibration.fit, level),
            "iops_fit": iops, "iops_from": "fit" if iops else "preset"}


def iops_line(calibration: Calibration, preset: str) -> str:
    """What the plan's IOPS columns rest on, for the footer."""
    if calibration.iops is None:
        return (f"IOPS: from the {preset} preset, uncalibrated: no ars run on these disks "
                "(`zfslab bench --layouts calibration --suite ars` measures one).")
    n = len(calibration.iops_measured or ())
    v = calibration.iops.values
    return (f"IOPS: fitted on {n} layout{'s' * (n != 1)} measured by the ars suite on these disks "
            f"(run {calibration.iops_run_id}): one disk {v['disk_read_iops_qd1']:,.0f}/{v['disk_read_iops_qd8']:,.0f} "
            f"random reads/s at QD1/QD8, a ZIL commit {v['sync_write_ms']:.3g} ms.")


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


def measured_resilvers(path: str, calibration: Calibration) -> dict[str, MeasuredResilver]:
    """The latest healing resilver per vdev kind (mirror, raidz) that drill timed on disks of the
    calibration's bench run (its pool's disks all among the run's; the spare may be any disk)."""
    from zfslab.model.speed_fit import FitError
    from zfslab.store.readback import read_resilvers

    disks = set(calibration.disk_ids)
    out: dict[str, MeasuredResilver] = {}
    for r in read_resilvers(path):
        pool = [d for d in r["disks"] if d["role"] == "pool"]
        ids = [d["serial"] if all(x["serial"] for x in pool) else d["device"] for d in pool]
        if (r["how"] == "sequential" or r["vdev_kind"] not in ("mirror", "raidz") or not ids
                or bool(r["sandbox"]) != calibration.sandbox or not set(ids) <= disks):
            continue
        if r["resilvered_bytes"] <= 0 or r["seconds"] <= 0:
            raise FitError(f"--db {shown(path, 200)}: resilver {r['id']} (drill {r['drill_id']}): "
                           f"{r['resilvered_bytes']} bytes in {r['seconds']!r} s; a measured resilver must be above 0")
        out[r["vdev_kind"]] = MeasuredResilver(r["vdev_kind"], r["resilvered_bytes"] / r["seconds"] / 1e6,
                                               r["drill_id"], r["layout"], r["fill"], r["resilvered_bytes"],
                                               r["seconds"])
    return out


def resilver_line(measured: dict[str, MeasuredResilver]) -> str:
    """The footer's word on the resilver rates the risk columns used."""
    rates = "; ".join(f"{m.mb_s:,.0f} MB/s ({kind}, drill run {m.drill_id})" for kind, m in sorted(measured.items()))
    return f"resilver rate measured by drill on these disks: {rates}."


def resilver_dicts(measured: dict[str, MeasuredResilver]) -> list[dict]:
    return [{"vdev_kind": m.vdev_kind, "mb_s": m.mb_s, "drill_id": m.drill_id, "layout": m.layout, "fill": m.fill,
             "resilvered_bytes": m.resilvered_bytes, "seconds": m.seconds} for m in measured.values()]
