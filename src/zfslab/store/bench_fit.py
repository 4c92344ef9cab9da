"""A results database read into a bench fit (model/bench_fit.py): the latest bench run with
streaming results fitted, the ars suite's IOPS on the same disks, and the resilvers drill timed on
them. The library behind `plan --db` and `report`; every row comes through readback's checks."""

from __future__ import annotations

import statistics

from zfslab.errors import ParamError, ZfslabError, shown
from zfslab.model.bench_fit import BenchFit, MeasuredRate, MeasuredResilver
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.per_host import FleetSpread, fleet_spread, per_host
from zfslab.model.performance import DiskProfile
from zfslab.store.readback import (BenchHistory, DamagedDatabase, MeasurementRecord, RunRecord, read_bench_history,
                                   read_resilver_records)
from zfslab.store.rates import iops_rate, streaming_rate

MIN_FIT_LAYOUTS = 2  # one pool cannot tell the disks from the host


def measured_rates(history: BenchHistory, rate, path: str) -> list[MeasuredRate]:
    """Every measurement `rate` reads (streaming_rate or iops_rate: (metric, value), or None for
    another test), with its layout parsed; a layout zfslab cannot read is a damaged database."""
    out = []
    for m in history.measurements:
        got = rate(m)
        if got is None:
            continue
        out.append(MeasuredRate(m.run_id, _layout(m, path), m.layout, m.test, got[0], got[1]))
    return out


def _layout(m: MeasurementRecord, path: str):
    try:
        return parse_layout(m.layout)
    except ZfslabError as e:
        raise DamagedDatabase(shown(path, 200), f"run {m.run_id} measured a layout zfslab cannot read ({e})") from None


def fit_bench_run(path: str, base: DiskProfile) -> BenchFit:
    """Fit the speed model on the latest bench run of `path` with streaming results (and the random
    path on the latest ars run on the same disks)."""
    # deliberate lazy loading: the fits import scipy (0.2 s), paid only when a fit runs
    from zfslab.model.speed_fit import FitError, Measurement, fit_speed

    history = read_bench_history(path)
    db = shown(path, 200)
    if not history.runs:
        raise ParamError("db", db, f"no bench run in it; `zfslab bench --layouts calibration --suite seq --db {db}` "
                         "measures one")
    streaming = measured_rates(history, streaming_rate, path)
    if not streaming:
        raise ParamError("db", db, "no bench run measured streaming rates (seqwrite, rewrite, seqread); "
                         "`zfslab bench --layouts calibration --suite seq` does")
    run = history.run(max(r.run_id for r in streaming))
    runs = alike_runs(history, run, {r.run_id for r in streaming})
    streaming = latest_per_layout(streaming, runs)
    rows, measured = _run_rows(streaming, set(runs), Measurement, "MB/s", db)
    if len(measured) < MIN_FIT_LAYOUTS:
        raise FitError(f"`db` {db}: run {run.id} measured {len(measured)} layout{'s' * (len(measured) != 1)}; "
                       f"the fit needs at least {MIN_FIT_LAYOUTS}: `zfslab bench --layouts calibration` measures enough")
    fit = fit_speed(rows, ashift=run.ashift, recordsize=run.recordsize_bytes, host=base.host)
    iops_run, iops_fit, iops_measured = _fit_iops(history, run, fit.profile(base), path)
    used = tuple(sorted({r.run_id for r in streaming}))
    hosts = len({history.run(i).origin for i in used})
    return BenchFit(run.id, fit, measured, run.disk_count, run.disk_bytes, run.sandbox,
                    iops_fit, iops_run, iops_measured, run.disk_ids, used, hosts, run.disk_rotational,
                    _host_spread(history, used))


def _host_spread(history: BenchHistory, used: tuple[int, ...]) -> FleetSpread | None:
    """How far apart the hosts are on the streaming tests of the fitted runs, where two hosts or more
    measured the same layout (bench --hosts --every-host); None otherwise."""
    runs = set(used)
    measured = [m for m in history.measurements if m.run_id in runs and streaming_rate(m) is not None]
    hosts, rows = per_host([history.run(i).origin for i in used], history.host_measurements(measured))
    return fleet_spread(hosts, rows)


def alike_runs(history: BenchHistory, latest: RunRecord, candidates: set[int]) -> dict[int, RunRecord]:
    """The runs whose layouts one fit may take together: the latest, and those on disks alike (its
    disks themselves, or as many of the same size on another host of a fleet) with the same options."""
    def alike(r: RunRecord) -> bool:
        if r.id == latest.id:
            return True
        return (r.id in candidates and _same_disks(r, latest) and r.sandbox == latest.sandbox
                and r.options_key == latest.options_key)
    return {r.id: r for r in history.runs if alike(r)}


def _same_disks(r: RunRecord, other: RunRecord) -> bool:
    """The same disks, or (another host of a fleet, preflight having checked them alike) as many of one size."""
    if r.disk_ids == other.disk_ids:
        return True
    return (r.origin != other.origin and r.disk_bytes is not None and r.disk_count == other.disk_count
            and r.disk_bytes == other.disk_bytes)


def latest_per_layout(rates: list[MeasuredRate], runs: dict[int, RunRecord]) -> list[MeasuredRate]:
    """Each host's rates of each layout from its latest of `runs` that measured it: a layout measured
    again on a host counts once, a fleet's layouts (one run each, on several hosts) all count, and so
    does each host's run of a layout every host measured (--every-host; docs/fleet.md#every-host)."""
    latest: dict[tuple[str | None, str], int] = {}
    for r in rates:
        if r.run_id in runs:
            key = (runs[r.run_id].origin, r.stored_layout)
            latest[key] = max(latest.get(key, r.run_id), r.run_id)
    return [r for r in rates if r.run_id in runs
            and latest.get((runs[r.run_id].origin, r.stored_layout)) == r.run_id]


def _fit_iops(history: BenchHistory, streaming_run: RunRecord, streaming: DiskProfile, path: str):
    """The random path fitted on the latest run on the same disks that measured the ars suite's 4K
    tests (often a run of its own: `bench --suite ars`); (None, None, None) when there is none."""
    # deliberate lazy loading: the fits import scipy (0.2 s), paid only when a fit runs
    from zfslab.model.iops_fit import IopsMeasurement, fit_iops

    same = {r.id for r in history.runs if _same_disks(r, streaming_run) and r.sandbox == streaming_run.sandbox}
    with_iops = [r for r in measured_rates(history, iops_rate, path) if r.run_id in same]
    if not with_iops:
        return None, None, None
    run = history.run(max(r.run_id for r in with_iops))
    with_iops = latest_per_layout(with_iops, alike_runs(history, run, {r.run_id for r in with_iops}))
    rows, measured = _run_rows(with_iops, {r.run_id for r in with_iops}, IopsMeasurement, "IOPS", shown(path, 200))
    if not rows:
        return None, None, None
    return run.id, fit_iops(rows, streaming=streaming, ashift=run.ashift, recordsize=run.recordsize_bytes), measured


def _run_rows(rates: list[MeasuredRate], run_ids: set[int], make, unit: str, db: str):
    """The rates of runs `run_ids` as fit rows made by `make`, and {layout: {metric: value}}; a rate no
    fit may take is refused."""
    # deliberate lazy loading: FitError's module imports numpy and scipy, paid only when a fit runs
    from zfslab.model.speed_fit import FitError

    rows, values = [], {}
    for r in rates:
        if r.run_id not in run_ids or r.value is None:
            continue
        if r.value <= 0:
            raise FitError(f"`db` {db}: run {r.run_id}, {r.layout} {r.test}: {r.value!r} {unit}; "
                           "a measured rate must be above 0")
        rows.append(make(r.layout, r.metric, float(r.value)))
        values.setdefault(str(r.layout), {}).setdefault(r.metric, []).append(float(r.value))
    # several hosts' runs of one layout (--every-host): each is a row of the fit; the figure shown is their median
    measured = {layout: {metric: statistics.median(v) for metric, v in by.items()} for layout, by in values.items()}
    return rows, measured


def measured_resilvers(path: str, bench_fit: BenchFit) -> dict[str, MeasuredResilver]:
    """The latest healing resilver per vdev kind (mirror, raidz) that drill timed on disks of the
    fitted bench run (its pool's disks all among the run's; the spare may be any disk)."""
    # deliberate lazy loading: FitError's module imports numpy and scipy, paid only when a fit runs
    from zfslab.model.speed_fit import FitError

    disks = set(bench_fit.disk_ids)
    out: dict[str, MeasuredResilver] = {}
    for r in read_resilver_records(path):
        if (r.how == "sequential" or r.vdev_kind not in ("mirror", "raidz") or not r.pool_disk_ids
                or r.sandbox != bench_fit.sandbox or not set(r.pool_disk_ids) <= disks):
            continue
        if r.resilvered_bytes <= 0 or r.seconds <= 0:
            raise FitError(f"`db` {shown(path, 200)}: resilver {r.id} (drill {r.drill_id}): "
                           f"{r.resilvered_bytes} bytes in {r.seconds!r} s; a measured resilver must be above 0")
        out[r.vdev_kind] = MeasuredResilver(r.vdev_kind, r.resilvered_bytes / r.seconds / 1e6, r.drill_id, r.layout,
                                            r.fill, r.resilvered_bytes, r.seconds)
    return out
