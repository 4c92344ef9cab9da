"""`zfslab capacity`: the exact SIZE and USED+AVAIL of one layout, step by step."""

from __future__ import annotations

import argparse

from zfslab.commands._common import add_zfs_options, console, disk_size_arg, size_arg
from zfslab.errors import UsageError
from zfslab.model.allocation import block_allocation, efficiency_table, file_allocation, format_recordsize
from zfslab.model.empty_pool_metadata import empty_pool_special_spread_bytes
from zfslab.model.capacity import PoolCapacity, linux_whole_disk_osize, osizes, pool_capacity, rules_for
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import size_text
from zfslab.model.zpool_syntax import class_redundancy_risk, replication_mismatch
from zfslab.model.units import format_tb, format_tib, parse_blocksize, zfs_nicenum
from zfslab.report.tables import print_row_and_note, print_wrapped, to_json


EXAMPLE = "zfslab capacity raidz2:6 --disk-size 4TB --zfs-version 2.3"


def add_parser(sub) -> None:
    p = sub.add_parser("capacity", epilog=f"example: {EXAMPLE}",
                       description="Exact capacity of one layout, step by step as OpenZFS computes it.")
    p.add_argument("layout", help="e.g. raidz2:6, 2xraidz2:6, 12xmirror:2, draid2:8d:24c:1s, raidz2:11+spare:1; "
                                  "disks of several sizes: raidz2:8@12TB+raidz2:4@8TB, raidz2:12@8x12TB/4x8TB; "
                                  "allocation classes: raidz2:6+special=mirror:3@1TB+log=mirror:2@400GB, and +cache:2@2TB "
                                  "or +dedup=mirror:2@400GB")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--vdev-bytes", type=size_arg, metavar="N",
                      help="exact bytes ZFS sees of each vdev (a file, a partition, a FreeBSD raw disk)")
    size.add_argument("--disk-size", type=disk_size_arg, metavar="SIZE",
                      help="size of each whole disk (Linux partitioning applies): 4TB, 3.64TiB, 4000787030016")
    p.add_argument("--exact-sizes", action="store_true",
                   help="the sizes written in the layout (@12TB) are exact vdev bytes, not whole disks")
    add_zfs_options(p)
    p.add_argument("--created-with", metavar="V",
                   help="OpenZFS version that created the vdevs, if older (fixes the metaslab size)")
    p.add_argument("--special-used", type=size_arg, default=None, metavar="SIZE",
                   help="bytes the special and dedup vdevs hold (metadata, small blocks, dedup table): OpenZFS "
                        "2.3.7+ and 2.4.1+ add them back to USED+AVAIL (default: the empty pool's own "
                        "metadata, predicted)")
    p.add_argument("--recordsize", default="128K", metavar="R", help="record size for the efficiency line (default 128K)")
    p.add_argument("--file-size", type=size_arg, metavar="SIZE",
                   help="also show the raw space one incompressible file of this size takes")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    layout = parse_layout(args.layout)
    rules = rules_for(args.zfs_version)
    created = rules_for(args.created_with) if args.created_with else None
    recordsize = parse_blocksize(args.recordsize)
    # sizes written in the layout (data of a sized layout; special, dedup, log, cache disks): whole disks
    # unless --exact-sizes
    written = osizes(layout, whole_disk=not args.exact_sizes, sector_bytes=args.sector_size)
    common = dict(ashift=args.ashift, rules=rules, created_with=created, class_vdev_bytes=written,
                  class_alloc_bytes=args.special_used)
    if args.special_used and not layout.pool_groups[len(layout.groups):]:
        raise UsageError(f"--special-used: {layout} has no special or dedup vdev; add one, e.g. +special=mirror:3")
    if layout.sized:
        if args.vdev_bytes or args.disk_size:
            raise UsageError(f"{layout} gives the size of its disks; leave out --vdev-bytes and --disk-size "
                             "(--exact-sizes takes the sizes as exact vdev bytes)")
        cap = pool_capacity(layout, written, **common)
    elif not (args.vdev_bytes or args.disk_size):
        raise UsageError(f"say the size of each disk, e.g. zfslab capacity {layout} --disk-size 4TB (or --vdev-bytes N "
                         "for exact vdev bytes)" if not args.exact_sizes else
                         f"--exact-sizes: {layout} gives no sizes; write them in it, e.g. raidz2:8@12TB+raidz2:4@8TB")
    elif args.vdev_bytes:
        cap = pool_capacity(layout, args.vdev_bytes, **common)
    else:
        osize = linux_whole_disk_osize(args.disk_size, args.sector_size)
        cap = pool_capacity(layout, osize, disk_bytes=args.disk_size, **common)
    record = _capacity_record(cap, recordsize, args.file_size)
    if args.json:
        print(to_json(record))
        return 0
    _print_capacity(cap, record, args)
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
    if cap.layout.sized:
        for v, out in zip(cap.vdevs, record["vdevs"]):
            out["wasted_bytes"] = v.wasted_bytes
        record["disk_sizes"] = [{"disk_bytes": b, "vdev_bytes": osize, "disks": cap.layout.disk_sizes()[b]}
                                for b, osize in cap.vdev_sizes]
        record["wasted_bytes"] = cap.wasted_bytes
        record["zpool_create_needs_force"] = replication_mismatch(cap.layout)
    if cap.layout.classes or cap.layout.cache_devices:
        record |= _class_record(cap)
    if file_bytes is not None:
        f = file_allocation(cap.layout, file_bytes, recordsize, cap.ashift)
        record["file"] = {"file_bytes": f.file_bytes, "recordsize_bytes": f.recordsize_bytes, "blocks": f.blocks,
                          "physical_bytes": f.physical_bytes, "used_bytes": f.dsize_bytes}
    return record


def _spread(cap: PoolCapacity) -> list[int] | None:
    """Below and above the predicted special-class bytes, what repeated creates measured; None if not predicted."""
    if not cap.class_alloc_predicted or not cap.class_alloc_bytes:
        return None
    spread = empty_pool_special_spread_bytes(cap.ashift, openzfs_24=cap.rules.special_embedded_log)
    return list(spread) if spread else None


def _spread_words(cap: PoolCapacity) -> str:
    spread = _spread(cap)
    if spread is None:
        return ""
    low, high = (f"{b / 1024:+g} KiB" if b else "0" for b in spread)
    return (f" as zpool create leaves it on a one-CPU host; repeated creates on 1 to 4 CPUs differed by {low}"
            f" to {high}")


def _class_record(cap: PoolCapacity) -> dict:
    """Per class: the vdevs, what each adds to SIZE, and how this version counts what they hold."""
    vdevs = []
    for v in cap.class_vdevs:
        vdevs.append({"class": v.alloc_class, "vdev": v.group.token, "vdevs": v.group.count,
                      "vdev_bytes": v.asize_bytes, "metaslab_shift": v.ms_shift, "metaslabs": v.ms_count,
                      "size_bytes": v.size_bytes * v.group.count, "in_zpool_size": v.alloc_class != "log",
                      "embedded_log_bytes": v.embedded_log_bytes * v.group.count, "wasted_bytes": v.wasted_bytes})
    return {
        "class_vdevs": vdevs,
        "special_size_bytes": cap.class_size_bytes("special"), "dedup_size_bytes": cap.class_size_bytes("dedup"),
        "log_size_bytes": cap.class_size_bytes("log"), "cache_devices": cap.layout.cache_devices,
        "cache_device_bytes": cap.cache_vdev_bytes, "special_used_bytes": cap.class_alloc_bytes,
        "special_used_predicted": cap.class_alloc_predicted,
        "special_used_spread_bytes": _spread(cap),
        "special_used_counts_in_avail": cap.rules.class_alloc_in_dspace,
        "zpool_create_needs_force": replication_mismatch(cap.layout),
        "class_redundancy_risk": class_redundancy_risk(cap.layout),
    }


def _print_classes(cap: PoolCapacity, record: dict, line) -> None:
    """One line per class, and how this OpenZFS counts what the special and dedup vdevs hold."""
    names = {"special": "metadata and small blocks", "dedup": "the dedup table", "log": "the ZIL (sync writes)"}
    for cls in ("special", "dedup", "log"):
        vs = [v for v in cap.class_vdevs if v.alloc_class == cls]
        if not vs:
            continue
        shape = " + ".join(v.group.token for v in vs)
        where = ("not in SIZE nor AVAIL (zpool list -v shows it apart)" if cls == "log"
                 else "in SIZE, not in AVAIL")
        line(f"{cls}", cap.class_size_bytes(cls), f"{shape}: {names[cls]}; {where}")
        elog = sum(v.embedded_log_bytes * v.group.count for v in vs)
        if elog:
            line(f"{cls} ZIL", elog, "embedded log metaslab on the special vdev (2.4+), taken off the slop")
    if cap.layout.cache_devices:
        n = cap.layout.cache_devices
        line("cache", cap.cache_vdev_bytes * n, f"{n} L2ARC device{'s' * (n != 1)}: a read cache, in neither SIZE nor AVAIL")
    if cap.layout.pool_groups[len(cap.layout.groups):]:
        if cap.rules.class_alloc_in_dspace:
            how = (f"what the special/dedup vdevs hold is added back to USED+AVAIL (spa_update_dspace), so it "
                   f"does not shrink AVAIL; counted here: {cap.class_alloc_bytes:,} B "
                   + (f"(the empty pool's own metadata, predicted{_spread_words(cap)}; --special-used sets it)"
                      if cap.class_alloc_predicted else "(--special-used)"))
        else:
            how = ("what the special/dedup vdevs hold counts in USED and lowers AVAIL, though it takes no space "
                   "on the data vdevs (fixed in 2.3.7 and 2.4.1: --zfs-version 2.3.9 or 2.4)")
        print_wrapped(console(), f"{cap.rules.software}: {how}")
    why = record.get("class_redundancy_risk")
    if why and not record.get("zpool_create_needs_force"):
        print_wrapped(console(), f"warning: {why}")


def _print_capacity(cap: PoolCapacity, record: dict, args: argparse.Namespace) -> None:
    out = console()

    def line(label: str, n: int, extra: str = "") -> None:
        print_row_and_note(out, f"{label:<14}{n:>22,} B  {format_tb(n):>12}  {format_tib(n):>13}", extra)

    out.print(f"[bold]{cap.layout}[/bold]: {cap.layout.describe()}")
    out.print(f"accounting    {cap.rules.software} rules, ashift {cap.ashift}")
    whole = args.disk_size or (cap.layout.sized and not args.exact_sizes)
    seen = "whole disk, Linux GPT partition 1" if whole else "exact vdev size"
    if cap.layout.sized:
        for b, osize in cap.vdev_sizes:
            n = cap.layout.disk_sizes()[b]
            line(f"{size_text(b)} disk", b, f"ZFS sees {osize:,} B ({seen}); {n} disk{'s' * (n != 1)}")
    else:
        line("each disk", cap.disk_bytes, f"ZFS sees {cap.vdev_bytes:,} B ({seen})")
    line("raw", cap.raw_bytes, f"{cap.layout.disks} disks")
    line("zpool SIZE", cap.size_bytes, f"zpool list: {record['zpool_list_size']}")
    line("usable", cap.usable_bytes, f"zfs list USED+AVAIL: {record['zfs_list_size']} ({100 * cap.efficiency:.1f} % of raw)")
    line("slop", cap.slop_bytes, "reserved by ZFS (spa_get_slop_space)")
    special_elog = any(v.embedded_log_bytes for v in cap.class_vdevs)
    line("embedded log", cap.embedded_log_bytes,
         "metaslabs set aside for the ZIL (2.1+)" + (", the special vdev's included" if special_elog else ""))
    if cap.layout.sized:
        line("wasted", cap.wasted_bytes, "of larger disks in vdevs of smaller ones (each child counts as the smallest)")
    if "class_vdevs" in record:
        _print_classes(cap, record, line)
    for v in cap.vdevs + cap.class_vdevs:
        waste = f"; wastes {v.wasted_bytes:,} B" if v.wasted_bytes else ""
        cls = "" if v.alloc_class == "normal" else f"{v.alloc_class} "
        print_wrapped(out, f"{cls}vdev {v.group.token}: asize {v.asize_bytes:,} B, {v.ms_count} metaslabs of "
                           f"2^{v.ms_shift} B, deflate\u00a0{v.deflate_ratio}/512{waste}")
    if record.get("zpool_create_needs_force"):
        print_wrapped(out, f"zpool create refuses this layout without -f: {record['zpool_create_needs_force']}")
    rs = record["recordsize_bytes"]
    print_wrapped(out, f"{format_recordsize(rs)} records are stored at {100 * record['recordsize_efficiency']:.1f} % "
                       f"efficiency (logical / physical bytes)")
    # no break inside a "4K 33.3%" pair: a non-breaking space holds each together
    print_wrapped(out, "efficiency by recordsize: " + "  ".join(
        f"{k}\u00a0{100 * v:.1f}%" for k, v in record["efficiency_by_recordsize"].items()))
    if "file" in record:
        f = record["file"]
        print_wrapped(out, f"a {f['file_bytes']:,} B file in {f['blocks']:,} blocks of "
                           f"{format_recordsize(f['recordsize_bytes'])} takes {f['physical_bytes']:,} B of disk; zfs list charges {f['used_bytes']:,} B")
