"""The body of each CLI command: read its arguments, call the library, print the result."""

from __future__ import annotations

import argparse
import io
import math
import os
import shlex
import sys
import time

from rich.console import Console
from rich.markup import escape

from zfslab.errors import UsageError, clip, shown
from zfslab.model.allocation import block_allocation, efficiency_table, file_allocation, format_recordsize
from zfslab.model.capacity import PoolCapacity, linux_whole_disk_osize, pool_capacity, rules_for
from zfslab.model.layouts import Layout, parse_layout, parse_zpool_vdevs, replication_mismatch, zpool_create_argv
from zfslab.model.plan import DiskSet, disk_set, parse_disk_set, plan
from zfslab.model.performance import PRESETS, DiskProfile, HostLimits
from zfslab.model.reliability.params import RiskParams, params_for_class
from zfslab.model.units import format_bytes, format_tb, format_tib, parse_blocksize, parse_number, zfs_nicenum
from zfslab.report.tables import Column, render_table, to_csv, to_json


def _out() -> Console:
    # A pipe or a file gets a wide table instead of rich's 80-column default.
    probe = Console()
    return Console(highlight=False, width=None if probe.is_terminal else 220)


def _plan_disks(args: argparse.Namespace) -> DiskSet:
    if args.disks is not None:
        if args.disk_count or args.disk_size or args.vdev_bytes:
            raise UsageError("give the disks once: either COUNTxSIZE (e.g. 24x4TB) or --disks with --disk-size")
        count, size = parse_disk_set(args.disks)
        return disk_set(count, size, sector_bytes=args.sector_size)
    if args.disk_size or args.vdev_bytes:
        if not args.disk_count:
            raise UsageError("say how many disks with --disks N (or write COUNTxSIZE, e.g. 24x4TB)")
        if args.vdev_bytes:
            return disk_set(args.disk_count, args.vdev_bytes, exact_vdev=True)
        return disk_set(args.disk_count, args.disk_size, sector_bytes=args.sector_size)
    if args.disk_count:
        raise UsageError("say the size of each disk with --disk-size SIZE, e.g. --disk-size 4TB")
    count, size = parse_disk_set("24x4TB")
    return disk_set(count, size, sector_bytes=args.sector_size)


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %" if math.isfinite(x) else "-"


MAX_YEARS = 100.0  # mission times: a century is past any disk's life, and keeps exp() in range
MAX_HORIZONS = 20


def _years(text: str) -> tuple[float, ...]:
    parts = [y for y in text.split(",") if y.strip()]
    if not parts or len(parts) > MAX_HORIZONS:
        raise UsageError(f"--years {clip(text)}: give 1 to {MAX_HORIZONS} years separated by commas, e.g. 1,5,10")
    years = tuple(parse_number(y, "--years", 0.001, MAX_YEARS) for y in parts)
    if any(y <= 0 for y in years):
        raise UsageError(f"--years {clip(text)}: give positive years separated by commas, e.g. 1,5,10")
    return years


def _afr_by_age(text: str) -> tuple[float, ...]:
    parts = text.split(",")
    if len(parts) > MAX_HORIZONS * 5:
        raise UsageError(f"--afr-by-age {clip(text)}: at most {MAX_HORIZONS * 5} years of age")
    return tuple(parse_number(a, "--afr-by-age", 0.0001, 99.9) / 100 for a in parts)


def _risk_params(args: argparse.Namespace, disk_bytes: int) -> RiskParams:
    return params_for_class(
        args.disk_class, disk_bytes,
        afr=args.afr / 100 if args.afr is not None else None, mtbf_hours=args.mtbf_hours, ber_per_bit=args.ber,
        replace_hours=args.replace_hours, resilver_mb_s=args.resilver_mbps, fill=args.fill,
        scrub_days=args.scrub_days, lse_per_hour=args.lse_per_hour, years=_years(args.years),
        parallel_repair=args.repair == "parallel",
    )


def _sci(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    if x == 0:
        return "0"
    return f"{x:.2e}" if x < 1e-3 else f"{100 * x:.2f} %"


def _speed(row, key: str) -> str:
    return f"{row.speed[key]:,.0f} ({row.speed_x[key]:.1f})"


def _mttdl_text(hours: float | None) -> str:
    if hours is None:
        return "-"
    if not math.isfinite(hours):
        return "unbounded"
    years = hours / 8760
    return f"{years:.3g} y" if years < 1e6 else f"{years:.1e} y"


def cmd_plan(args: argparse.Namespace) -> int:
    disks = _plan_disks(args)
    rules = rules_for(args.zfs_version)
    layouts = [parse_layout(t) for t in args.layouts.split(",")] if args.layouts else None
    risk = None if args.no_risk else _risk_params(args, disks.disk_bytes)
    speed = None if args.no_speed else load_disk_model(args.disk_model)
    rows = plan(disks, ashift=args.ashift, rules=rules, layouts=layouts,
                hot_spares=not args.no_spares, draid=not args.no_draid, risk=risk,
                speed=speed, recordsize=parse_blocksize(args.recordsize))
    rec = None
    if args.priority or args.min_usable or args.min_failures:
        from zfslab.model.recommend import recommend
        rec = recommend(rows, args.priority or "balanced", min_usable_bytes=args.min_usable or 0,
                        min_failures=args.min_failures)
    records = [r.as_dict() for r in rows]
    if rec is not None:
        for rec_row in records:
            rec_row["on_frontier"] = rec_row["layout"] in rec.frontier
            rec_row["recommended"] = rec_row["layout"] == rec.layout
    if args.json:
        print(to_json(records))
        return 0
    if args.csv:
        print(to_csv(records), end="")
        return 0
    how = "whole disks, Linux partitioning" if disks.whole_disk else "exact vdev size"
    number = {id(r): i for i, r in enumerate(rows, 1)}
    columns = [
        Column("#", lambda r: str(number[id(r)])),
        Column("layout", lambda r: r.layout, "left", no_wrap=True),
        Column("shape", lambda r: r.shape, "left"),
        Column("usable TB", lambda r: f"{r.usable_tb:,.2f}"),
        Column("usable TiB", lambda r: f"{r.usable_tib:,.2f}"),
        Column("zfs list", lambda r: r.zfs_list_size),
        Column("of raw", lambda r: _pct(r.efficiency)),
        Column("fail ok", lambda r: str(r.failures_guaranteed)),
        Column("best case", lambda r: str(r.failures_best_case)),
    ]
    if speed is not None:
        columns += [
            Column("write MB/s (×1)", lambda r: _speed(r, "write_mb_s")),
            Column("read MB/s (×1)", lambda r: _speed(r, "read_mb_s")),
            Column("4K read IOPS QD8 (×1)", lambda r: _speed(r, "rand_read_iops_qd8")),
            Column("sync write IOPS (×1)", lambda r: _speed(r, "sync_write_iops_qd8")),
        ]
    if risk is not None:
        horizon = min(risk.years, key=lambda y: abs(y - 5))
        columns += [
            Column(f"P(loss) {horizon:g} y", lambda r: _sci(r.p_loss_at(horizon))),
            Column("MTTDL", lambda r: _mttdl_text(r.mttdl_hours)),
        ]
    if rec is not None:
        columns.insert(1, Column("", lambda r: "★" if r.layout == rec.layout else ("◆" if r.layout in rec.frontier else "")))
    out = _out()
    render_table(
        rows, columns, console=out, highlight=(lambda r: r.layout in rec.frontier) if rec else None,
        title=f"{disks.label} disks ({how}), ashift {args.ashift}, {rules.software} accounting: {len(rows)} layouts",
        caption="usable = zfs list USED+AVAIL of the empty pool; fail ok = disks that may fail at once, "
                "whichever they are; best case = if they fall in different vdevs"
                + ("" if risk is None else "\n" + _risk_caption(risk))
                + ("" if speed is None else f"\nspeed: predicted for {escape(speed.name)} disks ({speed.seq_write_mb_s:g}/"
                   f"{speed.seq_read_mb_s:g} MB/s, {speed.rand_read_iops_qd1:g} IOPS); ×1 = times one disk, "
                   "as Ars Technica charts it; no host limit")
                + ("" if rec is None else "\n◆ on the Pareto frontier of space, speed and safety; ★ recommended"),
    )
    if rec is not None:
        out.print(f"[bold]Recommended for {rec.priority}:[/bold] {rec.reason}")
    return 0


def _capacity_record(cap: PoolCapacity, recordsize: int, file_bytes: int | None) -> dict:
    group = cap.layout.groups[0]
    record = {
        "layout": str(cap.layout), "shape": cap.layout.describe(), "zfs_rules": cap.rules.key,
        "ashift": cap.ashift, "disk_bytes": cap.disk_bytes, "vdev_bytes": cap.vdev_bytes,
        "size_bytes": cap.size_bytes, "usable_bytes": cap.usable_bytes, "slop_bytes": cap.slop_bytes,
        "embedded_log_bytes": cap.embedded_log_bytes, "normal_dspace_bytes": cap.normal_dspace_bytes,
        "raw_bytes": cap.raw_bytes, "efficiency": round(cap.efficiency, 6),
        "zpool_list_size": zfs_nicenum(cap.size_bytes), "zfs_list_size": zfs_nicenum(cap.usable_bytes),
        "usable_tb": round(cap.usable_bytes / 1e12, 4), "usable_tib": round(cap.usable_bytes / 2**40, 4),
        "vdevs": [
            {"vdev": v.group.token, "asize_bytes": v.asize_bytes, "metaslab_shift": v.ms_shift,
             "metaslabs": v.ms_count, "size_bytes": v.size_bytes, "deflate_ratio": v.deflate_ratio,
             "dspace_bytes": v.dspace_bytes, "embedded_log_bytes": v.embedded_log_bytes}
            for v in cap.vdevs
        ],
        "recordsize_bytes": recordsize,
        "recordsize_efficiency": round(block_allocation(group, recordsize, cap.ashift).efficiency, 6),
        "efficiency_by_recordsize": {
            format_recordsize(r.recordsize_bytes): round(r.efficiency, 6) for r in efficiency_table(group, cap.ashift)
        },
    }
    if file_bytes is not None:
        f = file_allocation(cap.layout, file_bytes, recordsize, cap.ashift)
        record["file"] = {"file_bytes": f.file_bytes, "recordsize_bytes": f.recordsize_bytes, "blocks": f.blocks,
                          "physical_bytes": f.physical_bytes, "used_bytes": f.dsize_bytes}
    return record


def cmd_capacity(args: argparse.Namespace) -> int:
    layout = parse_layout(args.layout)
    rules = rules_for(args.zfs_version)
    created = rules_for(args.created_with) if args.created_with else None
    recordsize = parse_blocksize(args.recordsize)
    if args.vdev_bytes:
        cap = pool_capacity(layout, args.vdev_bytes, ashift=args.ashift, rules=rules, created_with=created)
    else:
        osize = linux_whole_disk_osize(args.disk_size, args.sector_size)
        cap = pool_capacity(layout, osize, ashift=args.ashift, rules=rules, created_with=created,
                            disk_bytes=args.disk_size)
    record = _capacity_record(cap, recordsize, args.file_size)
    if args.json:
        print(to_json(record))
        return 0
    _print_capacity(cap, record, args)
    return 0


def _print_capacity(cap: PoolCapacity, record: dict, args: argparse.Namespace) -> None:
    out = _out()

    def line(label: str, n: int, extra: str = "") -> None:
        out.print(f"{label:<14}{n:>22,} B  {format_tb(n):>12}  {format_tib(n):>13}  {extra}")

    out.print(f"[bold]{cap.layout}[/bold]: {cap.layout.describe()}")
    out.print(f"accounting    {cap.rules.software} rules, ashift {cap.ashift}")
    seen = "whole disk, Linux GPT partition 1" if args.disk_size else "exact vdev size"
    line("each disk", cap.disk_bytes, f"ZFS sees {cap.vdev_bytes:,} B ({seen})")
    line("raw", cap.raw_bytes, f"{cap.layout.disks} disks")
    line("zpool SIZE", cap.size_bytes, f"zpool list: {record['zpool_list_size']}")
    line("usable", cap.usable_bytes, f"zfs list USED+AVAIL: {record['zfs_list_size']} ({100 * cap.efficiency:.1f} % of raw)")
    line("slop", cap.slop_bytes, "reserved by ZFS (spa_get_slop_space)")
    line("embedded log", cap.embedded_log_bytes, "metaslabs set aside for the ZIL (2.1+)")
    for v in cap.vdevs:
        out.print(f"vdev {v.group.token}: asize {v.asize_bytes:,} B, {v.ms_count} metaslabs of 2^{v.ms_shift} B, "
                  f"deflate {v.deflate_ratio}/512")
    rs = record["recordsize_bytes"]
    out.print(f"{format_recordsize(rs)} records are stored at {100 * record['recordsize_efficiency']:.1f} % "
              f"efficiency (logical / physical bytes)")
    out.print("efficiency by recordsize: " + "  ".join(
        f"{k} {100 * v:.1f}%" for k, v in record["efficiency_by_recordsize"].items()))
    if "file" in record:
        f = record["file"]
        out.print(f"a {f['file_bytes']:,} B file in {f['blocks']:,} blocks of {format_recordsize(f['recordsize_bytes'])} "
                  f"takes {f['physical_bytes']:,} B of disk; zfs list charges {f['used_bytes']:,} B")


def cmd_layout(args: argparse.Namespace) -> int:
    if args.from_zpool:
        layout, devices = parse_zpool_vdevs(args.from_zpool)
    else:
        layout = parse_layout(args.layout)
        devices = [d for d in args.devices.split(",") if d] if args.devices else \
            [f"DISK{i}" for i in range(1, layout.disks + 1)]
    if args.devices and args.from_zpool:
        raise UsageError("--devices goes with LAYOUT; a zpool vdev list names its own devices")
    mismatch = replication_mismatch(layout)
    argv = zpool_create_argv(args.pool, layout, devices, ashift=args.ashift, force=mismatch is not None)
    record = _layout_record(layout, argv, mismatch)
    if args.json:
        print(to_json(record))
    else:
        out = _out()
        out.print(f"[bold]{layout}[/bold]: {layout.describe()}")
        plural = "s" if layout.top_level_vdevs != 1 else ""
        out.print(f"{layout.disks} disks, {layout.top_level_vdevs} top-level vdev{plural}; survives "
                  f"{layout.failures_guaranteed} failed disks at once (best case {layout.failures_best_case})")
        if mismatch:
            out.print(f"-f: zpool create refuses a \"mismatched replication level\" without it: {mismatch}. "
                      "-f also skips its checks that the devices are unused: check them first.", markup=False)
        print(shlex.join(argv))  # quoted for a POSIX shell; printed plainly, as rich would read [..] as markup
    return 0


def _layout_record(layout: Layout, argv: list[str], mismatch: str | None = None) -> dict:
    return {"layout": str(layout), "shape": layout.describe(), "disks": layout.disks,
            "top_level_vdevs": layout.top_level_vdevs, "hot_spares": layout.hot_spares,
            "failures_guaranteed": layout.failures_guaranteed, "failures_best_case": layout.failures_best_case,
            "zpool_create": argv, "zpool_create_shell": shlex.join(argv), "force_reason": mismatch}


def _inputs_text(p: RiskParams) -> str:
    rate = f"MTBF {p.mtbf_hours:g} h" if p.mtbf_hours else f"AFR {100 * p.afr:g} %"
    resilver = f"{p.resilver_mb_s:g} MB/s" if p.resilver_mb_s else \
        f"{0.8 * p.streaming_mb_s:g} MB/s mirrors, {0.5 * p.streaming_mb_s:g} MB/s raidz"
    return (f"{rate}, BER {p.ber_per_bit:g}, replacement {p.replace_hours:g} h, resilver {resilver}, "
            f"{100 * p.fill:g} % full, {'parallel' if p.parallel_repair else 'serial'} repair")


def _risk_caption(p: RiskParams) -> str:
    return f"P(loss): pool lost (exact Markov chain, ZFS semantics), {_inputs_text(p)}; MTTDL is a secondary figure"


def _layout_with_spares(text: str, spares: int | None) -> Layout:
    layout = parse_layout(text)
    if spares is None:
        return layout
    return Layout(layout.groups, spares)


def cmd_risk(args: argparse.Namespace) -> int:
    import numpy as np

    from zfslab.model.capacity import whole_disk_capacity
    from zfslab.model.reliability.montecarlo import Lifetime, simulate
    from zfslab.model.reliability.risk import compute_risk, markov_risk

    layout = _layout_with_spares(args.layout, args.spares)
    params = _risk_params(args, args.disk_size)
    usable = whole_disk_capacity(layout, args.disk_size, ashift=args.ashift).usable_bytes
    if args.engine == "montecarlo":
        if args.model not in ("zfs", "classic"):
            raise UsageError(f"--model {args.model} is a closed formula; use it with --engine markov")
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
        life = None
        if args.afr_by_age:
            life = Lifetime.table(_afr_by_age(args.afr_by_age))
        elif args.weibull_shape:
            life = Lifetime.weibull_from_afr(params.afr, args.weibull_shape)
        result = simulate(layout, params, usable_bytes=usable, rng=np.random.default_rng(seed), lifetime=life,
                          trials=args.trials, max_trials=args.max_trials, target_relative_error=args.target_error,
                          classic=args.model == "classic", exponential_repair=args.exponential_repair,
                          batch_variance=args.batch_variance, clock=time.monotonic, max_seconds=args.max_seconds,
                          progress=_progress_line(args) if sys.stderr.isatty() else None)
        if sys.stderr.isatty():
            print(file=sys.stderr)  # end the progress line
        result.extra["seed"] = seed
    else:
        result = compute_risk(layout, params, usable_bytes=usable, model=args.model)
    ours = None
    if args.model in ("wintelguy", "backblaze"):
        ours = markov_risk(layout, params, usable_bytes=usable)
    record = {"layout": str(layout), "shape": layout.describe(), "disk_bytes": args.disk_size,
              "usable_bytes": usable, "inputs": _params_record(params)} | result.as_dict()
    if ours is not None:
        record["zfslab_zfs_model"] = {"p_loss": ours.as_dict()["p_loss"], "mttdl_hours": ours.mttdl_hours}
    if args.json:
        print(to_json(record))
        return 0
    _print_risk(layout, params, result, ours)
    return 0


def _progress_line(args: argparse.Namespace):
    """Monte Carlo progress on one rewritten stderr line (only when stderr is a terminal)."""
    def show(trials: int, relative_error: float, seconds: float) -> None:
        error = f"{100 * relative_error:.1f} %" if math.isfinite(relative_error) else "no loss seen yet"
        print(f"\rMonte Carlo: {trials:,} trials per vdev, relative error {error} (target {100 * args.target_error:g} %), "
              f"{seconds:.1f} s of {args.max_seconds:g} s", end="", file=sys.stderr, flush=True)
    return show


def _params_record(p: RiskParams) -> dict:
    return {"afr": p.afr, "failure_rate_per_hour": p.failure_rate_per_hour, "mtbf_hours": p.mtbf_hours,
            "ber_per_bit": p.ber_per_bit, "replace_hours": p.replace_hours, "resilver_mb_s": p.resilver_mb_s,
            "streaming_mb_s": p.streaming_mb_s, "fill": p.fill, "scrub_days": p.scrub_days,
            "lse_per_hour": p.lse_per_hour, "parallel_repair": p.parallel_repair, "years": list(p.years)}


def _print_risk(layout: Layout, params: RiskParams, result, ours) -> None:
    out = _out()
    out.print(f"[bold]{layout}[/bold]: {layout.describe()}")
    out.print(f"model {result.model}, engine {result.engine}; inputs: {_inputs_text(params)}")
    rows = list(range(len(result.years)))
    cols = [
        Column("years", lambda i: f"{result.years[i]:g}"),
        Column("P(pool loss)", lambda i: _sci(result.p_loss[i])),
    ]
    if result.model in ("zfs", "classic"):
        cols += [
            Column("P(damaged blocks)", lambda i: _sci(result.p_damage[i])),
            Column("E(bytes lost): blocks", lambda i: format_bytes(result.expected_bytes_lost[i])),
            Column("E(bytes lost): pool", lambda i: format_bytes(result.expected_bytes_lost_pool[i])),
        ]
    if "ci95" in result.extra:
        cols.insert(2, Column("95 % interval", lambda i: "{:.2e} .. {:.2e}".format(
            *result.extra["ci95"]["p_loss"][f"{result.years[i]:g}"])))
    if ours is not None:
        cols.append(Column("zfslab (zfs model)", lambda i: _sci(ours.p_loss[i])))
    render_table(rows, cols, console=out)
    hours = f" ({result.mttdl_hours:.4g} h)" if math.isfinite(result.mttdl_hours) else " (beyond a float's range)"
    out.print(f"MTTDL {_mttdl_text(result.mttdl_hours)}{hours}. " + (
        "MTTDL is a mean over constant rates; judge by P(loss) over the years."))
    out.print(f"dominant cause: {result.dominant_cause}")
    if "trials" in result.extra:
        errors = ", ".join(f"{y} y: {100 * e:.1f} %" if math.isfinite(e) else f"{y} y: no loss seen by then"
                           for y, e in result.extra["relative_error"].items())
        why = {"trials": "the --trials asked for", "target error": "--target-error was met",
               "trial budget": "--max-trials was reached before --target-error",
               "time budget": "--max-seconds ran out before --target-error"}[result.extra["stopped_by"]]
        out.print(f"Monte Carlo: {result.extra['trials']:,} trials per vdev, seed {result.extra.get('seed')} "
                  f"(--seed repeats it); 95 % relative error of P(loss): {errors}")
        out.print(f"Monte Carlo stopped: {why}")
    if ours is not None:
        out.print(f"why they differ: {result.model} " + (
            "counts a read error during any rebuild of a full disk as the loss of the array, and uses MTTDL as "
            "an exponential law; ZFS resilvers only allocated data, and a read error then costs a block, not the pool."
            if result.model == "wintelguy" else
            "counts losses in fixed replacement periods with the raw AFR; the zfs model follows each failure "
            "through its own repair time and the vdev's parity."))


def load_disk_model(text: str) -> DiskProfile:
    """A preset name or a PROFILE.toml written by `zfslab profile-disk`."""
    if text in PRESETS:
        return PRESETS[text]
    if not text.endswith(".toml"):
        raise UsageError(f"--disk-model {clip(text)}: use one of {', '.join(PRESETS)} or a PROFILE.toml file")
    import tomllib
    if not os.path.exists(text):
        raise UsageError(f"--disk-model {shown(text, 200)}: no such file; `zfslab profile-disk DEV --output {shown(text)}` "
                         "makes one")
    try:
        data = tomllib.loads(read_text_file(text, "--disk-model", max_bytes=2**20, kind="TOML"))
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"--disk-model {shown(text, 200)}: not valid TOML ({shown(str(e), 80)})") from None
    except RecursionError:  # tomllib recurses into nested arrays
        raise UsageError(f"--disk-model {shown(text, 200)}: nested too deeply to be a disk profile") from None
    fields = {k: data[k] for k in DiskProfile.__dataclass_fields__ if k in data and k != "host"}
    missing = [k for k in ("seq_read_mb_s", "seq_write_mb_s", "rand_read_iops_qd1", "rand_read_iops_qd8",
                           "rand_write_iops", "sync_write_ms") if k not in fields]
    if missing:
        raise UsageError(f"--disk-model {shown(text, 200)}: missing {', '.join(missing)}")
    fields.setdefault("name", text)
    try:
        host = data.get("host", {})
        if not isinstance(host, dict):
            raise ValueError("[host] must be a table")
        unknown = sorted(set(host) - {"write_mb_s", "read_mb_s", "rewrite_parallel", "parity_mb_s", "cpus"})
        if unknown:
            raise ValueError(f"[host] has unknown key {unknown[0]!r}: use write_mb_s, read_mb_s, parity_mb_s, cpus")
        if "parity_mb_s" in host:
            if not isinstance(host["parity_mb_s"], list):
                raise ValueError("parity_mb_s must be a list of three rates")
            host = host | {"parity_mb_s": tuple(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
                                                for v in host["parity_mb_s"])}
        return DiskProfile(**fields, host=HostLimits(**host))
    except (TypeError, ValueError) as e:
        raise UsageError(f"--disk-model {shown(text, 200)}: {shown(str(e), 120)}") from None


def cmd_validate(args: argparse.Namespace) -> int:
    import csv

    from zfslab.model.validation import parse_dataset, validate

    text = read_text_file(args.dataset, "dataset", max_bytes=MAX_DATASET_BYTES)
    try:
        records = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as e:  # a field over csv.field_size_limit() (131,072 characters), a stray NUL ...
        raise UsageError(f"dataset {shown(args.dataset, 200)}: not a readable CSV file ({shown(str(e), 80)})") from None
    if records:
        records = [{(k.strip() if isinstance(k, str) else k): v for k, v in r.items()} for r in records]
    result = validate(parse_dataset(records), ashift=args.ashift)
    if args.json:
        print(to_json(_plain(result)))
        return 0
    out = _out()
    metrics = ("write", "rewrite", "read")

    def cell(r, m, key):
        v = r[key].get(m) if r[key] else None
        return "-" if v is None else f"{v:,.0f}"

    cols = [Column("#", lambda r: str(r["index"])), Column("layout", lambda r: r["layout"], "left", no_wrap=True),
            Column("cal", lambda r: "yes" if r["calibration"] else "")]
    for m in metrics:
        cols += [Column(f"{m} measured", lambda r, m=m: cell(r, m, "measured")),
                 Column(f"{m} predicted", lambda r, m=m: cell(r, m, "predicted")),
                 Column(f"{m} rule", lambda r, m=m: cell(r, m, "rule_of_thumb"))]
    render_table(result["rows"], cols, console=out, title=f"{escape(args.dataset)}: fitted on the calibration rows")
    for m in metrics:
        ours, rule = result["metrics"][m]["median_ape_pct"], result["baseline"][m]["median_ape_pct"]
        if ours is not None:
            out.print(f"{m:8s} median absolute error {ours:5.1f} % over {result['metrics'][m]['rows']} predicted rows "
                      f"(rule of thumb {rule:5.1f} %)")
    p, fitted = result["parameters"], result["fitted_metrics"]
    if len(fitted) == len(metrics):
        out.print(f"fitted: disk {p['disk_seq_write_mb_s']:.0f} MB/s write, {p['disk_seq_read_mb_s']:.0f} MB/s read, "
                  f"{p['disk_rewrite_mb_s']:.0f} MB/s rewrite; host ceilings {p['host_write_mb_s']:.0f} MB/s write, "
                  f"{p['host_read_mb_s']:.0f} MB/s read; rewrite parallel share {p['rewrite_parallel']:.2f}")
        return 0
    # only what the calibration rows measured: the rest would be the starting guesses, not a fit
    parts = {"write": f"disk {p['disk_seq_write_mb_s']:.0f} MB/s write, host ceiling {p['host_write_mb_s']:.0f} MB/s",
             "read": f"disk {p['disk_seq_read_mb_s']:.0f} MB/s read, host ceiling {p['host_read_mb_s']:.0f} MB/s",
             "rewrite": f"disk {p['disk_rewrite_mb_s']:.0f} MB/s rewrite, parallel share {p['rewrite_parallel']:.2f}"}
    out.print("fitted: " + "; ".join(parts[m] for m in ("write", "read", "rewrite") if m in fitted))
    out.print(f"not fitted (no calibration row measures it): {', '.join(m for m in metrics if m not in fitted)}")
    return 0


MAX_DATASET_BYTES = 10 * 2**20


def read_text_file(path: str, what: str, *, max_bytes: int, kind: str = "CSV") -> str:
    """A small text file's contents: UTF-8 (a BOM is dropped) or UTF-16 with its BOM; a regular
    file only (a directory, a FIFO or /dev/zero is refused before reading); one-line errors."""
    import codecs
    import stat

    name = f"{what} {shown(path, 200)}"
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it has no effect on a regular file)
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise UsageError(f"{name}: not a regular file; give a {kind} file")
            if st.st_size > max_bytes:
                raise UsageError(f"{name}: {st.st_size:,} bytes; at most {max_bytes:,} are read")
            data = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{name}: a directory; give a {kind} file") from None
    except OSError as e:
        raise UsageError(f"{name}: cannot be read ({e.strerror})") from None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"  # Excel's "Unicode text"; the BOM says the byte order
    else:
        encoding = "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        raise UsageError(f"{name}: not {'UTF-16' if encoding == 'utf-16' else 'UTF-8'} text (byte {e.start:,}); "
                         f"save it as UTF-8 {kind}") from None
    if "\x00" in text:
        raise UsageError(f"{name}: holds NUL characters: a binary file, not {kind} text")
    return text


def _plain(value):
    """numpy numbers to Python ones, for JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value


def cmd_profile_disk(args: argparse.Namespace) -> int:
    from zfslab.system.profile import profile_dict, profile_disk, profile_toml

    from zfslab.report.files import check_output_path, write_atomically
    if args.output:
        check_output_path(args.output)  # before minutes of measuring, not after
    profile = profile_disk(args.device, seconds=args.seconds, write_tests=args.write_tests)
    if args.output:
        write_atomically(args.output, profile_toml(profile))
    if args.json:
        print(to_json(profile_dict(profile)))
    else:
        print(profile_toml(profile), end="")
    return 0
