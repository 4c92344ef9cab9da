"""`zfslab plan`: every layout for a set of disks, with space, risk and speed."""

from __future__ import annotations

import argparse

from rich.markup import escape

from zfslab.commands._common import (DEFAULT_DISKS, add_output_options, add_risk_options, add_zfs_options, int_arg,
                                     load_disk_model, mttdl_text, console, pct, risk_caption, risk_params, sci, size_arg)
from zfslab.errors import UsageError
from zfslab.model.capacity import rules_for
from zfslab.model.layouts import parse_layout
from zfslab.model.plan import DiskSet, disk_set, parse_disk_set, plan
from zfslab.model.units import parse_blocksize
from zfslab.report.tables import Column, render_table, to_csv, to_json


EXAMPLE = "zfslab plan 8x12TB --layouts raidz2:8,4xmirror:2"


def add_parser(sub) -> None:
    p = sub.add_parser("plan", epilog=f"example: {EXAMPLE}", help="every layout for your disks: usable space and failures survived",
                       description="Every sensible layout for a set of identical disks, with its exact usable "
                                   "space (as zfs list shows it) and how many disk failures it survives.")
    p.add_argument("disks", nargs="?", default=None, metavar="COUNTxSIZE",
                   help=f"the disks, e.g. 24x4TB or 8x12TB (default {DEFAULT_DISKS})")
    p.add_argument("--disks", dest="disk_count", type=int_arg("--disks", 1, 1024), metavar="N",
                   help="number of disks (with --disk-size or --vdev-bytes)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--disk-size", type=size_arg, metavar="SIZE",
                      help="size of each whole disk (Linux partitioning applies): 4TB, 3.64TiB, 4000787030016")
    size.add_argument("--vdev-bytes", type=size_arg, metavar="N",
                      help="exact bytes ZFS sees of each vdev (a file, a partition, a FreeBSD raw disk)")
    p.add_argument("--layouts", metavar="L,L", help="only these layouts (comma-separated), e.g. raidz2:6,12xmirror:2")
    p.add_argument("--no-spares", action="store_true", help="leave out layouts with hot spares")
    p.add_argument("--no-draid", action="store_true", help="leave out dRAID layouts")
    add_zfs_options(p)
    add_risk_options(p)
    p.add_argument("--no-risk", action="store_true", help="leave out the risk columns")
    p.add_argument("--disk-model", default="hdd7200", metavar="MODEL",
                   help="speed profile for the speed columns: hdd7200, hdd5400, ssd, nvme or PROFILE.toml (default hdd7200)")
    p.add_argument("--recordsize", default="128K", metavar="R", help="recordsize for the speed model (default 128K)")
    p.add_argument("--no-speed", action="store_true", help="leave out the speed columns")
    p.add_argument("--priority", choices=("speed", "space", "safety", "balanced"),
                   help="mark the Pareto frontier and recommend a layout for this priority")
    p.add_argument("--min-usable", type=size_arg, metavar="SIZE", help="with --priority: at least this much usable space")
    p.add_argument("--min-failures", type=int_arg("--min-failures", 0, 255), default=0, metavar="N",
                   help="with --priority: survive at least N failed disks at once")
    add_output_options(p)
    p.set_defaults(func=run)


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


def _speed(row, key: str) -> str:
    return f"{row.speed[key]:,.0f} ({row.speed_x[key]:.1f})"


def run(args: argparse.Namespace) -> int:
    disks = _plan_disks(args)
    rules = rules_for(args.zfs_version)
    layouts = [parse_layout(t) for t in args.layouts.split(",")] if args.layouts else None
    risk = None if args.no_risk else risk_params(args, disks.disk_bytes)
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
        Column("of raw", lambda r: pct(r.efficiency)),
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
            Column(f"P(loss) {horizon:g} y", lambda r: sci(r.p_loss_at(horizon))),
            Column("MTTDL", lambda r: mttdl_text(r.mttdl_hours)),
        ]
    if rec is not None:
        columns.insert(1, Column("", lambda r: "★" if r.layout == rec.layout else ("◆" if r.layout in rec.frontier else "")))
    out = console()
    render_table(
        rows, columns, console=out, highlight=(lambda r: r.layout in rec.frontier) if rec else None,
        title=f"{disks.label} disks ({how}), ashift {args.ashift}, {rules.software} accounting: {len(rows)} layouts",
        caption="usable = zfs list USED+AVAIL of the empty pool; fail ok = disks that may fail at once, "
                "whichever they are; best case = if they fall in different vdevs"
                + ("" if risk is None else "\n" + risk_caption(risk))
                + ("" if speed is None else f"\nspeed: predicted for {escape(speed.name)} disks ({speed.seq_write_mb_s:g}/"
                   f"{speed.seq_read_mb_s:g} MB/s, {speed.rand_read_iops_qd1:g} IOPS); ×1 = times one disk, "
                   "as Ars Technica charts it; no host limit")
                + ("" if rec is None else "\n◆ on the Pareto frontier of space, speed and safety; ★ recommended"),
    )
    if rec is not None:
        out.print(f"[bold]Recommended for {rec.priority}:[/bold] {rec.reason}")
    return 0
