"""What `plan --db` and `report` show of a bench fit (model/bench_fit.py): a JSON/CSV row's ranges
and measured medians, the fit's parameters, and the footer's lines on the IOPS and resilver rates."""

from __future__ import annotations

from zfslab.model.bench_fit import BenchFit, FitRanges, MeasuredResilver


def fit_fields(layout: str, bench_fit: BenchFit, ranges: FitRanges) -> dict:
    """A JSON/CSV row's ranges and, for a measured layout, the measured medians."""
    out: dict = {}
    for key, (low, high) in ranges.intervals.get(layout, {}).items():
        out[f"{key}_low"], out[f"{key}_high"] = low, high
    measured = bench_fit.measured.get(layout, {})
    out["measured"] = bool(measured)
    for metric in ("write", "rewrite", "read"):
        out[f"measured_{metric}_mb_s"] = measured.get(metric)
    if bench_fit.iops is not None:
        # deliberate lazy loading: iops_fit imports scipy, loaded here only when an IOPS fit ran
        from zfslab.model.iops_fit import METRICS
        iops = (bench_fit.iops_measured or {}).get(layout, {})
        out["measured_iops"] = bool(iops)
        for metric in METRICS:
            out[f"measured_{metric}"] = iops.get(metric)
    return out


def _parameters(fit, level: float) -> list[dict]:
    return [{"name": p.name, "value": p.value, "low": p.low, "high": p.high, "pinned_by": p.pinned_by}
            for p in fit.parameters(level)]


def fit_dict(bench_fit: BenchFit, level: float) -> dict:
    iops = None if bench_fit.iops is None else {
        "run_id": bench_fit.iops_run_id, "layouts_measured": sorted(bench_fit.iops_measured or ()),
        "parameters": _parameters(bench_fit.iops, level)}
    return {"run_id": bench_fit.run_id, "sandbox": bench_fit.sandbox, "level": level,
            "layouts_measured": sorted(bench_fit.measured), "parameters": _parameters(bench_fit.fit, level),
            "iops_fit": iops, "iops_from": "fit" if iops else "preset",
            "host_spread": None if bench_fit.host_spread is None else bench_fit.host_spread.as_dict()}


def host_spread_line(bench_fit: BenchFit) -> str | None:
    """plan --db's note when several hosts measured the same layouts (bench --hosts --every-host):
    the fit took every host's runs, and how far apart the hosts were; None otherwise."""
    spread = bench_fit.host_spread
    if spread is None:
        return None
    return f"Hosts: the fit took every host's run of each layout; {spread.line()}; `zfslab report --db` shows each host."


def iops_line(bench_fit: BenchFit, preset: str) -> str:
    """What the plan's IOPS columns rest on, for the footer."""
    if bench_fit.iops is None:
        return (f"IOPS: from the {preset} preset, uncalibrated: no ars run on these disks "
                "(`zfslab bench --layouts calibration --suite ars` measures one).")
    n = len(bench_fit.iops_measured or ())
    v = bench_fit.iops.values
    return (f"IOPS: fitted on {n} layout{'s' * (n != 1)} measured by the ars suite on these disks "
            f"(run {bench_fit.iops_run_id}): one disk {v['disk_read_iops_qd1']:,.0f}/{v['disk_read_iops_qd8']:,.0f} "
            f"random reads/s at QD1/QD8, a ZIL commit {v['sync_write_ms']:.3g} ms.")


def resilver_line(measured: dict[str, MeasuredResilver]) -> str:
    """The footer's word on the resilver rates the risk columns used."""
    rates = "; ".join(f"{m.mb_s:,.0f} MB/s ({kind}, drill run {m.drill_id})" for kind, m in sorted(measured.items()))
    return f"resilver rate measured by drill on these disks: {rates}."


def resilver_dicts(measured: dict[str, MeasuredResilver]) -> list[dict]:
    return [{"vdev_kind": m.vdev_kind, "mb_s": m.mb_s, "drill_id": m.drill_id, "layout": m.layout, "fill": m.fill,
             "resilvered_bytes": m.resilvered_bytes, "seconds": m.seconds} for m in measured.values()]
