"""The body of each CLI command: read its arguments, call the library, print the result."""

from __future__ import annotations

import argparse

from rich.console import Console

from zfslab.errors import UsageError
from zfslab.model.allocation import block_allocation, efficiency_table, file_allocation, format_recordsize
from zfslab.model.capacity import PoolCapacity, linux_whole_disk_osize, pool_capacity, rules_for
from zfslab.model.layouts import Layout, parse_layout, parse_zpool_vdevs, zpool_create_argv
from zfslab.model.plan import DiskSet, disk_set, parse_disk_set, plan
from zfslab.model.units import format_tb, format_tib, parse_blocksize, zfs_nicenum
from zfslab.report.tables import Column, render_table, to_csv, to_json


def _out() -> Console:
    # A pipe or a file gets a wide table instead of rich's 80-column default.
    probe = Console()
    return Console(highlight=False, width=None if probe.is_terminal else 180)


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
    return f"{100 * x:.1f} %"


def cmd_plan(args: argparse.Namespace) -> int:
    disks = _plan_disks(args)
    rules = rules_for(args.zfs_version)
    layouts = [parse_layout(t) for t in args.layouts.split(",")] if args.layouts else None
    rows = plan(disks, ashift=args.ashift, rules=rules, layouts=layouts,
                hot_spares=not args.no_spares, draid=not args.no_draid)
    if args.json:
        print(to_json([r.as_dict() for r in rows]))
        return 0
    if args.csv:
        print(to_csv([r.as_dict() for r in rows]), end="")
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
    render_table(
        rows, columns, console=_out(),
        title=f"{disks.label} disks ({how}), ashift {args.ashift}, {rules.software} accounting: {len(rows)} layouts",
        caption="usable = zfs list USED+AVAIL of the empty pool; fail ok = disks that may fail at once, "
                "whichever they are; best case = if they fall in different vdevs",
    )
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
    argv = zpool_create_argv(args.pool, layout, devices, ashift=args.ashift)
    record = _layout_record(layout, argv)
    if args.json:
        print(to_json(record))
    else:
        out = _out()
        out.print(f"[bold]{layout}[/bold]: {layout.describe()}")
        plural = "s" if layout.top_level_vdevs != 1 else ""
        out.print(f"{layout.disks} disks, {layout.top_level_vdevs} top-level vdev{plural}; survives "
                  f"{layout.failures_guaranteed} failed disks at once (best case {layout.failures_best_case})")
        out.print(" ".join(argv), soft_wrap=True)
    return 0


def _layout_record(layout: Layout, argv: list[str]) -> dict:
    return {"layout": str(layout), "shape": layout.describe(), "disks": layout.disks,
            "top_level_vdevs": layout.top_level_vdevs, "hot_spares": layout.hot_spares,
            "failures_guaranteed": layout.failures_guaranteed, "failures_best_case": layout.failures_best_case,
            "zpool_create": argv}
